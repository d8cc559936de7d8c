'use client';

import { useId, useState } from 'react';
import { ErrorAlert } from '@/components/error-alert';
import { useCursorPages } from '@/components/use-cursor-pages';
import { STATUS_CLASSES, type LoggedRequest, type StatusClass } from '@/lib/key-activity';
import { trpc } from '../trpc-client';
import { RequestDetails } from './request-details';

const time = new Intl.DateTimeFormat('en-GB', { dateStyle: 'short', timeStyle: 'medium', timeZone: 'UTC' });

/** A key's last requests, newest first, filterable by status class, 50 at a time. */
export function RequestLog({ keyId, initial, initialCursor }: { keyId: string; initial: LoggedRequest[]; initialCursor: string | null }) {
  const [statusClass, setStatusClass] = useState<StatusClass | ''>('');
  const [open, setOpen] = useState<LoggedRequest | null>(null);
  const filterId = useId();
  const { rows, cursor, error, busy, show } = useCursorPages({ rows: initial, nextCursor: initialCursor }, async (filter: StatusClass | '', after) => {
    const page = await trpc.keyActivity.requests.query({ keyId, statusClass: filter || undefined, cursor: after });
    return { rows: page.requests, nextCursor: page.nextCursor };
  });

  return (
    <div>
      <div className="field" style={{ maxWidth: 240 }}>
        <label htmlFor={filterId}>Status</label>
        <select
          id={filterId}
          value={statusClass}
          onChange={(e) => {
            const next = e.target.value as StatusClass | '';
            setStatusClass(next);
            void show(next);
          }}
        >
          <option value="">All statuses</option>
          {STATUS_CLASSES.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </div>
      <ErrorAlert message={error} />
      {rows.length === 0 ? (
        <p className="muted">No requests{statusClass ? ` with a ${statusClass} status` : ''} yet.</p>
      ) : (
        <div style={{ overflowX: 'auto' }}>
          <table className="data cards-on-phone" aria-label="Requests, newest first" aria-busy={busy}>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Request</th>
                <th scope="col" className="num">
                  Status
                </th>
                <th scope="col" className="num">
                  Duration
                </th>
                <th scope="col">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.requestId + row.at} data-testid="request-row">
                  <td data-label="Time">{time.format(new Date(row.at))}</td>
                  <td data-label="Request" style={{ wordBreak: 'break-all' }}>
                    <code>
                      {row.method} {row.path}
                    </code>
                  </td>
                  <td data-label="Status" className="num">
                    {row.status}
                    {row.errorCode ? <span className="muted small"> {row.errorCode}</span> : null}
                  </td>
                  <td data-label="Duration" className="num">
                    {Math.round(row.durationMs)} ms
                  </td>
                  <td className="num card-actions">
                    <button type="button" className="btn btn-sm" onClick={() => setOpen(row)} aria-label={`Details of ${row.requestId}`}>
                      Details
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor ? (
        <button type="button" className="btn" disabled={busy} onClick={() => void show(statusClass, cursor)} style={{ marginTop: '0.75rem' }}>
          Show older requests
        </button>
      ) : null}
      {open ? <RequestDetails request={open} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}
