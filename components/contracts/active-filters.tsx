import Link from 'next/link';
import type { ContractStatus } from '@/lib/contracts';
import { formatDate, formatDateTime, STATUS_LABELS } from './format';
import { FILTER_PARAMS, listHref, without, type ListParam, type ParamValues } from '@/lib/contract-list-url';
import styles from './contracts.module.css';

export interface ActiveFilter {
  param: ListParam;
  label: string;
}

const within = (verb: string, days: string) =>
  days === '0' ? `${verb} today` : `${verb} within ${days} ${days === '1' ? 'day' : 'days'}`;

/** The applied filters in words, in the form's order. */
export function describeFilters(applied: ParamValues, organizationName: (id: string) => string): ActiveFilter[] {
  const label = (param: ListParam, value: string): string => {
    switch (param) {
      case 'q':
        return `Search: “${value}”`;
      case 'status':
        return `Status: ${STATUS_LABELS[value as ContractStatus]}`;
      case 'organization_id':
        return `Organisation: ${organizationName(value)}`;
      case 'expiring_within_days':
        return within('Expiring', value);
      case 'renewing_within_days':
        return within('Renewing', value);
      case 'notice_within_days':
        return within('Act by', value);
      case 'expires_after':
        return `Expires after ${formatDate(value)}`;
      case 'expires_before':
        return `Expires before ${formatDate(value)}`;
      case 'renews_after':
        return `Renews after ${formatDate(value)}`;
      case 'renews_before':
        return `Renews before ${formatDate(value)}`;
      case 'notice_after':
        return `Act by after ${formatDate(value)}`;
      case 'notice_before':
        return `Act by before ${formatDate(value)}`;
      case 'auto_renewal':
        return value === 'true' ? 'Renews automatically' : 'Does not renew automatically';
      case 'updated_since':
        return `Updated since ${formatDateTime(value)}`;
      default:
        return `${param}: ${value}`;
    }
  };
  return FILTER_PARAMS.flatMap((param) => {
    const value = applied[param];
    return value === undefined ? [] : [{ param, label: label(param, value) }];
  });
}

/** Each applied filter as a link that removes it (and keeps the others). */
export function ActiveFilters({ filters, applied }: { filters: ActiveFilter[]; applied: ParamValues }) {
  if (filters.length === 0) return null;
  return (
    <ul className={styles.chips} aria-label="Applied filters">
      {filters.map((f) => (
        <li key={f.param}>
          <Link className={styles.chip} href={listHref(without(applied, f.param))} aria-label={`Remove filter: ${f.label}`}>
            {f.label}
            <span aria-hidden="true" className={styles.chipRemove}>
              ×
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}
