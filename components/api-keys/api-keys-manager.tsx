'use client';

import { useId, useState } from 'react';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, MAX_ACTIVE_KEYS, NAME_MAX_LENGTH, type ExpiryChoice } from '@/server/api-keys/constants';
import { CreateDialog } from '@/components/create-dialog';
import { ErrorAlert } from '@/components/error-alert';
import { useFocusReturn, useRefreshableList } from '@/components/managed-list';
import { RevokeDialog } from '@/components/revoke-dialog';
import { SecretOnceDialog } from '@/components/secret-once-dialog';
import { trpc } from '../trpc-client';
import { DateOnly, RelativeTime } from './time';
import { toRow, type ApiKeyRow } from './types';

const EXPIRY_LABELS: Record<string, string> = { '7': '7 days', '30': '30 days', '90': '90 days', '365': '1 year', never: 'Never' };

const loadKeys = async () => (await trpc.apiKeys.list.query()).map(toRow);

export function ApiKeysManager({ initialKeys }: { initialKeys: ApiKeyRow[] }) {
  const { rows: keys, listError, refresh } = useRefreshableList(initialKeys, loadKeys);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyRow | null>(null);
  const activeCount = keys.filter((k) => k.status === 'active').length;
  const createButton = useFocusReturn(creating || created !== null || revoking !== null);

  return (
    <>
      <ErrorAlert message={listError} />
      <div className="card">
        <div className="card-body" style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', gap: '1rem' }}>
          <div>
            <h2 style={{ marginBottom: 0 }}>Your API keys</h2>
            <p className="muted small" style={{ margin: 0 }}>
              {activeCount} of {MAX_ACTIVE_KEYS} active keys
            </p>
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            Create API key
          </button>
        </div>
        {keys.length === 0 ? (
          <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
            <h2>No API keys yet</h2>
            <p className="muted">Create your first key to call the Contract Data API from a script, a spreadsheet or another system.</p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              Create your first API key
            </button>
          </div>
        ) : (
          <div style={{ overflowX: 'auto', borderTop: '1px solid var(--border)' }}>
            <table className="data" aria-label="API keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.id} data-testid="api-key-row">
                    <td style={{ fontWeight: 600 }}>{key.name}</td>
                    <td>
                      <code>{key.hint}</code>
                    </td>
                    <td>
                      <DateOnly iso={key.createdAt} fallback="" />
                    </td>
                    <td>
                      <RelativeTime iso={key.lastUsedAt} fallback="Never" />
                    </td>
                    <td>
                      <DateOnly iso={key.expiresAt} fallback="Never" />
                    </td>
                    <td>
                      <span className={`badge badge-${key.status}`}>{key.status[0]!.toUpperCase() + key.status.slice(1)}</span>
                    </td>
                    <td className="num">
                      {key.status === 'revoked' ? null : (
                        <button
                          type="button"
                          className="btn btn-ghost btn-sm"
                          onClick={() => setRevoking(key)}
                          aria-label={`Revoke ${key.name}`}
                        >
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

      {creating ? (
        <CreateKeyDialog
          onClose={() => setCreating(false)}
          onCreated={async (name, key) => {
            setCreating(false);
            setCreated({ name, key });
            await refresh();
          }}
        />
      ) : null}

      {created ? (
        <SecretOnceDialog
          title="Your new API key"
          intro={
            <>
              The key <strong>{created.name}</strong> is ready.
            </>
          }
          warning="Copy it now and keep it somewhere safe. It will not be shown again: we only store a hash of it."
          secret={created.key}
          secretTestId="new-api-key"
          copyFailedText="Copying failed: the key is selected, press Ctrl+C."
          doneLabel="I have saved my key"
          // After this, the full key exists nowhere: only its hint is listed.
          onClose={() => setCreated(null)}
        >
          <p className="small muted">
            Use it in the <code>X-API-Key</code> header. Never commit it to version control.
          </p>
        </SecretOnceDialog>
      ) : null}

      {revoking ? (
        <RevokeDialog
          name={revoking.name}
          confirmLabel="Revoke key"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await trpc.apiKeys.revoke.mutate({ id: revoking.id });
            setRevoking(null);
            await refresh();
          }}
        >
          <p>
            Requests that use <code>{revoking.hint}</code> will be refused from now on. This cannot be undone; the key stays listed
            as revoked.
          </p>
        </RevokeDialog>
      ) : null}
    </>
  );
}

function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (name: string, key: string) => Promise<void> }) {
  const [expiry, setExpiry] = useState<string>(String(DEFAULT_EXPIRY));
  const expiryId = useId();

  return (
    <CreateDialog
      title="Create API key"
      submitLabel="Create key"
      nameMaxLength={NAME_MAX_LENGTH}
      namePlaceholder="e.g. Nightly ETL"
      nameHint={`What the key is for, so you recognise it later (1 to ${NAME_MAX_LENGTH} characters).`}
      onClose={onClose}
      onSubmit={async (name) => {
        const expiresInDays = (expiry === 'never' ? null : Number(expiry)) as ExpiryChoice;
        const result = await trpc.apiKeys.create.mutate({ name, expiresInDays });
        await onCreated(result.apiKey.name, result.key);
      }}
    >
      <div className="field">
        <label htmlFor={expiryId}>Expires after</label>
        <select id={expiryId} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
          {EXPIRY_CHOICES.map((choice) => {
            const value = choice === null ? 'never' : String(choice);
            return (
              <option key={value} value={value}>
                {EXPIRY_LABELS[value]}
              </option>
            );
          })}
        </select>
      </div>
    </CreateDialog>
  );
}
