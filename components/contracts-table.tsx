import Link from 'next/link';
import type { ReactNode } from 'react';
import type { ContractDetail } from '@/server/contracts/shape';
import { ActiveFilters, type ActiveFilter } from './contracts/active-filters';
import { formatDate, formatDateTime, formatMoney, relativeDays } from './contracts/format';
import { listHref, type ParamValues } from '@/lib/contract-list-url';
import { Missing } from './contracts/missing';
import { StatusBadge } from './contracts/status-badge';
import styles from './contracts/contracts.module.css';

export type ContractRow = ContractDetail;

export interface ContractsTableProps {
  contracts: ContractRow[];
  /** total_exact false: a search counted up to its cap, `total` is a lower bound. */
  pagination: { limit: number; offset: number; total: number; total_exact?: boolean; has_more?: boolean };
  organizations: { id: string; name: string }[];
  /** The list's accepted parameters, kept by the page links. */
  applied: ParamValues;
  filters: ActiveFilter[];
  sortLabel: string;
  /** Today in UTC, for "in 9 days". */
  today: string;
  resetHref: string;
  /** Beside the count: what can be done with the whole list (download, subscribe). */
  actions?: ReactNode;
}

export function ContractsTable(props: ContractsTableProps) {
  const { contracts, pagination, organizations, applied, filters, sortLabel, today, resetHref, actions } = props;
  const orgName = new Map(organizations.map((o) => [o.id, o.name]));
  const { total, limit, offset } = pagination;
  const exact = pagination.total_exact !== false;
  const first = offset + 1;
  const last = exact ? Math.min(offset + limit, total) : offset + contracts.length;
  const more = pagination.has_more ?? last < total;
  const totalText = `${total.toLocaleString('en-GB')}${exact ? '' : '+'}`;
  const pageHref = (at: number) => listHref({ ...applied, offset: at > 0 ? String(at) : undefined });

  return (
    <section className="card" aria-labelledby="contracts-count">
      <div className={styles.tableHeader}>
        <div>
          <h2 id="contracts-count" className={styles.count} aria-live="polite">
            {total === 1 && exact ? '1 contract' : `${totalText} contracts`}
          </h2>
          <p className="muted small" data-testid="list-range">
            {contracts.length > 0 ? `Showing ${first}–${last} · ${sortLabel}` : sortLabel}
          </p>
        </div>
        {actions}
      </div>
      {contracts.length > 0 ? <ActiveFilters filters={filters} applied={applied} /> : null}

      {contracts.length === 0 ? (
        <EmptyState total={total} filters={filters} applied={applied} resetHref={resetHref} firstPage={pageHref(0)} />
      ) : (
        <div className={styles.tableScroll}>
          <table className={`data cards-on-phone ${styles.table}`} aria-label="Contracts" aria-describedby="list-range-description">
            <caption id="list-range-description" className="visually-hidden">
              Contracts {first} to {last} of {totalText}, {sortLabel.toLowerCase()}
            </caption>
            <thead>
              <tr>
                <th scope="col">Contract</th>
                <th scope="col">Status</th>
                <th scope="col">Owner</th>
                <th scope="col">Expires</th>
                <th scope="col">Renews</th>
                <th scope="col">Act by</th>
                <th scope="col">Auto-renewal</th>
                <th scope="col" className="num">
                  Value
                </th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {contracts.map((c) => (
                <tr key={c.id} data-testid="contract-row" data-id={c.id}>
                  <td className={`card-title ${styles.titleCell}`}>
                    <Link href={`/contracts/${c.id}`} className={styles.titleLink}>
                      {c.title}
                    </Link>
                    <span className={styles.fileName}>{c.file_name}</span>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={c.status} />
                  </td>
                  <td data-label="Owner" className={styles.owner}>{c.organization_id ? (orgName.get(c.organization_id) ?? 'Organisation') : 'Personal'}</td>
                  <td data-label="Expires" className={styles.dateCell}>
                    <DateWithDistance date={c.data?.expiration_date ?? null} today={today} extracted={c.data !== null} />
                  </td>
                  <td data-label="Renews" className={styles.dateCell}>
                    <DateWithDistance date={c.data?.next_renewal_date ?? null} today={today} extracted={c.data !== null} />
                  </td>
                  <td data-label="Act by" className={styles.dateCell}>
                    <ActBy deadline={c.data?.notice_deadline ?? null} today={today} extracted={c.data !== null} />
                  </td>
                  <td data-label="Auto-renewal">{c.data?.auto_renewal == null ? <Missing extracted={c.data !== null} /> : c.data.auto_renewal ? 'Yes' : 'No'}</td>
                  <td data-label="Value" className={`num ${styles.nowrap}`}>
                    {c.data?.contract_value == null ? (
                      <Missing extracted={c.data !== null} />
                    ) : (
                      formatMoney(c.data.contract_value, c.data.currency)
                    )}
                  </td>
                  <td data-label="Updated" className={styles.dateCell}>
                    <time dateTime={c.updated_at} title={formatDateTime(c.updated_at)}>
                      {formatDate(c.updated_at)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {(total > limit || more) && contracts.length > 0 ? (
        <nav className={styles.pagination} aria-label="Pages">
          {offset > 0 ? (
            <Link className="btn btn-sm" href={pageHref(Math.max(0, offset - limit))} rel="prev">
              ← Previous
            </Link>
          ) : (
            <span />
          )}
          <span className="muted small">
            Page {Math.floor(offset / limit) + 1} of {Math.ceil(total / limit)}
            {exact ? '' : '+'}
          </span>
          {more ? (
            <Link className="btn btn-sm" href={pageHref(offset + limit)} rel="next">
              Next →
            </Link>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </section>
  );
}

function DateWithDistance({ date, today, extracted }: { date: string | null; today: string; extracted: boolean }) {
  if (date === null) return <Missing extracted={extracted} />;
  const distance = relativeDays(date, today);
  return (
    <>
      <time dateTime={date}>{formatDate(date)}</time>
      {distance ? <span className={date < today ? styles.past : styles.soon}>{distance}</span> : null}
    </>
  );
}

/** The notice deadline; once passed, "missed": the next renewal can no longer be stopped. */
function ActBy({ deadline, today, extracted }: { deadline: string | null; today: string; extracted: boolean }) {
  if (deadline === null) return <Missing extracted={extracted} />;
  if (deadline >= today) return <DateWithDistance date={deadline} today={today} extracted />;
  return (
    <>
      <time dateTime={deadline}>{formatDate(deadline)}</time>
      <span className={styles.past}>missed: renews anyway</span>
    </>
  );
}

function EmptyState(props: { total: number; filters: ActiveFilter[]; applied: ParamValues; resetHref: string; firstPage: string }) {
  const { total, filters, applied, resetHref, firstPage } = props;
  if (total > 0) {
    return (
      <div className={`empty ${styles.empty}`}>
        <h3>This page is past the end of the list</h3>
        <p className="muted">There are {total} matching contracts.</p>
        <Link className="btn" href={firstPage}>
          Go to the first page
        </Link>
      </div>
    );
  }
  if (filters.length === 0) {
    return (
      <div className={`empty ${styles.empty}`}>
        <h3>No contracts yet</h3>
        <p className="muted">Contracts you upload, and those of your organisations, appear here once they are uploaded.</p>
      </div>
    );
  }
  return (
    <div className={`empty ${styles.empty}`}>
      <h3>No contracts match {filters.length === 1 ? 'this filter' : 'these filters'}</h3>
      <p className="muted">
        {filters.length === 1 ? 'Remove it' : 'Loosen or remove one of them'} to see more contracts:
      </p>
      <ActiveFilters filters={filters} applied={applied} />
      <Link className="btn" href={resetHref}>
        Reset filters
      </Link>
    </div>
  );
}
