import type { Metadata } from 'next';
import { ContractsTable } from '@/components/contracts-table';
import { describeFilters } from '@/components/contracts/active-filters';
import { ListActions } from '@/components/contracts/list-actions';
import { FilterForm } from '@/components/contracts/filter-form';
import { SORT_LABELS } from '@/components/contracts/format';
import { UpcomingRenewals } from '@/components/contracts/upcoming-renewals';
import { exportHref, FILTER_PARAMS, listHref, requestHref, without, type SearchParams } from '@/lib/contract-list-url';
import { DEFAULT_SORT } from '@/lib/contracts';
import { requireUser } from '@/server/auth/session';
import { contractsPage } from '@/server/contracts/pages';
import styles from '@/components/contracts/contracts.module.css';

export const metadata: Metadata = { title: 'Contracts' };

export default async function ContractsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const user = await requireUser(requestHref(params));
  const { input, applied, errors, formValues, organizations, list, timeline, today, downloadQuota } = await contractsPage(user, params);

  const orgName = (id: string) => organizations.find((o) => o.id === id)?.name ?? 'Organisation';
  const filters = describeFilters(applied, orgName);
  const resetHref = listHref(without(applied, ...FILTER_PARAMS));

  return (
    <main className="page">
      <div className="page-header">
        <div>
          <h1>Contracts</h1>
          <p className="muted">
            Your personal contracts and those of your organisations: exactly what your API keys read. This page takes the
            same parameters as <code>GET /api/v1/contracts</code>.
          </p>
        </div>
      </div>
      <div className={styles.stack}>
        <UpcomingRenewals timeline={timeline} organizationName={input.organization_id ? orgName(input.organization_id) : undefined} />
        <section className="card" aria-label="Filters">
          <FilterForm
            key={listHref(applied)}
            values={formValues}
            errors={errors}
            defaultSort={DEFAULT_SORT}
            organizations={organizations.map((o) => ({ id: o.id, name: o.name }))}
            resetHref={filters.length > 0 || errors.length > 0 ? resetHref : undefined}
          />
        </section>
        <ContractsTable
          contracts={list.contracts}
          pagination={{ ...list.pagination, has_more: list.hasMore }}
          organizations={organizations}
          applied={applied}
          filters={filters}
          sortLabel={SORT_LABELS[input.sort ?? DEFAULT_SORT]}
          today={today}
          resetHref={resetHref}
          actions={
            <ListActions
              exportHref={exportHref(applied)}
              total={list.pagination.total}
              totalExact={list.pagination.total_exact}
              quota={downloadQuota}
              organizations={organizations.map((o) => ({ id: o.id, name: o.name, role: o.role }))}
            />
          }
        />
      </div>
    </main>
  );
}
