'use client';

import { useId, useState, type FormEvent } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import { Modal } from '@/components/modal';
import { ShownNextToField } from '@/components/tokens/create-dialog';
import { useKeyRestrictions } from '@/components/tokens/key-restrictions-state';
import { AccessFieldset, type OrganizationChoice } from '@/components/tokens/restriction-fields';
import type { Access } from '@/lib/key-restrictions';
import {
  DEFAULT_UPCOMING_OFFSETS,
  MAX_UPCOMING_OFFSET_DAYS,
  MAX_UPCOMING_OFFSETS,
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_URL_MAX_LENGTH,
  type WebhookEventType,
} from '@/lib/webhooks';

export interface NewEndpoint {
  url: string;
  eventTypes: WebhookEventType[];
  renewalOffsets: number[];
  access?: Access;
}

/** Parses "90, 30, 7" into days; a message when it is not a list of allowed offsets. */
function parseOffsets(text: string): number[] | string {
  const items = text.split(',').map((item) => item.trim()).filter(Boolean);
  if (items.length === 0) return 'Give at least one offset.';
  if (items.length > MAX_UPCOMING_OFFSETS) return `At most ${MAX_UPCOMING_OFFSETS} offsets.`;
  if (!items.every((item) => /^\d{1,3}$/.test(item) && Number(item) <= MAX_UPCOMING_OFFSET_DAYS)) {
    return `Whole numbers of days from 0 to ${MAX_UPCOMING_OFFSET_DAYS}, separated by commas.`;
  }
  const days = items.map(Number);
  return new Set(days).size === days.length ? days : 'Each offset may be listed once.';
}

/**
 * Adds an endpoint: its URL, the events it receives (all by default) and the offsets of
 * the upcoming-date events. The server checks the URL again (and where it resolves to); its
 * message is shown here, and the dialog stays open.
 */
export function CreateEndpointDialog({
  organizations,
  onClose,
  onSubmit,
}: {
  /** The user's organisations, for the access choice. */
  organizations: readonly OrganizationChoice[];
  onClose: () => void;
  onSubmit: (endpoint: NewEndpoint) => Promise<void>;
}) {
  const restrictions = useKeyRestrictions();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<WebhookEventType>>(new Set(WEBHOOK_EVENT_TYPES));
  const [offsets, setOffsets] = useState(DEFAULT_UPCOMING_OFFSETS.join(', '));
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<{ url?: string; events?: string; offsets?: string }>({});
  const [pending, setPending] = useState(false);
  const formId = useId();
  const upcoming = events.has('contract.renewal_upcoming') || events.has('contract.expiration_upcoming') || events.has('contract.notice_deadline_upcoming');

  async function submit(event: FormEvent) {
    event.preventDefault();
    const problems: typeof fieldErrors = {};
    if (!/^https?:\/\/\S+$/i.test(url.trim())) problems.url = 'Enter a full URL, such as https://example.com/webhooks.';
    if (events.size === 0) problems.events = 'Choose at least one event.';
    const parsed = parseOffsets(offsets);
    if (typeof parsed === 'string' && upcoming) problems.offsets = parsed;
    setFieldErrors(problems);
    const accessChosen = restrictions.check({ checkAccess: true });
    if (Object.keys(problems).length > 0 || !accessChosen) return;
    setPending(true);
    setError(null);
    try {
      await onSubmit({
        url: url.trim(),
        eventTypes: WEBHOOK_EVENT_TYPES.filter((type) => events.has(type)),
        renewalOffsets: typeof parsed === 'string' ? [...DEFAULT_UPCOMING_OFFSETS] : parsed,
        access: restrictions.access,
      }).catch((e: unknown) => restrictions.fail(e));
    } catch (e) {
      setError(e instanceof ShownNextToField ? null : errorMessage(e));
      setPending(false);
    }
  }

  const toggle = (type: WebhookEventType) =>
    setEvents((current) => {
      const next = new Set(current);
      if (next.has(type)) next.delete(type);
      else next.add(type);
      return next;
    });

  return (
    <Modal
      title="Add webhook endpoint"
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={pending}>
            {pending ? 'Adding…' : 'Add endpoint'}
          </button>
        </>
      }
    >
      <form id={formId} onSubmit={submit} noValidate>
        <ErrorAlert message={error} />
        <div className="field">
          <label htmlFor={`${formId}-url`}>Endpoint URL</label>
          <input
            id={`${formId}-url`}
            type="url"
            value={url}
            maxLength={WEBHOOK_URL_MAX_LENGTH}
            autoFocus
            placeholder="https://example.com/webhooks/contracts"
            aria-invalid={fieldErrors.url ? true : undefined}
            aria-describedby={`${formId}-url-hint`}
            onChange={(e) => setUrl(e.target.value)}
          />
          <span id={`${formId}-url-hint`} className="hint" style={fieldErrors.url ? { color: 'var(--danger)' } : undefined}>
            {fieldErrors.url ?? 'Where we POST the events. https only; public addresses only.'}
          </span>
        </div>
        <fieldset className="field" style={{ border: 0, padding: 0, margin: '0 0 1rem' }}>
          <legend style={{ fontWeight: 600, marginBottom: '0.4rem' }}>Events</legend>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type} style={{ display: 'flex', gap: '0.5rem', alignItems: 'flex-start', fontWeight: 400, marginBottom: '0.3rem' }}>
              <input type="checkbox" checked={events.has(type)} onChange={() => toggle(type)} style={{ width: 'auto', marginTop: '0.25rem' }} />
              <span>
                <code>{type}</code> <span className="muted small">{WEBHOOK_EVENT_DESCRIPTIONS[type]}</span>
              </span>
            </label>
          ))}
          {fieldErrors.events ? (
            <span className="hint" style={{ color: 'var(--danger)' }}>
              {fieldErrors.events}
            </span>
          ) : null}
        </fieldset>
        <AccessFieldset
          legend="Contracts it hears of"
          value={restrictions.access}
          onChange={restrictions.setAccess}
          organizations={organizations}
          error={restrictions.errors.access}
          firstInputRef={restrictions.refs.accessRef}
        />
        {upcoming ? (
          <div className="field">
            <label htmlFor={`${formId}-offsets`}>Days before renewal, expiration or notice deadline</label>
            <input
              id={`${formId}-offsets`}
              type="text"
              inputMode="numeric"
              value={offsets}
              aria-invalid={fieldErrors.offsets ? true : undefined}
              aria-describedby={`${formId}-offsets-hint`}
              onChange={(e) => setOffsets(e.target.value)}
            />
            <span id={`${formId}-offsets-hint`} className="hint" style={fieldErrors.offsets ? { color: 'var(--danger)' } : undefined}>
              {fieldErrors.offsets ?? `The *_upcoming events fire once per contract, date and offset (up to ${MAX_UPCOMING_OFFSETS}, separated by commas).`}
            </span>
          </div>
        ) : null}
      </form>
    </Modal>
  );
}
