import { SORT_VALUES } from '@/lib/contracts';

/**
 * The list shapes of issue 14's targets, shared by `npm run db:explain -- --summary`
 * (Postgres time) and `npm run bench:shapes` (end-to-end over HTTP), so that both tables
 * name the same queries. `{org}` becomes the caller's first organisation.
 */

/** The single filters (each alone, with every sort in both directions, and unsorted). */
export const SINGLE_FILTERS = [
  '',
  'status=completed',
  'organization_id={org}',
  'expiring_within_days=90',
  'renewing_within_days=90',
  'notice_within_days=90',
  'updated_since=2026-09-01T00:00:00Z',
  'auto_renewal=true',
  'q=initech',
];

/** Combinations of filters (bounded, not held to the single-filter target). */
export const COMBINATIONS = [
  'status=completed&organization_id={org}',
  'auto_renewal=true&expiring_within_days=365&sort=expiration_date',
  'q=initech&status=completed&sort=-contract_value',
  'organization_id={org}&renewing_within_days=90&sort=renewal_date',
  'notice_within_days=60&auto_renewal=true&sort=notice_deadline',
  'notice_before=2026-11-22&renews_after=2026-11-21&sort=-notice_deadline',
  'expiring_within_days=90&sort=-contract_value',
  'q=no-such-word-anywhere',
  'q=%23123457',
];

/** Every single-filter shape: each filter unsorted and with each sort. */
export function singleFilterShapes(): string[] {
  return SINGLE_FILTERS.flatMap((filter) => ['', ...SORT_VALUES.map((s) => `sort=${s}`)].map((sort) => [filter, sort].filter(Boolean).join('&')));
}

/** Sorts that pair with the filters below: the default order, and two that walk other indexes. */
const PAIR_SORTS = ['', 'sort=-renewal_date', 'sort=title'];

/**
 * Every pair of two different single filters (the windows and updated_since with a status
 * that is not `completed` too, which no shown date matches), each with PAIR_SORTS: 105
 * shapes that bound what two filters cost together.
 */
export function filterPairShapes(): string[] {
  const filters = [...SINGLE_FILTERS.filter(Boolean), 'status=processing'];
  const pairs: string[] = [];
  for (let i = 0; i < filters.length; i++) {
    for (let j = i + 1; j < filters.length; j++) {
      const [a, b] = [filters[i]!, filters[j]!];
      if (a.startsWith('status=') && b.startsWith('status=')) continue;
      for (const sort of PAIR_SORTS) pairs.push([a, b, sort].filter(Boolean).join('&'));
    }
  }
  return pairs;
}
