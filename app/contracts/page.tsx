import type { Metadata } from 'next';
import { ContractsTable } from '@/components/contracts-table';
import { getDb } from '@/db/client';
import { organizationsOf } from '@/db/queries/organizations';
import { requireUser } from '@/server/auth/session';
import { listContractsInput } from '@/server/contracts/schemas';
import { listContracts } from '@/server/contracts/service';

export const metadata: Metadata = { title: 'Contracts' };

const PAGE_SIZE = 25;
type SearchParams = Record<string, string | string[] | undefined>;

export default async function ContractsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const user = await requireUser('/contracts');
  const params = await searchParams;
  const one = (v: string | string[] | undefined) => (typeof v === 'string' && v !== '' ? v : undefined);
  // The page takes the API's own parameters, validated by the same schema; anything
  // invalid falls back to no filter rather than an error page.
  const parsed = listContractsInput.safeParse({
    status: one(params.status),
    organization_id: one(params.organization_id),
    limit: String(PAGE_SIZE),
    offset: one(params.offset),
  });
  const input = parsed.success ? parsed.data : listContractsInput.parse({ limit: String(PAGE_SIZE) });

  const db = await getDb();
  const organizations = await organizationsOf(db, user.id);
  const scope = { userId: user.id, organizationIds: organizations.map((o) => o.id) };
  const organizationId = organizations.some((o) => o.id === input.organization_id) ? input.organization_id : undefined;
  const result = await listContracts(db, scope, {
    filters: { status: input.status, organizationId },
    limit: input.limit,
    offset: input.offset,
  });

  return (
    <main className="page">
      <div className="page-header">
        <div>
          <h1>Contracts</h1>
          <p className="muted">Your personal contracts and those of your organisations: what your API keys can read.</p>
        </div>
      </div>
      <ContractsTable
        contracts={result.contracts}
        pagination={result.pagination}
        organizations={organizations.map((o) => ({ id: o.id, name: o.name }))}
        filters={{ status: input.status, organizationId }}
      />
    </main>
  );
}
