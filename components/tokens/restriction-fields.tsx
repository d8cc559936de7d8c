'use client';

import { useId, type Ref } from 'react';
import { MAX_ALLOWED_ADDRESSES, PERMISSION_DESCRIPTIONS, PERMISSIONS, type Access } from '@/lib/key-restrictions';

/**
 * The fields of a key's restrictions (docs/keys.md), shared by the dialogs of API keys,
 * calendar feeds and webhook endpoints: access (everything / chosen), permissions and
 * allowed addresses. Each is a fieldset with a legend (or a labelled field) whose error,
 * when there is one, is announced (role="alert") and tied to it (aria-describedby).
 */

export interface OrganizationChoice {
  id: string;
  name: string;
  role: string;
}

/** The server's complaint about one field of the input (`data.details[].param`), if it named one. */
export function fieldErrorOf(error: unknown): { param: string; message: string } | undefined {
  const details = (error as { data?: { details?: { param?: string; message: string }[] } } | null)?.data?.details;
  const detail = details?.find((d) => typeof d.param === 'string' && d.param.length > 0);
  return detail ? { param: detail.param!.split('.')[0]!, message: detail.message } : undefined;
}

/** A field's error, announced when it appears (role="alert"); the field names it in aria-describedby. */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message ? (
    <span id={id} className="hint" role="alert" style={{ color: 'var(--danger)' }}>
      {message}
    </span>
  ) : null;
}

const fieldsetStyle = { border: 'none', padding: 0, margin: '0 0 1rem', minWidth: 0 } as const;
const legendStyle = { fontWeight: 600, fontSize: '0.9rem', padding: 0, marginBottom: '0.35rem' } as const;
const choiceStyle = { display: 'flex', gap: '0.5rem', alignItems: 'flex-start', fontWeight: 400, marginBottom: '0.35rem' } as const;

/** "Everything I can see" or a chosen set: my personal contracts and any of my organisations. */
export function AccessFieldset({
  value,
  onChange,
  organizations,
  error,
  firstInputRef,
  legend = 'What it may read',
}: {
  value: Access;
  onChange: (access: Access) => void;
  organizations: readonly OrganizationChoice[];
  error?: string;
  firstInputRef?: Ref<HTMLInputElement>;
  legend?: string;
}) {
  const id = useId();
  const chosen = value.kind === 'chosen' ? value : { kind: 'chosen' as const, personal: false, organizationIds: [] as string[] };
  const toggleOrganization = (orgId: string, on: boolean) =>
    onChange({ ...chosen, organizationIds: on ? [...chosen.organizationIds, orgId] : chosen.organizationIds.filter((o) => o !== orgId) });
  return (
    <fieldset style={fieldsetStyle} aria-describedby={`${id}-error`}>
      <legend style={legendStyle}>{legend}</legend>
      <label style={choiceStyle}>
        <input
          ref={firstInputRef}
          type="radio"
          name={`${id}-kind`}
          checked={value.kind === 'all'}
          onChange={() => onChange({ kind: 'all' })}
        />
        <span>
          Everything I can see <span className="hint">(my personal contracts and every organisation I belong to, now and later)</span>
        </span>
      </label>
      <label style={choiceStyle}>
        <input
          type="radio"
          name={`${id}-kind`}
          checked={value.kind === 'chosen'}
          onChange={() => onChange({ kind: 'chosen', personal: true, organizationIds: [] })}
        />
        <span>Only what I choose</span>
      </label>
      {value.kind === 'chosen' ? (
        <fieldset style={{ ...fieldsetStyle, marginLeft: '1.6rem', marginBottom: '0.35rem' }}>
          <legend className="visually-hidden">Contracts it may read</legend>
          <label style={choiceStyle}>
            <input type="checkbox" checked={value.personal} onChange={(e) => onChange({ ...chosen, personal: e.target.checked })} />
            <span>My personal contracts</span>
          </label>
          {organizations.map((org) => (
            <label key={org.id} style={choiceStyle}>
              <input
                type="checkbox"
                checked={value.organizationIds.includes(org.id)}
                onChange={(e) => toggleOrganization(org.id, e.target.checked)}
              />
              <span>{org.name}</span>
            </label>
          ))}
        </fieldset>
      ) : null}
      <FieldError id={`${id}-error`} message={error} />
    </fieldset>
  );
}

/** contracts:read and contracts:export, each with what it allows. */
export function PermissionsFieldset({
  value,
  onChange,
  error,
  firstInputRef,
}: {
  value: readonly string[];
  onChange: (permissions: string[]) => void;
  error?: string;
  firstInputRef?: Ref<HTMLInputElement>;
}) {
  const id = useId();
  return (
    <fieldset style={fieldsetStyle} aria-describedby={`${id}-error`}>
      <legend style={legendStyle}>Permissions</legend>
      {PERMISSIONS.map((permission, i) => (
        <label key={permission} style={choiceStyle}>
          <input
            ref={i === 0 ? firstInputRef : undefined}
            type="checkbox"
            checked={value.includes(permission)}
            onChange={(e) =>
              onChange(e.target.checked ? PERMISSIONS.filter((p) => p === permission || value.includes(p)) : value.filter((p) => p !== permission))
            }
          />
          <span>
            <code>{permission}</code> <span className="hint">{PERMISSION_DESCRIPTIONS[permission]}</span>
          </span>
        </label>
      ))}
      <FieldError id={`${id}-error`} message={error} />
    </fieldset>
  );
}

/** The entries of the addresses field: one per line (commas and spaces separate too). */
export function addressesOf(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** Allowed addresses, one per line; empty: any address. */
export function AllowedAddressesField({
  value,
  onChange,
  error,
  inputRef,
}: {
  value: string;
  onChange: (text: string) => void;
  error?: string;
  inputRef?: Ref<HTMLTextAreaElement>;
}) {
  const id = useId();
  const count = addressesOf(value).length;
  return (
    <div className="field">
      <label htmlFor={id}>Allowed addresses (optional)</label>
      <textarea
        id={id}
        ref={inputRef}
        rows={3}
        value={value}
        spellCheck={false}
        autoCapitalize="off"
        autoComplete="off"
        placeholder={'203.0.113.7\n198.51.100.0/24'}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint ${id}-error`}
        onChange={(e) => onChange(e.target.value)}
        style={{ fontFamily: 'var(--font-mono, monospace)', width: '100%' }}
      />
      <span id={`${id}-hint`} className="hint">
        IPv4 or IPv6 addresses and CIDR ranges, one per line, at most {MAX_ALLOWED_ADDRESSES} ({count} entered). Requests from any
        other address are refused. Leave empty to allow any address.
      </span>
      <FieldError id={`${id}-error`} message={error} />
    </div>
  );
}
