'use client';

import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, MAX_ACTIVE_KEYS, NAME_MAX_LENGTH, type ExpiryChoice } from '@/server/api-keys/constants';
import { Modal } from '@/components/modal';
import { trpc } from '../trpc-client';
import { DateOnly, RelativeTime } from './time';
import { toRow, type ApiKeyRow } from './types';

const EXPIRY_LABELS: Record<string, string> = { '7': '7 days', '30': '30 days', '90': '90 days', '365': '1 year', never: 'Never' };

function errorMessage(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'Something went wrong. Try again.';
}

export function ApiKeysManager({ initialKeys }: { initialKeys: ApiKeyRow[] }) {
  const [keys, setKeys] = useState(initialKeys);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyRow | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  const activeCount = keys.filter((k) => k.status === 'active').length;
  const dialogOpen = creating || created !== null || revoking !== null;

  // When the last dialog has closed (and React has removed it), focus goes back to the
  // "Create API key" button: while a modal is open the page behind it cannot take focus.
  useEffect(() => {
    if (!dialogOpen && document.activeElement === document.body) createButton.current?.focus();
  }, [dialogOpen]);

  const [listError, setListError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      setKeys((await trpc.apiKeys.list.query()).map(toRow));
      setListError(null);
    } catch (e) {
      setListError(`The list could not be refreshed: ${errorMessage(e)} Reload the page.`);
    }
  }, []);

  return (
    <>
      {listError ? (
        <div className="alert alert-error" role="alert">
          {listError}
        </div>
      ) : null}
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
        <ShowKeyDialog
          name={created.name}
          apiKey={created.key}
          // After this, the full key exists nowhere: only its hint is listed.
          onClose={() => setCreated(null)}
        />
      ) : null}

      {revoking ? (
        <RevokeDialog
          apiKey={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={async () => {
            setRevoking(null);
            await refresh();
          }}
        />
      ) : null}
    </>
  );
}

/** A modal built on <dialog>: the browser keeps focus inside it and Escape closes it. */
function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (name: string, key: string) => Promise<void> }) {
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState<string>(String(DEFAULT_EXPIRY));
  const [error, setError] = useState<string | null>(null);
  const [nameError, setNameError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const formId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > NAME_MAX_LENGTH) {
      setNameError(trimmed.length === 0 ? 'Enter a name.' : `At most ${NAME_MAX_LENGTH} characters.`);
      return;
    }
    setPending(true);
    setError(null);
    try {
      const expiresInDays = (expiry === 'never' ? null : Number(expiry)) as ExpiryChoice;
      const result = await trpc.apiKeys.create.mutate({ name: trimmed, expiresInDays });
      await onCreated(result.apiKey.name, result.key);
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
    }
  }

  return (
    <Modal
      title="Create API key"
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={pending}>
            {pending ? 'Creating…' : 'Create key'}
          </button>
        </>
      }
    >
      <form id={formId} onSubmit={submit} noValidate>
        {error ? (
          <div className="alert alert-error" role="alert">
            {error}
          </div>
        ) : null}
        <div className="field">
          <label htmlFor={`${formId}-name`}>Name</label>
          <input
            id={`${formId}-name`}
            type="text"
            value={name}
            maxLength={NAME_MAX_LENGTH + 10}
            autoFocus
            placeholder="e.g. Nightly ETL"
            aria-invalid={nameError ? true : undefined}
            aria-describedby={`${formId}-name-hint`}
            onChange={(e) => {
              setName(e.target.value);
              setNameError(null);
            }}
          />
          <span id={`${formId}-name-hint`} className="hint" style={nameError ? { color: 'var(--danger)' } : undefined}>
            {nameError ?? `What the key is for, so you recognise it later (1 to ${NAME_MAX_LENGTH} characters).`}
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${formId}-expiry`}>Expires after</label>
          <select id={`${formId}-expiry`} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
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
      </form>
    </Modal>
  );
}

function ShowKeyDialog({ name, apiKey, onClose }: { name: string; apiKey: string; onClose: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const codeRef = useRef<HTMLElement>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(apiKey);
      setCopied('yes');
    } catch {
      // Clipboard refused (permissions, insecure context): select the text for a manual copy.
      const range = document.createRange();
      if (codeRef.current) {
        range.selectNodeContents(codeRef.current);
        window.getSelection()?.removeAllRanges();
        window.getSelection()?.addRange(range);
      }
      setCopied('failed');
    }
  }

  return (
    <Modal
      title="Your new API key"
      onClose={onClose}
      dismissible={false}
      footer={
        <button type="button" className="btn btn-primary" onClick={onClose}>
          I have saved my key
        </button>
      }
    >
      <p>
        The key <strong>{name}</strong> is ready.
      </p>
      <div className="alert alert-warning" role="note">
        Copy it now and keep it somewhere safe. It will not be shown again: we only store a hash of it.
      </div>
      <div className="secret-box">
        <code ref={codeRef} data-testid="new-api-key">
          {apiKey}
        </code>
        <button type="button" className="btn" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p className="small muted" role="status" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'Copying failed: the key is selected, press Ctrl+C.' : ''}
      </p>
      <p className="small muted">
        Use it in the <code>X-API-Key</code> header. Never commit it to version control.
      </p>
    </Modal>
  );
}

function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: ApiKeyRow; onClose: () => void; onRevoked: () => Promise<void> }) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function revoke() {
    setPending(true);
    try {
      await trpc.apiKeys.revoke.mutate({ id: apiKey.id });
      await onRevoked();
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
    }
  }

  return (
    <Modal
      title={`Revoke “${apiKey.name}”?`}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} autoFocus>
            Cancel
          </button>
          <button type="button" className="btn btn-danger" onClick={revoke} disabled={pending}>
            {pending ? 'Revoking…' : 'Revoke key'}
          </button>
        </>
      }
    >
      {error ? (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      ) : null}
      <p>
        Requests that use <code>{apiKey.hint}</code> will be refused from now on. This cannot be undone; the key stays listed as
        revoked.
      </p>
    </Modal>
  );
}
