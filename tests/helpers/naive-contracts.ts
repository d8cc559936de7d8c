import type { ContractFilters } from '@/db/queries/contracts/filters';
import type { NewContract } from '@/db/schema';
import type { SortField } from '@/lib/contracts';
import { renewalDecision } from '@/lib/renewal-dates';

/**
 * The list's order and filters computed in plain TypeScript over the rows a test inserted:
 * the answer a statement's page must equal. Written from the API's rules, not from the SQL.
 */

const clockToday = () => new Date().toISOString().slice(0, 10);

/** The renewal decision of lib/renewal-dates.ts (the rule the API documents) on `today`. */
function decision(r: NewContract, today: string) {
  return renewalDecision({ renewalDate: r.renewalDate ?? null, autoRenewal: r.autoRenewal ?? null, renewalTerm: r.renewalTerm ?? null, noticePeriod: r.noticePeriod ?? null }, today);
}

/** The key the API sorts by: extracted data only once completed; a title case-insensitively; the renewal decision on `today`. */
export function naiveSortKey(r: NewContract, field: SortField, today: string = clockToday()): string | number | null {
  const shown = <T>(v: T | null | undefined) => (r.status === 'completed' ? (v ?? null) : null);
  switch (field) {
    case 'created_at':
      return r.createdAt!.toISOString();
    case 'updated_at':
      return r.updatedAt!.toISOString();
    case 'expiration_date':
      return shown(r.expirationDate);
    case 'renewal_date':
      return shown(r.renewalDate);
    case 'next_renewal_date':
      return shown(decision(r, today).nextRenewalDate);
    case 'notice_deadline':
      return shown(decision(r, today).noticeDeadline);
    case 'contract_value':
      return shown(r.contractValue);
    case 'title':
      return r.title.toLowerCase();
  }
}

/**
 * What q searches, as the API describes it: the title, then the parties once extracted,
 * case-insensitively (ASCII here: the tests' titles and parties are ASCII; the database's
 * own case rules are held to ILIKE's in tests/db/search-text.test.ts).
 */
function naiveSearchText(r: NewContract): string {
  const parties = r.status === 'completed' ? `${r.provider ?? ''}\n${r.client ?? ''}` : '';
  return `${r.title}\n${parties}`.toLowerCase();
}

/** The filters these tests use (organisation, status, auto_renewal, updated_since, the date windows, q); others throw. */
export function naiveMatches(r: NewContract, f: ContractFilters): boolean {
  const modelled = new Set(['organizationId', 'status', 'autoRenewal', 'updatedSince', 'expirationFrom', 'expirationTo', 'renewalFrom', 'renewalTo', 'noticeFrom', 'noticeTo', 'search', 'today']);
  const other = Object.keys(f).find((name) => f[name as keyof ContractFilters] !== undefined && !modelled.has(name));
  if (other) throw new Error(`naiveMatches does not model the filter ${other}`);
  if (f.organizationId !== undefined && r.organizationId !== f.organizationId) return false;
  if (f.status !== undefined && r.status !== f.status) return false;
  // auto_renewal is shown (and matched) only once completed.
  if (f.autoRenewal !== undefined && (r.status !== 'completed' || (r.autoRenewal ?? null) !== f.autoRenewal)) return false;
  if (f.updatedSince !== undefined && r.updatedAt! < new Date(f.updatedSince)) return false;
  const today = f.today ?? clockToday();
  const e = naiveSortKey(r, 'expiration_date') as string | null;
  // The renewal windows read the next renewal (an evergreen contract rolled forward).
  const n = naiveSortKey(r, 'next_renewal_date', today) as string | null;
  const d = naiveSortKey(r, 'notice_deadline', today) as string | null;
  if (f.noticeFrom !== undefined && (d === null || d < f.noticeFrom)) return false;
  if (f.noticeTo !== undefined && (d === null || d > f.noticeTo)) return false;
  if (f.expirationFrom !== undefined && (e === null || e < f.expirationFrom)) return false;
  if (f.expirationTo !== undefined && (e === null || e > f.expirationTo)) return false;
  if (f.renewalFrom !== undefined && (n === null || n < f.renewalFrom)) return false;
  if (f.renewalTo !== undefined && (n === null || n > f.renewalTo)) return false;
  if (f.search !== undefined && !naiveSearchText(r).includes(f.search.toLowerCase())) return false;
  return true;
}

/** The ids of the matching rows sorted by key (nulls last both ways), then id, in the sort's direction. */
export function naiveOrder(rows: readonly NewContract[], f: ContractFilters, field: SortField, descending: boolean): string[] {
  const sign = descending ? -1 : 1;
  return rows
    .filter((r) => naiveMatches(r, f))
    .sort((a, b) => {
      const [x, y] = [naiveSortKey(a, field, f.today), naiveSortKey(b, field, f.today)];
      if (x !== y) {
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * sign;
      }
      return (a.id! < b.id! ? -1 : 1) * sign;
    })
    .map((r) => r.id!);
}
