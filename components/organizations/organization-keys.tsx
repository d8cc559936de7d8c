'use client';

import { useCallback, useId, useState, type ReactNode } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import { CreateKeyDialog, EditRestrictionsDialog, NewKeyDialog, RollKeyFlow, type CreatedKey } from '@/components/tokens/api-key-dialogs';
import { useFocusReturn, useRefreshableList } from '@/components/tokens/managed-list';
import { RevokeDialog } from '@/components/tokens/revoke-dialog';
import { DateOnly, RelativeTime } from '@/components/tokens/time';
import type { TokenRow } from '@/components/tokens/types';
import { toOrganizationKeysView, type OrganizationKeysView } from './view';
import { trpc } from '@/components/trpc-client';
import { describeAddresses, describePermissions } from '@/lib/key-restrictions';

type Dialog =
  | { kind: 'create' }
  | { kind: 'created'; created: CreatedKey }
  | { kind: 'roll'; row: TokenRow }
  | { kind: 'edit'; row: TokenRow }
  | { kind: 'revoke'; row: TokenRow }
  | { kind: 'remove'; row: OrganizationKeysView['memberKeys'][number] };

const capitalized = (word: string) => word[0]!.toUpperCase() + word.slice(1);

/** The columns both tables share: what the key may do, from where, and its dates. */
function KeyCells({ row }: { row: TokenRow }) {
  return (
    <>
      <td data-label="Key">
        <code>{row.hint}</code>
      </td>
      <td data-label="Permissions">{describePermissions(row.permissions ?? [])}</td>
      <td data-label="Allowed addresses" className="card-wide" style={{ overflowWrap: 'anywhere' }}>
        {describeAddresses(row.allowedAddresses ?? [])}
      </td>
      <td data-label="Created">
        <DateOnly iso={row.createdAt} fallback="" />
      </td>
      <td data-label="Last used">
        <RelativeTime iso={row.lastUsedAt} fallback="Never" />
      </td>
      <td data-label="Expires">
        <DateOnly iso={row.expiresAt} fallback="Never" />
      </td>
    </>
  );
}

function KeyTable({ label, ownerHeading, testId, children }: { label: string; ownerHeading: string; testId: string; children: ReactNode }) {
  return (
    <div style={{ overflowX: 'auto', position: 'relative', borderTop: '1px solid var(--border)' }}>
      <table className="data cards-on-phone" aria-label={label} data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">{ownerHeading}</th>
            <th scope="col">Key</th>
            <th scope="col">Permissions</th>
            <th scope="col">Allowed addresses</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * An organisation's page for its owners and admins (docs/keys.md "In the app"): the
 * policy on members' personal keys, the organisation's own keys (create, roll, edit,
 * revoke) and every member's personal key that reads its contracts (remove access).
 */
export function OrganizationKeys({ initial }: { initial: OrganizationKeysView }) {
  const organizationId = initial.organization.id;
  const load = useCallback(
    async () => [toOrganizationKeysView(await trpc.organizationKeys.list.query({ organizationId }))],
    [organizationId],
  );
  const { rows, listError, refresh } = useRefreshableList([initial], load);
  const view = rows[0]!;
  const orgName = view.organization.name;
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const createButton = useFocusReturn(dialog !== null);
  const close = () => setDialog(null);

  return (
    <>
      <ErrorAlert message={listError} />
      <PolicyCard organizationId={organizationId} allowed={view.organization.memberKeysAllowed} onChanged={refresh} />

      <div className="card" style={{ marginTop: '1rem' }}>
        <div className="card-body" style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', gap: '1rem', flexWrap: 'wrap' }}>
          <div>
            <h3 style={{ marginBottom: 0 }}>{orgName}&rsquo;s keys</h3>
            <p className="muted small" style={{ margin: 0 }}>
              Owned by the organisation: they read {orgName}&rsquo;s contracts only and keep working when the person who created them
              leaves. Members who are not owners or admins do not see them.
            </p>
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setDialog({ kind: 'create' })}>
            Create organisation key
          </button>
        </div>
        {view.organizationKeys.length === 0 ? (
          <p className="muted" style={{ padding: '0 1rem 1rem' }}>
            No organisation keys yet.
          </p>
        ) : (
          <KeyTable label={`${orgName}'s keys`} ownerHeading="Created by" testId="organization-keys">
            {view.organizationKeys.map((row) => (
              <tr key={row.id} data-testid="organization-key-row">
                <td className="card-title" style={{ fontWeight: 600 }}>
                  {row.name}
                </td>
                <td data-label="Created by" style={{ overflowWrap: 'anywhere' }}>
                  {row.createdByEmail ?? <span className="muted">A deleted account</span>}
                </td>
                <KeyCells row={row} />
                <td data-label="Status">
                  <span className={`badge badge-${row.status}`}>{capitalized(row.status)}</span>
                </td>
                <td className="num card-actions">
                  {row.status === 'active' ? (
                    <>
                      <button type="button" className="btn btn-ghost btn-sm" aria-label={`Roll ${row.name}`} onClick={() => setDialog({ kind: 'roll', row })}>
                        Roll
                      </button>
                      <button type="button" className="btn btn-ghost btn-sm" aria-label={`Edit ${row.name}`} onClick={() => setDialog({ kind: 'edit', row })}>
                        Edit
                      </button>
                    </>
                  ) : null}
                  {row.status === 'revoked' ? null : (
                    <button type="button" className="btn btn-ghost btn-sm" aria-label={`Revoke ${row.name}`} onClick={() => setDialog({ kind: 'revoke', row })}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </KeyTable>
        )}
      </div>

      <div className="card" style={{ marginTop: '1rem' }}>
        <div className="card-body">
          <h3 style={{ marginBottom: 0 }}>Members&rsquo; personal keys</h3>
          <p className="muted small" style={{ margin: 0 }}>
            {view.organization.memberKeysAllowed
              ? `Personal keys of members that can read ${orgName}'s contracts today (keys with access to everything, or chosen to include ${orgName}).`
              : `None: the policy above is off, so members' personal keys, calendar feeds and webhook endpoints leave ${orgName}'s contracts out.`}
          </p>
        </div>
        {view.memberKeys.length === 0 ? (
          view.organization.memberKeysAllowed ? (
            <p className="muted" style={{ padding: '0 1rem 1rem' }}>
              No member&rsquo;s personal key reads {orgName}&rsquo;s contracts.
            </p>
          ) : null
        ) : (
          <KeyTable label="Members' personal keys" ownerHeading="Owner" testId="member-keys">
            {view.memberKeys.map((row) => (
              <tr key={row.id} data-testid="member-key-row">
                <td className="card-title" style={{ fontWeight: 600 }}>
                  {row.name}
                </td>
                <td data-label="Owner" style={{ overflowWrap: 'anywhere' }}>
                  {row.ownerName ? `${row.ownerName} (${row.ownerEmail})` : row.ownerEmail}
                </td>
                <KeyCells row={row} />
                <td data-label="Status">
                  <span className={`badge badge-${row.status}`}>{capitalized(row.status)}</span>
                </td>
                <td className="num card-actions">
                  <button
                    type="button"
                    className="btn btn-ghost btn-sm"
                    aria-label={`Remove access of ${row.name} (${row.ownerEmail})`}
                    onClick={() => setDialog({ kind: 'remove', row })}
                  >
                    Remove access
                  </button>
                </td>
              </tr>
            ))}
          </KeyTable>
        )}
      </div>

      {dialog?.kind === 'create' ? (
        <CreateKeyDialog
          organizations={[]}
          fixedOrganization={view.organization}
          onClose={close}
          onCreated={async (created) => {
            setDialog({ kind: 'created', created });
            await refresh();
          }}
        />
      ) : null}
      {dialog?.kind === 'created' ? <NewKeyDialog created={dialog.created} onClose={close} /> : null}
      {dialog?.kind === 'roll' ? <RollKeyFlow row={dialog.row} onClose={close} onRolled={refresh} /> : null}
      {dialog?.kind === 'edit' ? (
        <EditRestrictionsDialog
          row={dialog.row}
          organizations={[]}
          onClose={close}
          onSaved={async () => {
            close();
            await refresh();
          }}
        />
      ) : null}
      {dialog?.kind === 'revoke' ? (
        <RevokeDialog
          name={dialog.row.name}
          confirmLabel="Revoke key"
          onClose={close}
          onConfirm={async () => {
            await trpc.apiKeys.revoke.mutate({ id: dialog.row.id });
            close();
            await refresh();
          }}
        >
          <p>
            Requests that use <code>{dialog.row.hint}</code> will be refused from now on. This cannot be undone; the key stays listed as
            revoked.
          </p>
        </RevokeDialog>
      ) : null}
      {dialog?.kind === 'remove' ? (
        <RevokeDialog
          name={dialog.row.name}
          title={`Remove ${orgName}'s access from “${dialog.row.name}”?`}
          confirmLabel="Remove access"
          pendingLabel="Removing…"
          onClose={close}
          onConfirm={async () => {
            await trpc.organizationKeys.removeAccess.mutate({ organizationId, id: dialog.row.id });
            close();
            await refresh();
          }}
        >
          <p>
            The key <code>{dialog.row.hint}</code> of {dialog.row.ownerEmail} stops reading {orgName}&rsquo;s contracts from its next
            request. Nothing else of it changes: it keeps its other access. Its owner sees on their keys page that {orgName} removed
            its access.
          </p>
        </RevokeDialog>
      ) : null}
    </>
  );
}

/** "Members' personal keys may read this organisation's contracts": a checkbox that saves at once, and says so. */
function PolicyCard({ organizationId, allowed, onChanged }: { organizationId: string; allowed: boolean; onChanged: () => Promise<void> }) {
  const id = useId();
  const [pending, setPending] = useState(false);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<string | null>(null);
  // Shown at once (the box follows the click), put back if saving fails.
  const [checked, setChecked] = useState(allowed);
  async function change(memberKeysAllowed: boolean) {
    setChecked(memberKeysAllowed);
    setPending(true);
    setError(null);
    setStatus('');
    try {
      await trpc.organizationKeys.setPolicy.mutate({ organizationId, memberKeysAllowed });
      await onChanged();
      setStatus(memberKeysAllowed ? "Saved: members' personal keys may read this organisation's contracts." : "Saved: only the organisation's own keys read its contracts.");
    } catch (e) {
      setChecked(!memberKeysAllowed);
      setError(errorMessage(e));
    } finally {
      setPending(false);
    }
  }
  return (
    <div className="card">
      <div className="card-body">
        <h3>Policy</h3>
        <ErrorAlert message={error} />
        <label htmlFor={id} style={{ display: 'flex', gap: '0.5rem', alignItems: 'flex-start', fontWeight: 600 }}>
          <input id={id} type="checkbox" checked={checked} disabled={pending} aria-describedby={`${id}-hint`} onChange={(e) => change(e.target.checked)} />
          <span>Members&rsquo; personal keys may read this organisation&rsquo;s contracts</span>
        </label>
        <p id={`${id}-hint`} className="hint muted small" style={{ marginLeft: '1.6rem' }}>
          Off: only the organisation&rsquo;s own keys read its contracts. Members&rsquo; personal keys, calendar feeds and webhook
          endpoints leave them out from their next request, and keep their personal and other organisations&rsquo; access.
        </p>
        <p className="small muted" role="status" aria-live="polite" style={{ margin: 0 }}>
          {status}
        </p>
      </div>
    </div>
  );
}
