'use client';

import { useId, useState } from 'react';
import { ROLL_GRACE_CHOICES } from '@/lib/key-restrictions';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY, TOKEN_NAME_MAX_LENGTH } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { CreateDialog, FormDialog, ShownNextToField } from './create-dialog';
import { useKeyRestrictions } from './key-restrictions-state';
import { AccessFieldset, AllowedAddressesField, PermissionsFieldset, type OrganizationChoice } from './restriction-fields';
import { SecretOnceDialog } from './secret-once-dialog';
import { DateOnly } from './time';
import type { TokenRow } from './types';

/**
 * The dialogs of an API key's life (docs/keys.md): create (owner, access, permissions,
 * allowed addresses), edit its restrictions, roll it (and show the new secret once), and
 * the short readable form of its restrictions in the lists. Used by Settings → API Keys
 * and by an organisation's page.
 */

const EXPIRY_LABELS: Record<string, string> = { '7': '7 days', '30': '30 days', '90': '90 days', '365': '1 year', never: 'Never' };

const GRACE_LABELS: Record<(typeof ROLL_GRACE_CHOICES)[number], string> = {
  0: 'Now',
  1: 'In 1 hour',
  24: 'In 24 hours',
  168: 'In 7 days',
};

export interface CreatedKey {
  name: string;
  key: string;
  /** An organisation's key: the organisation's name (the key is listed on its page). */
  organizationName?: string;
  /** After a roll: when the previous secret stops working (null: already stopped). */
  previousExpiresAt?: string | null;
  rolled?: boolean;
}

/** The restrictions of a key in a list: the short form, and why an organisation no longer reads it. */
export function KeyRestrictions({ row }: { row: TokenRow }) {
  return (
    <div className="small" data-testid="key-restrictions">
      <span>{row.restrictions ?? ''}</span>
      {row.previousExpiresAt ? (
        <div className="muted">
          Previous secret works until <DateOnly iso={row.previousExpiresAt} fallback="" />{' '}
          {new Date(row.previousExpiresAt).toISOString().slice(11, 16)} UTC
        </div>
      ) : null}
      {(row.removedFrom ?? []).map((removal) => (
        <div key={removal.organizationId} className="muted" data-testid="key-removed-from">
          {removal.organizationName} removed its access{removal.removedBy ? ` (${removal.removedBy})` : ''} on{' '}
          <DateOnly iso={removal.removedAt} fallback="" />: the key no longer reads {removal.organizationName}&rsquo;s contracts.
        </div>
      ))}
    </div>
  );
}

/**
 * Creates a key. `organizations` are the user's (access choices); those where the user is
 * an owner or admin are owner choices too. `fixedOrganization`: the organisation page's
 * dialog, which creates that organisation's key only.
 */
export function CreateKeyDialog({
  organizations,
  fixedOrganization,
  onClose,
  onCreated,
}: {
  organizations: readonly OrganizationChoice[];
  fixedOrganization?: { id: string; name: string };
  onClose: () => void;
  onCreated: (created: CreatedKey) => Promise<void>;
}) {
  const [expiry, setExpiry] = useState<string>(String(DEFAULT_API_KEY_EXPIRY));
  const [owner, setOwner] = useState<string>(fixedOrganization?.id ?? 'me');
  const restrictions = useKeyRestrictions();
  const expiryId = useId();
  const ownerId = useId();
  const adminOf = organizations.filter((o) => o.role === 'owner' || o.role === 'admin');
  const ownerOrganization = owner === 'me' ? undefined : (fixedOrganization ?? adminOf.find((o) => o.id === owner));

  return (
    <CreateDialog
      title={fixedOrganization ? `Create a key of ${fixedOrganization.name}` : 'Create API key'}
      submitLabel="Create key"
      nameMaxLength={TOKEN_NAME_MAX_LENGTH}
      namePlaceholder="e.g. Nightly ETL"
      nameHint={`What the key is for, so you recognise it later (1 to ${TOKEN_NAME_MAX_LENGTH} characters).`}
      onClose={onClose}
      onSubmit={async (name) => {
        if (!restrictions.check({ checkAccess: ownerOrganization === undefined })) throw new ShownNextToField('restrictions');
        const expiresInDays = expiry === 'never' ? null : (Number(expiry) as 7 | 30 | 90 | 365);
        const result = await trpc.apiKeys.create
          .mutate({
            name,
            expiresInDays,
            owner: ownerOrganization ? { kind: 'organization', organizationId: ownerOrganization.id } : { kind: 'user' },
            ...(ownerOrganization ? {} : { access: restrictions.access }),
            permissions: restrictions.permissions,
            allowedAddresses: restrictions.allowedAddresses(),
          })
          .catch((e: unknown) => restrictions.fail(e));
        await onCreated({ name: result.token.name, key: result.secret, organizationName: ownerOrganization?.name });
      }}
    >
      <div className="field">
        <label htmlFor={expiryId}>Expires after</label>
        <select id={expiryId} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
          {API_KEY_EXPIRY_CHOICES.map((choice) => {
            const value = choice === null ? 'never' : String(choice);
            return (
              <option key={value} value={value}>
                {EXPIRY_LABELS[value]}
              </option>
            );
          })}
        </select>
      </div>
      {!fixedOrganization && adminOf.length > 0 ? (
        <div className="field">
          <label htmlFor={ownerId}>Owner</label>
          <select id={ownerId} value={owner} onChange={(e) => setOwner(e.target.value)} aria-describedby={`${ownerId}-hint`}>
            <option value="me">Me (a personal key)</option>
            {adminOf.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name} (an organisation key)
              </option>
            ))}
          </select>
          <span id={`${ownerId}-hint`} className="hint">
            An organisation key reads that organisation&rsquo;s contracts only, keeps working when you leave it, and is listed for
            its owners and admins on the organisation&rsquo;s page.
          </span>
        </div>
      ) : null}
      <RestrictionFields restrictions={restrictions} organizations={organizations} organizationName={ownerOrganization?.name} />
    </CreateDialog>
  );
}

/**
 * A key's restrictions as fields: what it may read (fixed for an organisation's key, named
 * by `organizationName`), its permissions and its allowed addresses.
 */
function RestrictionFields({
  restrictions,
  organizations,
  organizationName,
}: {
  restrictions: ReturnType<typeof useKeyRestrictions>;
  organizations: readonly OrganizationChoice[];
  organizationName: string | undefined;
}) {
  return (
    <>
      {organizationName !== undefined ? (
        <p className="small muted">
          It reads <strong>{organizationName}</strong>&rsquo;s contracts only.
        </p>
      ) : (
        <AccessFieldset
          value={restrictions.access}
          onChange={restrictions.setAccess}
          organizations={organizations}
          error={restrictions.errors.access}
          firstInputRef={restrictions.refs.accessRef}
        />
      )}
      <PermissionsFieldset
        value={restrictions.permissions}
        onChange={restrictions.setPermissions}
        error={restrictions.errors.permissions}
        firstInputRef={restrictions.refs.permissionsRef}
      />
      <AllowedAddressesField
        value={restrictions.addresses}
        onChange={restrictions.setAddresses}
        error={restrictions.errors.allowedAddresses}
        inputRef={restrictions.refs.addressesRef}
      />
    </>
  );
}

/** Edits a key's restrictions; an organisation's key keeps its access (its organisation). */
export function EditRestrictionsDialog({
  row,
  organizations,
  onClose,
  onSaved,
}: {
  row: TokenRow;
  organizations: readonly OrganizationChoice[];
  onClose: () => void;
  onSaved: () => Promise<void>;
}) {
  const restrictions = useKeyRestrictions({ access: row.access, permissions: row.permissions, allowedAddresses: row.allowedAddresses });
  const organizationKey = row.organizationName !== undefined;
  return (
    <FormDialog
      title={`Edit restrictions of “${row.name}”`}
      submitLabel="Save restrictions"
      pendingLabel="Saving…"
      onClose={onClose}
      onSubmit={async () => {
        if (!restrictions.check({ checkAccess: !organizationKey })) throw new ShownNextToField('restrictions');
        try {
          await trpc.apiKeys.editRestrictions.mutate({
            id: row.id,
            ...(organizationKey ? {} : { access: restrictions.access }),
            permissions: restrictions.permissions,
            allowedAddresses: restrictions.allowedAddresses(),
          });
        } catch (e) {
          restrictions.fail(e);
        }
        await onSaved();
      }}
    >
      <p className="small muted">The change applies from the key&rsquo;s next request; its secret stays the same.</p>
      <RestrictionFields restrictions={restrictions} organizations={organizations} organizationName={row.organizationName} />
    </FormDialog>
  );
}

/** Roll: when the old secret stops (now, 1 hour, 24 hours, 7 days), then the new secret once. */
export function RollKeyFlow({ row, onClose, onRolled }: { row: TokenRow; onClose: () => void; onRolled: () => Promise<void> }) {
  const [grace, setGrace] = useState<(typeof ROLL_GRACE_CHOICES)[number]>(24);
  const [rolled, setRolled] = useState<CreatedKey | null>(null);
  const name = useId();
  if (rolled) return <NewKeyDialog created={rolled} onClose={onClose} />;
  return (
    <FormDialog
      title={`Roll “${row.name}”?`}
      submitLabel="Roll key"
      pendingLabel="Rolling…"
      onClose={onClose}
      onSubmit={async () => {
        const result = await trpc.apiKeys.roll.mutate({ id: row.id, graceHours: grace });
        const previous = (result.token as { previousExpiresAt?: Date | string | null }).previousExpiresAt;
        setRolled({
          name: result.token.name,
          key: result.secret,
          rolled: true,
          previousExpiresAt: previous ? new Date(previous).toISOString() : grace === 0 ? null : new Date(Date.now() + grace * 3_600_000).toISOString(),
        });
        await onRolled();
      }}
    >
      <p>
        A new secret replaces <code>{row.hint}</code>. The key keeps its name, restrictions and limits; the new secret is shown once.
      </p>
      <fieldset style={{ border: 'none', padding: 0, margin: 0 }}>
        <legend style={{ fontWeight: 600, fontSize: '0.9rem', padding: 0, marginBottom: '0.35rem' }}>The old secret stops working</legend>
        {ROLL_GRACE_CHOICES.map((hours) => (
          <label key={hours} style={{ display: 'flex', gap: '0.5rem', alignItems: 'center', fontWeight: 400, marginBottom: '0.35rem' }}>
            <input type="radio" name={name} checked={grace === hours} onChange={() => setGrace(hours)} autoFocus={hours === grace} />
            <span>{GRACE_LABELS[hours]}</span>
          </label>
        ))}
      </fieldset>
    </FormDialog>
  );
}

/** A new key's (or a rolled key's new) secret, the only time it exists in full. */
export function NewKeyDialog({ created, onClose }: { created: CreatedKey; onClose: () => void }) {
  return (
    <SecretOnceDialog
      title={created.rolled ? 'The new secret of your key' : 'Your new API key'}
      intro={
        created.rolled ? (
          <>
            The key <strong>{created.name}</strong> has a new secret.{' '}
            {created.previousExpiresAt ? (
              <>
                The old one keeps working until <time dateTime={created.previousExpiresAt}>{created.previousExpiresAt.slice(0, 16).replace('T', ' ')} UTC</time>.
              </>
            ) : (
              <>The old one no longer works.</>
            )}
          </>
        ) : (
          <>
            The key <strong>{created.name}</strong> is ready.
            {created.organizationName ? <> It belongs to {created.organizationName} and is listed on the organisation&rsquo;s page.</> : null}
          </>
        )
      }
      warning="Copy it now and keep it somewhere safe. It will not be shown again: we only store a hash of it."
      secret={created.key}
      secretTestId="new-api-key"
      copyFailedText="Copying failed: the key is selected, press Ctrl+C."
      doneLabel="I have saved my key"
      onClose={onClose}
    >
      <p className="small muted">
        Use it in the <code>X-API-Key</code> header or as <code>Authorization: Bearer</code>. Never commit it to version control.
      </p>
    </SecretOnceDialog>
  );
}
