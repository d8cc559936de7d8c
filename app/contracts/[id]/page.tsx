import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { cache } from 'react';
import { ContractDetailView } from '@/components/contracts/contract-detail';
import { getDb } from '@/db/client';
import { organizationsOf } from '@/db/queries/organizations';
import { requireUser } from '@/server/auth/session';
import { utcToday } from '@/server/dates';
import { getContractInput } from '@/server/contracts/schemas';
import { getContract } from '@/server/contracts/service';
import { AppError } from '@/server/errors';

type Params = Promise<{ id: string }>;

/**
 * One contract, as GET /api/v1/contracts/{id} returns it to the signed-in user. An id that
 * is malformed, unknown or another account's is the same 404, as in the API. Cached per
 * request, so the title and the page share one lookup.
 */
const loadContract = cache(async (id: string) => {
  const user = await requireUser(`/contracts/${encodeURIComponent(id)}`);
  const parsed = getContractInput.safeParse({ id });
  if (!parsed.success) return undefined;
  const db = await getDb();
  const organizations = await organizationsOf(db, user.id);
  const scope = { userId: user.id, organizationIds: organizations.map((o) => o.id) };
  try {
    const contract = await getContract(db, scope, parsed.data.id);
    const organization = organizations.find((o) => o.id === contract.organization_id);
    return { contract, organizationName: organization?.name };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return undefined;
    throw error;
  }
});

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const found = await loadContract((await params).id);
  return { title: found ? found.contract.title : 'Contract not found' };
}

export default async function ContractPage({ params }: { params: Params }) {
  const found = await loadContract((await params).id);
  if (!found) notFound();
  return (
    <main className="page">
      <ContractDetailView contract={found.contract} organizationName={found.organizationName} today={utcToday()} />
    </main>
  );
}
