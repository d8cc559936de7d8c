import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { cache } from 'react';
import { ContractDetailView } from '@/components/contracts/contract-detail';
import { requireUser } from '@/server/auth/session';
import { contractPage } from '@/server/contracts/pages';

type Params = Promise<{ id: string }>;

/** Cached per request, so the title and the page share one lookup. */
const loadContract = cache(async (id: string) => contractPage(await requireUser(`/contracts/${encodeURIComponent(id)}`), id));

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const found = await loadContract((await params).id);
  return { title: found ? found.contract.title : 'Contract not found' };
}

export default async function ContractPage({ params }: { params: Params }) {
  const found = await loadContract((await params).id);
  if (!found) notFound();
  return (
    <main className="page">
      <ContractDetailView contract={found.contract} organizationName={found.organizationName} today={found.today} />
    </main>
  );
}
