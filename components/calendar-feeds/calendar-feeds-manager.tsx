'use client';

import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { FEED_NAME_MAX_LENGTH, MAX_ACTIVE_FEEDS } from '@/server/calendar/constants';
import { DateOnly, RelativeTime } from '../api-keys/time';
import { trpc } from '../trpc-client';
import { Modal } from '@/components/modal';
import { toFeedRow, type CalendarFeedRow } from './types';

function errorMessage(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'Something went wrong. Try again.';
}

interface CreatedFeed {
  name: string;
  url: string;
  webcalUrl: string;
}

export function CalendarFeedsManager({ initialFeeds }: { initialFeeds: CalendarFeedRow[] }) {
  const [feeds, setFeeds] = useState(initialFeeds);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedFeed | null>(null);
  const [revoking, setRevoking] = useState<CalendarFeedRow | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  const activeCount = feeds.filter((f) => f.status === 'active').length;
  const dialogOpen = creating || created !== null || revoking !== null;

  // When the last dialog has closed (and React has removed it), focus goes back to the
  // "Create calendar feed" button: while a modal is open the page behind it cannot take focus.
  useEffect(() => {
    if (!dialogOpen && document.activeElement === document.body) createButton.current?.focus();
  }, [dialogOpen]);

  const [listError, setListError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      setFeeds((await trpc.calendarFeeds.list.query()).map(toFeedRow));
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
            <h2 style={{ marginBottom: 0 }}>Your calendar feeds</h2>
            <p className="muted small" style={{ margin: 0 }}>
              {activeCount} of {MAX_ACTIVE_FEEDS} active feeds
            </p>
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            Create calendar feed
          </button>
        </div>
        {feeds.length === 0 ? (
          <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
            <h2>No calendar feeds yet</h2>
            <p className="muted">
              Create a feed and subscribe to it in Google Calendar, Outlook or Apple Calendar to see every renewal and expiration
              date next to your meetings.
            </p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              Create your first calendar feed
            </button>
          </div>
        ) : (
          <div style={{ overflowX: 'auto', borderTop: '1px solid var(--border)' }}>
            <table className="data" aria-label="Calendar feeds">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Feed</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {feeds.map((feed) => (
                  <tr key={feed.id} data-testid="calendar-feed-row">
                    <td style={{ fontWeight: 600 }}>{feed.name}</td>
                    <td>
                      <code>{feed.hint}</code>
                    </td>
                    <td>
                      <DateOnly iso={feed.createdAt} fallback="" />
                    </td>
                    <td>
                      <RelativeTime iso={feed.lastUsedAt} fallback="Never" />
                    </td>
                    <td>
                      <span className={`badge badge-${feed.status}`}>{feed.status === 'active' ? 'Active' : 'Revoked'}</span>
                    </td>
                    <td className="num">
                      {feed.status === 'revoked' ? null : (
                        <button
                          type="button"
                          className="btn btn-ghost btn-sm"
                          onClick={() => setRevoking(feed)}
                          aria-label={`Revoke ${feed.name}`}
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
        <CreateFeedDialog
          onClose={() => setCreating(false)}
          onCreated={async (feed) => {
            setCreating(false);
            setCreated(feed);
            await refresh();
          }}
        />
      ) : null}

      {created ? (
        <ShowFeedDialog
          feed={created}
          // After this, the address exists nowhere: only its hint is listed.
          onClose={() => setCreated(null)}
        />
      ) : null}

      {revoking ? (
        <RevokeDialog
          feed={revoking}
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

function CreateFeedDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (feed: CreatedFeed) => Promise<void> }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [nameError, setNameError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const formId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > FEED_NAME_MAX_LENGTH) {
      setNameError(trimmed.length === 0 ? 'Enter a name.' : `At most ${FEED_NAME_MAX_LENGTH} characters.`);
      return;
    }
    setPending(true);
    setError(null);
    try {
      const result = await trpc.calendarFeeds.create.mutate({ name: trimmed });
      await onCreated({ name: result.feed.name, url: result.url, webcalUrl: result.webcalUrl });
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
    }
  }

  return (
    <Modal
      title="Create calendar feed"
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={pending}>
            {pending ? 'Creating…' : 'Create feed'}
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
            maxLength={FEED_NAME_MAX_LENGTH + 10}
            autoFocus
            placeholder="e.g. Work calendar"
            aria-invalid={nameError ? true : undefined}
            aria-describedby={`${formId}-name-hint`}
            onChange={(e) => {
              setName(e.target.value);
              setNameError(null);
            }}
          />
          <span id={`${formId}-name-hint`} className="hint" style={nameError ? { color: 'var(--danger)' } : undefined}>
            {nameError ?? `Where you will subscribe to it, so you recognise it later (1 to ${FEED_NAME_MAX_LENGTH} characters).`}
          </span>
        </div>
      </form>
    </Modal>
  );
}

function ShowFeedDialog({ feed, onClose }: { feed: CreatedFeed; onClose: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const codeRef = useRef<HTMLElement>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(feed.url);
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
      title="Your new calendar feed"
      onClose={onClose}
      dismissible={false}
      footer={
        <button type="button" className="btn btn-primary" onClick={onClose}>
          I have saved the address
        </button>
      }
    >
      <p>
        The feed <strong>{feed.name}</strong> is ready.
      </p>
      <div className="alert alert-warning" role="note">
        Copy the address now: it will not be shown again. Anyone who has it can read your contracts&rsquo; renewal and
        expiration dates, so share it only with your calendar app.
      </div>
      <div className="secret-box">
        <code ref={codeRef} data-testid="new-calendar-feed-url">
          {feed.url}
        </code>
        <button type="button" className="btn" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p className="small muted" role="status" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'Copying failed: the address is selected, press Ctrl+C.' : ''}
      </p>
      <p>
        <a className="btn" href={feed.webcalUrl}>
          Subscribe in your calendar app
        </a>
      </p>
      <p className="small muted">
        Or paste the address into Google Calendar (Other calendars → From URL), Outlook (Add calendar → Subscribe from web) or
        Apple Calendar (File → New Calendar Subscription). Calendar apps fetch it again every few hours.
      </p>
    </Modal>
  );
}

function RevokeDialog({ feed, onClose, onRevoked }: { feed: CalendarFeedRow; onClose: () => void; onRevoked: () => Promise<void> }) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function revoke() {
    setPending(true);
    try {
      await trpc.calendarFeeds.revoke.mutate({ id: feed.id });
      await onRevoked();
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
    }
  }

  return (
    <Modal
      title={`Revoke “${feed.name}”?`}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} autoFocus>
            Cancel
          </button>
          <button type="button" className="btn btn-danger" onClick={revoke} disabled={pending}>
            {pending ? 'Revoking…' : 'Revoke feed'}
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
        The address of <code>{feed.hint}</code> stops working at once: calendar apps subscribed to it get no further updates,
        and some keep the events they already show until you remove the subscription. This cannot be undone; the feed stays
        listed as revoked.
      </p>
    </Modal>
  );
}
