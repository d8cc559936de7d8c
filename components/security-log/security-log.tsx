'use client';

import { useId, useState } from 'react';
import { ErrorAlert } from '@/components/error-alert';
import { useCursorPages } from '@/components/use-cursor-pages';
import { SECURITY_EVENT_KINDS, SECURITY_EVENT_LABELS, type SecurityEventKind, type SecurityEventRow } from '@/lib/key-activity';

const time = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });

export interface SecurityLogFilterState {
  kind: SecurityEventKind | '';
  from: string;
  to: string;
}

/** The "Download CSV" address of a log's export route for a filter (the page's filter as its query). */
export function csvHrefOf(exportPath: string): (filter: SecurityLogFilterState) => string {
  return (filter) => {
    const params = new URLSearchParams();
    if (filter.kind) params.append('kind', filter.kind);
    if (filter.from) params.set('from', filter.from);
    if (filter.to) params.set('to', filter.to);
    const query = params.toString();
    return `${exportPath}${query ? `?${query}` : ''}`;
  };
}

export interface SecurityLogPage {
  events: SecurityEventRow[];
  nextCursor: string | null;
}

/**
 * A security log: the events newest first, filtered by kind and dates (UTC), older pages
 * by cursor, and "Download CSV" of the same filter. `load` reads a page (the person's own
 * log, or an organisation's); `csvHref` is the download's address for a filter, if any.
 */
export function SecurityLog({
  initial,
  load,
  csvHref,
  title = 'Events',
}: {
  initial: SecurityLogPage;
  load: (filter: { kinds?: string[]; from?: string; to?: string; cursor?: string }) => Promise<SecurityLogPage>;
  csvHref?: (filter: SecurityLogFilterState) => string;
  title?: string;
}) {
  const [filter, setFilter] = useState<SecurityLogFilterState>({ kind: '', from: '', to: '' });
  const ids = { kind: useId(), from: useId(), to: useId() };
  const {
    rows: events,
    cursor,
    error,
    busy,
    show: run,
  } = useCursorPages({ rows: initial.events, nextCursor: initial.nextCursor }, async (f: SecurityLogFilterState, after) => {
    const page = await load({ kinds: f.kind ? [f.kind] : undefined, from: f.from || undefined, to: f.to || undefined, cursor: after });
    return { rows: page.events, nextCursor: page.nextCursor };
  });

  return (
    <div>
      <form
        aria-label="Filter the security log"
        onSubmit={(event) => {
          event.preventDefault();
          void run(filter);
        }}
        style={{ display: 'flex', flexWrap: 'wrap', gap: '0.75rem', alignItems: 'flex-end' }}
      >
        <div className="field">
          <label htmlFor={ids.kind}>Kind</label>
          <select id={ids.kind} value={filter.kind} onChange={(e) => setFilter({ ...filter, kind: e.target.value as SecurityEventKind | '' })}>
            <option value="">All kinds</option>
            {SECURITY_EVENT_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {SECURITY_EVENT_LABELS[kind]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.from}>From (UTC)</label>
          <input id={ids.from} type="date" value={filter.from} onChange={(e) => setFilter({ ...filter, from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>To (UTC)</label>
          <input id={ids.to} type="date" value={filter.to} onChange={(e) => setFilter({ ...filter, to: e.target.value })} />
        </div>
        <div className="field">
          <button type="submit" className="btn" disabled={busy}>
            Apply
          </button>
        </div>
        {csvHref ? (
          <div className="field">
            <a className="btn" href={csvHref(filter)} download>
              Download CSV
            </a>
          </div>
        ) : null}
      </form>
      <ErrorAlert message={error} />
      {events.length === 0 ? (
        <p className="muted">No events{filter.kind || filter.from || filter.to ? ' match this filter' : ' yet'}.</p>
      ) : (
        <div style={{ overflowX: 'auto' }}>
          <table className="data cards-on-phone" aria-label={`${title}, newest first`} aria-busy={busy}>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                <th scope="col">Event</th>
                <th scope="col">Actor</th>
                <th scope="col">Object</th>
                <th scope="col">Address</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id} data-testid="security-event">
                  <td data-label="Time">{time.format(new Date(event.at))}</td>
                  <td data-label="Event" data-kind={event.kind}>
                    {SECURITY_EVENT_LABELS[event.kind] ?? event.kind}
                    {event.details?.change ? <span className="muted small"> ({String(event.details.change)})</span> : null}
                  </td>
                  <td data-label="Actor" style={{ wordBreak: 'break-all' }}>
                    {event.actor}
                  </td>
                  <td data-label="Object" style={{ wordBreak: 'break-all' }}>
                    {event.object ?? event.objectType}
                  </td>
                  <td data-label="Address" title={event.userAgent ?? undefined}>
                    {event.clientAddress ?? <span className="muted">unknown</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor ? (
        <button type="button" className="btn" disabled={busy} onClick={() => void run(filter, cursor)} style={{ marginTop: '0.75rem' }}>
          Show older events
        </button>
      ) : null}
    </div>
  );
}
