import Link from 'next/link';
import { CONTRACT_STATUSES } from '@/db/schema';

interface ContractRow {
  id: string;
  title: string;
  status: string;
  file_name: string;
  file_size: number;
  created_at: string;
  organization_id: string | null;
}

const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function ContractsTable(props: {
  contracts: ContractRow[];
  pagination: { limit: number; offset: number; total: number };
  organizations: { id: string; name: string }[];
  filters: { status?: string; organizationId?: string };
}) {
  const { contracts, pagination, organizations, filters } = props;
  const orgName = new Map(organizations.map((o) => [o.id, o.name]));
  const pageLink = (offset: number) => {
    const q = new URLSearchParams();
    if (filters.status) q.set('status', filters.status);
    if (filters.organizationId) q.set('organization_id', filters.organizationId);
    if (offset > 0) q.set('offset', String(offset));
    const s = q.toString();
    return s ? `/contracts?${s}` : '/contracts';
  };
  const first = pagination.offset + 1;
  const last = Math.min(pagination.offset + pagination.limit, pagination.total);

  return (
    <div className="card">
      <form className="card-body" method="get" action="/contracts" style={{ display: 'flex', gap: '1rem', alignItems: 'flex-end', flexWrap: 'wrap' }}>
        <div className="field" style={{ marginBottom: 0, minWidth: 180 }}>
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" name="status" defaultValue={filters.status ?? ''}>
            <option value="">All statuses</option>
            {CONTRACT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s[0]!.toUpperCase() + s.slice(1)}
              </option>
            ))}
          </select>
        </div>
        <div className="field" style={{ marginBottom: 0, minWidth: 220 }}>
          <label htmlFor="filter-org">Organisation</label>
          <select id="filter-org" name="organization_id" defaultValue={filters.organizationId ?? ''}>
            <option value="">Personal and all organisations</option>
            {organizations.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="btn">
          Apply
        </button>
        <span className="muted small" style={{ marginLeft: 'auto' }} aria-live="polite">
          {pagination.total === 0
            ? 'No contracts'
            : first > pagination.total
              ? `Past the last of ${pagination.total}`
              : `${first}–${last} of ${pagination.total}`}
        </span>
      </form>
      {contracts.length === 0 ? (
        <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
          <h2>No contracts match</h2>
          <p className="muted">Try another status or organisation.</p>
        </div>
      ) : (
        <div style={{ overflowX: 'auto', borderTop: '1px solid var(--border)' }}>
          <table className="data" aria-label="Contracts">
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Status</th>
                <th scope="col">Owner</th>
                <th scope="col">File</th>
                <th scope="col">Uploaded</th>
              </tr>
            </thead>
            <tbody>
              {contracts.map((c) => (
                <tr key={c.id}>
                  <td style={{ fontWeight: 600 }}>{c.title}</td>
                  <td>
                    <span className={`badge badge-${c.status}`}>{c.status}</span>
                  </td>
                  <td>{c.organization_id ? (orgName.get(c.organization_id) ?? 'Organisation') : 'Personal'}</td>
                  <td className="small">
                    {c.file_name} <span className="muted">· {size(c.file_size)}</span>
                  </td>
                  <td className="small">{date.format(new Date(c.created_at))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pagination.total > pagination.limit ? (
        <nav className="card-body" aria-label="Pages" style={{ display: 'flex', justifyContent: 'space-between', borderTop: '1px solid var(--border)' }}>
          {pagination.offset > 0 ? <Link href={pageLink(Math.max(0, pagination.offset - pagination.limit))}>← Newer</Link> : <span />}
          {last < pagination.total ? <Link href={pageLink(pagination.offset + pagination.limit)}>Older →</Link> : <span />}
        </nav>
      ) : null}
    </div>
  );
}
