'use client';

import Link from 'next/link';
import { useState, type ReactNode } from 'react';
import { ErrorAlert } from '@/components/error-alert';
import { useFocusReturn, useRefreshableList } from './managed-list';
import { RevokeDialog } from './revoke-dialog';
import { DateOnly, RelativeTime } from './time';
import type { TokenRow } from './types';

/** The words of one kind of token on its settings page. */
export interface TokenManagerText {
  /** "API keys", "calendar feeds". */
  plural: string;
  /** "API key", "calendar feed". */
  singular: string;
  /** "keys", "feeds": in "3 of 25 active keys", and the column of hints ("Key", "Feed"). */
  countNoun: string;
  emptyText: string;
  /** data-testid of each row, for the browser tests. */
  rowTestId: string;
  /** The confirmation's label: "Revoke key". */
  revokeLabel: string;
  /** What revoking does to this token. */
  revokeText: (token: TokenRow) => ReactNode;
}

/** A further action of an active row (roll, edit restrictions), with its own dialog. */
export interface RowAction {
  /** The button's text ("Roll"); its accessible name adds the row's name ("Roll Nightly ETL"). */
  label: string;
  render: (row: TokenRow, done: { onClose: () => void; refresh: () => Promise<void> }) => ReactNode;
}

/**
 * The settings page of one kind of secret token (API keys, calendar feeds): the list with
 * its limit, revocation with a confirmation that names the token, and the kind's own
 * creation dialog and shown-once dialog (`renderCreate`, `renderCreated`).
 */
export function TokenManager<Created>({
  initialRows,
  text,
  maxActive,
  showExpiry,
  load,
  revoke,
  renderCreate,
  renderCreated,
  renderRestrictions,
  rowActions = [],
  headerExtra,
  detailHref,
}: {
  initialRows: TokenRow[];
  text: TokenManagerText;
  maxActive: number;
  /** API keys expire; calendar feeds do not. */
  showExpiry: boolean;
  /** Stable (defined outside the component): reloads the list. */
  load: () => Promise<TokenRow[]>;
  revoke: (id: string) => Promise<unknown>;
  renderCreate: (done: { onClose: () => void; onCreated: (created: Created) => Promise<void> }) => ReactNode;
  renderCreated: (created: Created, onClose: () => void) => ReactNode;
  /** A "Restrictions" column (API keys, calendar feeds: what each reads and may do). */
  renderRestrictions?: (row: TokenRow) => ReactNode;
  rowActions?: RowAction[];
  /** Shown under the list's heading (a note about organisation keys). */
  headerExtra?: ReactNode;
  /** Where a token's own page is (API keys: its usage and requests), if it has one. */
  detailHref?: (row: TokenRow) => string;
}) {
  const { rows, listError, refresh } = useRefreshableList(initialRows, load);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<TokenRow | null>(null);
  const [acting, setActing] = useState<{ action: RowAction; row: TokenRow } | null>(null);
  const activeCount = rows.filter((row) => row.status === 'active').length;
  const createButton = useFocusReturn(creating || created !== null || revoking !== null || acting !== null);
  const capitalized = (word: string) => word[0]!.toUpperCase() + word.slice(1);
  const hintLabel = capitalized(text.countNoun.replace(/s$/, ''));

  return (
    <>
      <ErrorAlert message={listError} />
      <div className="card">
        <div className="card-body" style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', gap: '1rem' }}>
          <div>
            <h2 style={{ marginBottom: 0 }}>Your {text.plural}</h2>
            <p className="muted small" style={{ margin: 0 }}>
              {activeCount} of {maxActive} active {text.countNoun}
            </p>
            {headerExtra}
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            Create {text.singular}
          </button>
        </div>
        {rows.length === 0 ? (
          <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
            <h2>No {text.plural} yet</h2>
            <p className="muted">{text.emptyText}</p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              Create your first {text.singular}
            </button>
          </div>
        ) : (
          <div style={{ overflowX: 'auto', position: 'relative', borderTop: '1px solid var(--border)' }}>
            <table className="data cards-on-phone" aria-label={capitalized(text.plural)}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">{hintLabel}</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  {showExpiry ? <th scope="col">Expires</th> : null}
                  {renderRestrictions ? <th scope="col">Restrictions</th> : null}
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.id} data-testid={text.rowTestId}>
                    <td className="card-title" style={{ fontWeight: 600 }}>
                      {detailHref ? <Link href={detailHref(row)}>{row.name}</Link> : row.name}
                    </td>
                    <td data-label={hintLabel}>
                      <code>{row.hint}</code>
                    </td>
                    <td data-label="Created">
                      <DateOnly iso={row.createdAt} fallback="" />
                    </td>
                    <td data-label="Last used">
                      <RelativeTime iso={row.lastUsedAt} fallback="Never" />
                    </td>
                    {showExpiry ? (
                      <td data-label="Expires">
                        <DateOnly iso={row.expiresAt} fallback="Never" />
                      </td>
                    ) : null}
                    {renderRestrictions ? (
                      <td data-label="Restrictions" className="card-wide" style={{ minWidth: '12rem' }}>
                        {renderRestrictions(row)}
                      </td>
                    ) : null}
                    <td data-label="Status">
                      <span className={`badge badge-${row.status}`}>{capitalized(row.status)}</span>
                    </td>
                    <td className="num card-actions">
                      {row.status === 'active'
                        ? rowActions.map((action) => (
                            <button
                              key={action.label}
                              type="button"
                              className="btn btn-ghost btn-sm"
                              onClick={() => setActing({ action, row })}
                              aria-label={`${action.label} ${row.name}`}
                            >
                              {action.label}
                            </button>
                          ))
                        : null}
                      {row.status === 'revoked' ? null : (
                        <button type="button" className="btn btn-ghost btn-sm" onClick={() => setRevoking(row)} aria-label={`Revoke ${row.name}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>

      {creating
        ? renderCreate({
            onClose: () => setCreating(false),
            onCreated: async (value) => {
              setCreating(false);
              setCreated(value);
              await refresh();
            },
          })
        : null}

      {/* After this dialog, the secret exists nowhere: only its hint is listed. */}
      {created !== null ? renderCreated(created, () => setCreated(null)) : null}

      {acting ? acting.action.render(acting.row, { onClose: () => setActing(null), refresh }) : null}

      {revoking ? (
        <RevokeDialog
          name={revoking.name}
          confirmLabel={text.revokeLabel}
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await revoke(revoking.id);
            setRevoking(null);
            await refresh();
          }}
        >
          <p>{text.revokeText(revoking)}</p>
        </RevokeDialog>
      ) : null}
    </>
  );
}
