'use client';

import { useEffect, useState } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import { useFocusReturn, useRefreshableList } from '@/components/tokens/managed-list';
import { AccessDialog, accessText } from '@/components/tokens/access-dialog';
import type { OrganizationChoice } from '@/components/tokens/restriction-fields';
import { RevokeDialog } from '@/components/tokens/revoke-dialog';
import { SecretOnceDialog } from '@/components/tokens/secret-once-dialog';
import { RelativeTime } from '@/components/tokens/time';
import { trpc } from '@/components/trpc-client';
import { MAX_WEBHOOK_ENDPOINTS, PREVIOUS_SECRET_VALID_HOURS } from '@/lib/webhooks';
import { CreateEndpointDialog } from './create-endpoint-dialog';
import { onTheWire, type DeliveryRow, type EndpointRow } from './types';

const loadEndpoints = async () => (await trpc.webhooks.list.query()).map(onTheWire);

const STATUS_BADGE: Record<EndpointRow['status'], string> = { active: 'badge-active', paused: 'badge-pending', disabled: 'badge-expired' };
const capitalized = (word: string) => word[0]!.toUpperCase() + word.slice(1);

type Shown = { title: string; intro: string; secret: string };

/**
 * Settings → Webhooks: the user's endpoints with their figures of the last 24 hours, and per
 * endpoint: send a test event, rotate the secret, pause or resume, delete, and its delivery
 * log with "Resend". Secrets are shown once (after adding an endpoint and after a rotation)
 * in the same dialog as new API keys.
 */
export function WebhooksManager({ initialEndpoints, organizations }: { initialEndpoints: EndpointRow[]; organizations: OrganizationChoice[] }) {
  const { rows, listError, refresh } = useRefreshableList(initialEndpoints, loadEndpoints);
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<Shown | null>(null);
  const [deleting, setDeleting] = useState<EndpointRow | null>(null);
  const [rotating, setRotating] = useState<EndpointRow | null>(null);
  const [changingAccess, setChangingAccess] = useState<EndpointRow | null>(null);
  const createButton = useFocusReturn(creating || shown !== null || deleting !== null || rotating !== null || changingAccess !== null);

  return (
    <>
      <ErrorAlert message={listError} />
      <div className="card">
        <div className="card-body" style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', gap: '1rem', flexWrap: 'wrap' }}>
          <div>
            <h2 style={{ marginBottom: 0 }}>Your endpoints</h2>
            <p className="muted small" style={{ margin: 0 }}>
              {rows.length} of {MAX_WEBHOOK_ENDPOINTS} endpoints
            </p>
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setCreating(true)} disabled={rows.length >= MAX_WEBHOOK_ENDPOINTS}>
            Add endpoint
          </button>
        </div>
        {rows.length === 0 ? (
          <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
            <h2>No webhook endpoints yet</h2>
            <p className="muted">Add an endpoint to hear about new, changed and deleted contracts and upcoming renewals as they happen.</p>
          </div>
        ) : (
          rows.map((endpoint) => (
            <EndpointCard
              key={endpoint.id}
              endpoint={endpoint}
              onChanged={refresh}
              onDelete={() => setDeleting(endpoint)}
              onRotate={() => setRotating(endpoint)}
              onChangeAccess={() => setChangingAccess(endpoint)}
              accessText={accessText(endpoint.access, organizations)}
            />
          ))
        )}
      </div>

      {creating ? (
        <CreateEndpointDialog
          organizations={organizations}
          onClose={() => setCreating(false)}
          onSubmit={async (input) => {
            const created = await trpc.webhooks.create.mutate(input);
            setCreating(false);
            setShown({ title: 'Your endpoint’s signing secret', intro: `The endpoint ${created.endpoint.url} is ready.`, secret: created.secret });
            await refresh();
          }}
        />
      ) : null}

      {shown ? (
        <SecretOnceDialog
          title={shown.title}
          intro={shown.intro}
          warning="Copy the signing secret now: it will not be shown again. Your receiver needs it to verify that each request comes from us."
          secret={shown.secret}
          secretTestId="new-webhook-secret"
          copyFailedText="Copying failed: the secret is selected, press Ctrl+C."
          doneLabel="I have saved the secret"
          onClose={() => setShown(null)}
        >
          <p className="small muted">
            Verify the <code>webhook-signature</code> header with a Standard Webhooks library (<code>npm install standardwebhooks</code>,{' '}
            <code>pip install standardwebhooks</code>): see the <a href="/docs/api#tag/webhooks">API reference</a> for a receiver.
          </p>
        </SecretOnceDialog>
      ) : null}

      {rotating ? (
        <RevokeDialog
          name={rotating.url}
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          pendingLabel="Rotating…"
          onClose={() => setRotating(null)}
          onConfirm={async () => {
            const rotated = await trpc.webhooks.rotateSecret.mutate({ id: rotating.id });
            setRotating(null);
            setShown({ title: 'The new signing secret', intro: `The secret of ${rotated.endpoint.url} was rotated.`, secret: rotated.secret });
            await refresh();
          }}
        >
          <p>
            A new secret signs every request from now on. The current one (<code>{rotating.secretHint}</code>) stays valid for{' '}
            {PREVIOUS_SECRET_VALID_HOURS} hours: each request carries a signature for both meanwhile, so you can update your receiver
            without missing one.
          </p>
        </RevokeDialog>
      ) : null}

      {changingAccess ? (
        <AccessDialog
          title="Contracts this endpoint hears of"
          intro={`Events about contracts outside this choice are no longer sent to ${changingAccess.url}.`}
          initial={changingAccess.access}
          organizations={organizations}
          onClose={() => setChangingAccess(null)}
          save={async (access) => {
            await trpc.webhooks.setAccess.mutate({ id: changingAccess.id, access });
            setChangingAccess(null);
            await refresh();
          }}
        />
      ) : null}

      {deleting ? (
        <RevokeDialog
          name={deleting.url}
          title="Delete this endpoint?"
          confirmLabel="Delete endpoint"
          pendingLabel="Deleting…"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await trpc.webhooks.delete.mutate({ id: deleting.id });
            setDeleting(null);
            await refresh();
          }}
        >
          <p>
            <code>{deleting.url}</code> will receive nothing more, and its delivery log is deleted. This cannot be undone.
          </p>
        </RevokeDialog>
      ) : null}
    </>
  );
}

function EndpointCard({
  endpoint,
  accessText,
  onChanged,
  onDelete,
  onRotate,
  onChangeAccess,
}: {
  endpoint: EndpointRow;
  /** What it hears of: "Everything", "Personal, Acme Corp". */
  accessText: string;
  onChanged: () => Promise<void>;
  onDelete: () => void;
  onRotate: () => void;
  onChangeAccess: () => void;
}) {
  const [logOpen, setLogOpen] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [logVersion, setLogVersion] = useState(0);

  async function act(label: string, action: () => Promise<string | null>) {
    setBusy(label);
    setError(null);
    setNotice(null);
    try {
      setNotice(await action());
      await onChanged();
      setLogVersion((v) => v + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  }

  const sendTest = () =>
    act('test', async () => {
      const outcome = await trpc.webhooks.sendTest.mutate({ id: endpoint.id });
      setLogOpen(true);
      return describeOutcome('Test event', outcome);
    });

  return (
    <section data-testid="webhook-endpoint" aria-label={endpoint.url} style={{ borderTop: '1px solid var(--border)', padding: '1rem 1.25rem' }}>
      <div style={{ display: 'flex', justifyContent: 'space-between', gap: '1rem', flexWrap: 'wrap', alignItems: 'flex-start' }}>
        <div style={{ minWidth: 0 }}>
          <p style={{ margin: 0, fontWeight: 600, overflowWrap: 'anywhere' }}>
            <code>{endpoint.url}</code> <span className={`badge ${STATUS_BADGE[endpoint.status]}`}>{capitalized(endpoint.status)}</span>
          </p>
          <p className="small muted" style={{ margin: '0.25rem 0 0' }}>
            {endpoint.eventTypes.join(', ')}
            {endpoint.eventTypes.some((t) => t.endsWith('_upcoming')) ? ` · ${endpoint.renewalOffsets.join(', ')} days before` : ''}
          </p>
          <p className="small muted" style={{ margin: '0.25rem 0 0' }} data-testid="endpoint-access">
            Contracts: {accessText}
          </p>
          <p className="small muted" style={{ margin: '0.25rem 0 0' }}>
            Secret <code>{endpoint.secretHint}</code>
            {endpoint.previousSecretExpiresAt ? (
              <>
                {' '}
                · previous secret valid until <RelativeTime iso={endpoint.previousSecretExpiresAt} fallback="" />
              </>
            ) : null}{' '}
            · last 24 h: <span data-testid="webhook-figures">{endpoint.last24h.succeeded} delivered, {endpoint.last24h.failed} failed</span>
          </p>
        </div>
        <div style={{ display: 'flex', gap: '0.4rem', flexWrap: 'wrap' }}>
          <button type="button" className="btn btn-sm" onClick={sendTest} disabled={busy !== null || endpoint.status !== 'active'}>
            {busy === 'test' ? 'Sending…' : 'Send test event'}
          </button>
          <button type="button" className="btn btn-sm" onClick={onRotate} disabled={busy !== null}>
            Rotate secret
          </button>
          <button type="button" className="btn btn-sm" onClick={onChangeAccess} disabled={busy !== null} aria-label={`Change access of ${endpoint.url}`}>
            Change access
          </button>
          {endpoint.status === 'active' ? (
            <button type="button" className="btn btn-sm" disabled={busy !== null} onClick={() => act('pause', async () => (await trpc.webhooks.pause.mutate({ id: endpoint.id }), 'Paused: events are kept and sent in order when you resume.'))}>
              Pause
            </button>
          ) : (
            <button type="button" className="btn btn-sm" disabled={busy !== null} onClick={() => act('resume', async () => (await trpc.webhooks.resume.mutate({ id: endpoint.id }), 'Resumed.'))}>
              Resume
            </button>
          )}
          <button type="button" className="btn btn-sm btn-ghost" onClick={onDelete} disabled={busy !== null} aria-label={`Delete ${endpoint.url}`}>
            Delete
          </button>
        </div>
      </div>
      {endpoint.status === 'disabled' && endpoint.disabledReason ? (
        <div className="alert alert-error" role="note" style={{ marginTop: '0.75rem' }}>
          {endpoint.disabledReason} Fix the receiver, then resume the endpoint.
        </div>
      ) : null}
      <ErrorAlert message={error} />
      {notice ? (
        <p className="small" role="status" style={{ margin: '0.5rem 0 0' }}>
          {notice}
        </p>
      ) : null}
      <button type="button" className="btn btn-ghost btn-sm" style={{ marginTop: '0.5rem', paddingLeft: 0 }} aria-expanded={logOpen} onClick={() => setLogOpen((open) => !open)}>
        {logOpen ? 'Hide delivery log' : 'Show delivery log'}
      </button>
      {logOpen ? <DeliveryLog endpointId={endpoint.id} version={logVersion} onResent={() => setLogVersion((v) => v + 1)} /> : null}
    </section>
  );
}

function describeOutcome(what: string, outcome: { state: string; lastStatusCode: number | null; lastError: string | null }): string {
  if (outcome.state === 'succeeded') return `${what} delivered (HTTP ${outcome.lastStatusCode}).`;
  if (outcome.state === 'pending' && outcome.lastError) return `${what} failed: ${outcome.lastError} It will be retried.`;
  if (outcome.state === 'pending') return `${what} queued.`;
  return `${what} not delivered: ${outcome.lastError ?? outcome.state}.`;
}

const STATE_BADGE: Record<DeliveryRow['state'], string> = { succeeded: 'badge-completed', pending: 'badge-pending', failed: 'badge-expired', skipped: 'badge-revoked' };
const STATE_LABEL: Record<DeliveryRow['state'], string> = { succeeded: 'Delivered', pending: 'Retrying', failed: 'Failed', skipped: 'Skipped' };

/** The newest deliveries of one endpoint: time, event, status code, duration, response, next retry, Resend. */
function DeliveryLog({ endpointId, version, onResent }: { endpointId: string; version: number; onResent: () => void }) {
  const [rows, setRows] = useState<DeliveryRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [resending, setResending] = useState<string | null>(null);

  // Loaded when shown, and again after each change (`version`).
  useEffect(() => {
    let current = true;
    trpc.webhooks.deliveries.query({ endpointId }).then(
      (loaded) => {
        if (!current) return;
        setRows(loaded.map(onTheWire));
        setError(null);
      },
      (e: unknown) => current && setError(`The delivery log could not be loaded: ${errorMessage(e)}`),
    );
    return () => {
      current = false;
    };
  }, [endpointId, version]);

  async function resend(id: string) {
    setResending(id);
    setError(null);
    try {
      await trpc.webhooks.resend.mutate({ deliveryId: id });
      onResent();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setResending(null);
    }
  }

  if (rows === null) return error ? <ErrorAlert message={error} /> : <p className="small muted">Loading the delivery log…</p>;
  return (
    <div style={{ marginTop: '0.5rem' }}>
      <ErrorAlert message={error} />
      {rows.length === 0 ? (
        <p className="small muted">No deliveries yet. Send a test event to try your receiver.</p>
      ) : (
        // position: relative makes this scrolling box the containing block of the visually
        // hidden header text, which otherwise widened the page at phone width.
        <div style={{ overflowX: 'auto', position: 'relative' }}>
          <table className="data" aria-label="Delivery log">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Response</th>
                <th scope="col">Next retry</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-testid="webhook-delivery-row">
                  <td>
                    <RelativeTime iso={row.lastAttemptAt ?? row.createdAt} fallback="" />
                  </td>
                  <td>
                    <code>{row.eventType}</code>
                    <div className="small muted" title="webhook-id">
                      msg_{row.eventId.replaceAll('-', '')}
                    </div>
                  </td>
                  <td>
                    <span className={`badge ${STATE_BADGE[row.state]}`}>{STATE_LABEL[row.state]}</span>{' '}
                    {row.lastStatusCode !== null ? <span data-testid="delivery-status-code">{row.lastStatusCode}</span> : null}
                    <div className="small muted">
                      {row.attempts} attempt{row.attempts === 1 ? '' : 's'}
                    </div>
                  </td>
                  <td className="num">{row.lastDurationMs !== null ? `${row.lastDurationMs} ms` : ''}</td>
                  <td style={{ maxWidth: 280 }}>
                    <code className="small" title={row.lastResponse ?? undefined} style={{ overflowWrap: 'anywhere' }}>
                      {(row.lastResponse ?? row.lastError ?? '').slice(0, 160)}
                    </code>
                  </td>
                  <td>{row.state === 'pending' ? <RelativeTime iso={row.nextAttemptAt} fallback="" /> : <span className="muted">—</span>}</td>
                  <td className="num">
                    <button type="button" className="btn btn-ghost btn-sm" onClick={() => resend(row.id)} disabled={resending !== null}>
                      {resending === row.id ? 'Resending…' : 'Resend'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
