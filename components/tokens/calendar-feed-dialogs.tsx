'use client';

import { useId, useState, type ReactNode } from 'react';
import { DEFAULT_NOTICE_REMINDER_DAYS, NOTICE_REMINDER_CHOICES } from '@/lib/calendar';
import { TOKEN_NAME_MAX_LENGTH } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { CreateDialog, ShownNextToField } from './create-dialog';
import { useKeyRestrictions } from './key-restrictions-state';
import { AccessFieldset, type OrganizationChoice } from './restriction-fields';
import { SecretOnceDialog } from './secret-once-dialog';

/**
 * Creating a calendar feed and showing its address once: the dialogs of Settings →
 * Calendar feeds and of the contracts page's "Subscribe in calendar".
 */

export interface CreatedFeed {
  name: string;
  url: string;
  webcalUrl: string;
}

export function CreateCalendarFeedDialog({
  title = 'Create calendar feed',
  intro,
  initialName,
  organizations,
  onClose,
  onCreated,
}: {
  title?: string;
  /** The user's organisations: with them the dialog offers the access choice (else the feed reads everything). */
  organizations?: readonly OrganizationChoice[];
  /** Shown above the name field. */
  intro?: ReactNode;
  initialName?: string;
  onClose: () => void;
  onCreated: (feed: CreatedFeed) => Promise<void> | void;
}) {
  const restrictions = useKeyRestrictions();
  const [reminderDays, setReminderDays] = useState<number>(DEFAULT_NOTICE_REMINDER_DAYS);
  const reminderId = useId();
  return (
    <CreateDialog
      title={title}
      intro={intro}
      initialName={initialName}
      submitLabel="Create feed"
      nameMaxLength={TOKEN_NAME_MAX_LENGTH}
      namePlaceholder="e.g. Work calendar"
      nameHint={`Where you will subscribe to it, so you recognise it later (1 to ${TOKEN_NAME_MAX_LENGTH} characters).`}
      onClose={onClose}
      onSubmit={async (name) => {
        if (organizations && !restrictions.check({ checkAccess: true })) throw new ShownNextToField('access');
        const result = await trpc.calendarFeeds.create
          .mutate({ name, noticeReminderDays: reminderDays, ...(organizations ? { access: restrictions.access } : {}) })
          .catch((e: unknown) => restrictions.fail(e));
        await onCreated({ name: result.token.name, url: result.url, webcalUrl: result.webcalUrl });
      }}
    >
      <div className="field">
        <label htmlFor={reminderId}>Reminder before a notice deadline</label>
        <select id={reminderId} value={reminderDays} aria-describedby={`${reminderId}-hint`} onChange={(e) => setReminderDays(Number(e.target.value))}>
          {NOTICE_REMINDER_CHOICES.map((days) => (
            <option key={days} value={days}>
              {days === 0 ? 'On the day' : `${days} days before`}
            </option>
          ))}
        </select>
        <span id={`${reminderId}-hint`} className="hint">
          Each “Give notice by” event reminds you this long before the last day to stop a renewal.
        </span>
      </div>
      {organizations ? (
        <AccessFieldset
          legend="Contracts in the feed"
          value={restrictions.access}
          onChange={restrictions.setAccess}
          organizations={organizations}
          error={restrictions.errors.access}
          firstInputRef={restrictions.refs.accessRef}
        />
      ) : null}
    </CreateDialog>
  );
}

/** The new feed's address, the only time it exists in full, with the webcal:// link that subscribes. */
export function NewCalendarFeedDialog({ feed, onClose }: { feed: CreatedFeed; onClose: () => void }) {
  return (
    <SecretOnceDialog
      title="Your new calendar feed"
      intro={
        <>
          The feed <strong>{feed.name}</strong> is ready.
        </>
      }
      warning={
        <>
          Copy the address now: it will not be shown again. Anyone who has it can read your contracts&rsquo; renewal and
          expiration dates, so share it only with your calendar app.
        </>
      }
      secret={feed.url}
      secretTestId="new-calendar-feed-url"
      copyFailedText="Copying failed: the address is selected, press Ctrl+C."
      doneLabel="I have saved the address"
      onClose={onClose}
    >
      <p>
        <a className="btn" href={feed.webcalUrl}>
          Subscribe in your calendar app
        </a>
      </p>
      <p className="small muted">
        Or paste the address into Google Calendar (Other calendars → From URL), Outlook (Add calendar → Subscribe from web) or
        Apple Calendar (File → New Calendar Subscription). Calendar apps fetch it again every few hours.
      </p>
    </SecretOnceDialog>
  );
}
