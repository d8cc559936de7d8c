'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useTransition, type CSSProperties, type FormEvent, type ReactNode } from 'react';
import type { ContractStatus, SortValue } from '@/lib/contracts';
import { SORT_GROUPS, STATUS_LABELS } from './format';
import { DEFAULT_PAGE_SIZE, LIST_PARAMS, listHref, PAGE_SIZES, type ListParam, type ParamError, type ParamValues } from '@/lib/contract-list-url';
import styles from './contracts.module.css';

/**
 * The filters of the contracts list: a plain GET form with the API's parameter names, so
 * that it works without JavaScript and its URL can be shared. With JavaScript, submitting
 * leaves out empty fields and defaults, which keeps shared URLs short, and navigates
 * without a full reload.
 */

const WITHIN_PRESETS = [30, 60, 90, 365];
const DATES: ListParam[] = ['expires_after', 'expires_before', 'renews_after', 'renews_before', 'notice_after', 'notice_before'];
const ADVANCED: ListParam[] = [...DATES, 'updated_since'];
const DATES_NOTE = 'filter-dates-note';

interface ControlProps {
  id: string;
  name: ListParam;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}

export interface FilterFormProps {
  /** The value each field shows: the applied parameter, or what was typed when refused. */
  values: ParamValues;
  errors: ParamError[];
  organizations: { id: string; name: string }[];
  /** The API's default order, which a submitted form leaves out of the URL. */
  defaultSort: SortValue;
  /** Where "Reset filters" goes; absent when nothing is filtered. */
  resetHref?: string;
}

// The keys of the labels are the statuses (the label map is typed to have every one).
const STATUSES = Object.keys(STATUS_LABELS) as ContractStatus[];

export function FilterForm({ values, errors, organizations, defaultSort, resetHref }: FilterFormProps) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const errorOf = new Map(errors.map((e) => [e.param, e.message]));
  const advancedOpen = ADVANCED.some((p) => values[p] !== undefined || errorOf.has(p));

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const values: ParamValues = {};
    for (const [name, value] of new FormData(event.currentTarget)) {
      if (typeof value !== 'string' || value === '' || !LIST_PARAMS.includes(name as ListParam)) continue;
      if (name === 'sort' && value === defaultSort) continue;
      if (name === 'limit' && value === String(DEFAULT_PAGE_SIZE)) continue;
      values[name as ListParam] = value;
    }
    // A new set of filters starts at the first page (the form has no offset field).
    startTransition(() => router.push(listHref(values)));
  }

  /** Props that tie a control to its label's field, its hint and, when refused, its error. */
  const control = (name: ListParam): ControlProps => ({
    id: `filter-${name}`,
    name,
    'aria-invalid': errorOf.has(name) ? true : undefined,
    'aria-describedby':
      [errorOf.has(name) ? `filter-${name}-error` : '', hints[name] ? `filter-${name}-hint` : '', DATES.includes(name) ? DATES_NOTE : '']
        .filter(Boolean)
        .join(' ') || undefined,
  });

  return (
    <form className={styles.filters} method="get" action="/contracts" onSubmit={submit} aria-label="Filter contracts" aria-busy={pending}>
      {errors.length > 0 ? (
        <div className="alert alert-error" role="alert">
          <strong>
            {errors.length === 1 ? 'One parameter was ignored' : `${errors.length} parameters were ignored`}; the list below
            applies the others.
          </strong>
          <ul className={styles.errorList}>
            {errors.map((e) => (
              <li key={e.param} id={`filter-${e.param}-error`}>
                {e.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}

      <div className={styles.filterGrid}>
        <Field name="q" label="Search" span={organizations.length > 0 ? 6 : 9}>
          <input {...control('q')} type="search" defaultValue={values.q ?? ''} placeholder="Title, provider or client" maxLength={200} />
        </Field>
        <Field name="status" label="Status">
          <select {...control('status')} defaultValue={values.status ?? ''}>
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </Field>
        {organizations.length > 0 ? (
          <Field name="organization_id" label="Organisation">
            <select {...control('organization_id')} defaultValue={values.organization_id ?? ''}>
              <option value="">All contracts</option>
              {organizations.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </Field>
        ) : null}
        <Field name="expiring_within_days" label="Expiring within" span={2}>
          <WithinSelect control={control('expiring_within_days')} value={values.expiring_within_days} />
        </Field>
        <Field name="renewing_within_days" label="Renewing within" span={2}>
          <WithinSelect control={control('renewing_within_days')} value={values.renewing_within_days} />
        </Field>
        <Field name="notice_within_days" label="Act by within" span={2}>
          <WithinSelect control={control('notice_within_days')} value={values.notice_within_days} />
        </Field>
        <Field name="auto_renewal" label="Auto-renewal">
          <select {...control('auto_renewal')} defaultValue={values.auto_renewal ?? ''}>
            <option value="">Any</option>
            <option value="true">Renews automatically</option>
            <option value="false">Does not renew automatically</option>
          </select>
        </Field>
        <Field name="sort" label="Sort by">
          <select {...control('sort')} defaultValue={values.sort ?? defaultSort}>
            {SORT_GROUPS.map((group) => (
              <optgroup key={group.label} label={group.label}>
                {group.options.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <Field name="limit" label="Per page" span={2}>
          <select {...control('limit')} defaultValue={values.limit ?? String(DEFAULT_PAGE_SIZE)}>
            {withCurrent(PAGE_SIZES.map(String), values.limit).map((n) => (
              <option key={n} value={n}>
                {n} contracts
              </option>
            ))}
          </select>
        </Field>
      </div>

      <details className={styles.advanced} open={advancedOpen}>
        <summary>Date ranges and sync</summary>
        <div className={styles.filterGrid}>
          <Field name="expires_after" label="Expires after" span={2}>
            <input {...control('expires_after')} type="date" defaultValue={values.expires_after ?? ''} />
          </Field>
          <Field name="expires_before" label="Expires before" span={2}>
            <input {...control('expires_before')} type="date" defaultValue={values.expires_before ?? ''} />
          </Field>
          <Field name="renews_after" label="Renews after" span={2}>
            <input {...control('renews_after')} type="date" defaultValue={values.renews_after ?? ''} />
          </Field>
          <Field name="renews_before" label="Renews before" span={2}>
            <input {...control('renews_before')} type="date" defaultValue={values.renews_before ?? ''} />
          </Field>
          <Field name="notice_after" label="Act by after" span={2}>
            <input {...control('notice_after')} type="date" defaultValue={values.notice_after ?? ''} />
          </Field>
          <Field name="notice_before" label="Act by before" span={2}>
            <input {...control('notice_before')} type="date" defaultValue={values.notice_before ?? ''} />
          </Field>
          <Field name="updated_since" label="Updated since" span={4}>
            <input
              {...control('updated_since')}
              type="text"
              defaultValue={values.updated_since ?? ''}
              placeholder="2026-11-01T00:00:00Z"
              spellCheck={false}
              autoComplete="off"
            />
          </Field>
        </div>
        <p className={styles.advancedNote} id={DATES_NOTE}>
          Dates are exclusive: “Expires after 31 Mar 2027” starts on 1 April. “Renews” is the next renewal (a contract that
          renews automatically, moved on by its term); “Act by” is the last day notice stops it. Date and auto-renewal
          filters read extracted data, which only completed contracts have.
        </p>
      </details>

      <div className={styles.formActions}>
        <button type="submit" className="btn btn-primary" disabled={pending}>
          {pending ? 'Applying…' : 'Apply filters'}
        </button>
        {resetHref ? (
          <Link className="btn" href={resetHref}>
            Reset filters
          </Link>
        ) : null}
      </div>
    </form>
  );
}

const hints: Partial<Record<ListParam, string>> = {
  updated_since: 'ISO 8601 with a time zone, for incremental sync.',
};

/** A labelled control; `span` is its width in the form's 12-column grid. */
function Field({ name, label, span = 3, children }: { name: ListParam; label: string; span?: number; children: ReactNode }) {
  return (
    <div className={styles.field} style={{ '--span': span } as CSSProperties}>
      <label htmlFor={`filter-${name}`}>{label}</label>
      {children}
      {hints[name] ? (
        <span className={styles.hint} id={`filter-${name}-hint`}>
          {hints[name]}
        </span>
      ) : null}
    </div>
  );
}

/** A preset window ("90 days") plus "Any time"; a window from a shared URL that is not a preset is kept. */
function WithinSelect({ control, value }: { control: ControlProps; value: string | undefined }) {
  return (
    <select {...control} defaultValue={value ?? ''}>
      <option value="">Any time</option>
      {withCurrent(WITHIN_PRESETS.map(String), value).map((n) => (
        <option key={n} value={n}>
          {n === '0' ? 'Today' : n === '1' ? 'Today or tomorrow' : `Next ${n} days`}
        </option>
      ))}
    </select>
  );
}

/** The options, plus the current value in numeric order when it is not one of them. */
function withCurrent(options: string[], current: string | undefined): string[] {
  if (current === undefined || options.includes(current)) return options;
  return [...options, current].sort((a, b) => Number(a) - Number(b));
}
