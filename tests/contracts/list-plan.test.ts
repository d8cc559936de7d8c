import { describe, expect, it } from 'vitest';
import { describePlan, figuresNeeded, planList, SEARCH_RANGE_ROWS, WINDOW_FEW_MATCHES, FEW_MATCHES, type Figures, type ListPlan, type ListRequest } from '@/db/queries/contracts/plan';
import type { FilterName } from '@/db/queries/contracts/filters';
import type { SortField } from '@/lib/contracts';

/**
 * The list's plan is a pure function of the request and the caller's figures
 * (db/queries/contracts/plan.ts): these tables hold each of its decisions without a
 * database. tests/db/walk-or-range, walk-or-window and not-completed-search hold the
 * statements each decision builds to the naive sort.
 */

const THREE_PATHS = { personal: true, organizationIds: ['o1', 'o2'] };
const ONE_ORG = { personal: false, organizationIds: ['o1'] };

function request(filters: FilterName[], sort: `${'-' | ''}${SortField}` = '-created_at', more: Partial<ListRequest> = {}): ListRequest {
  return { access: THREE_PATHS, filters, sort: { field: sort.replace('-', '') as SortField, descending: sort.startsWith('-') }, offset: 0, ...more };
}

describe('which figures a plan reads', () => {
  it.each<[string, ListRequest, ReturnType<typeof figuresNeeded>]>([
    ['no filter: none (no statement before the page)', request([]), {}],
    ['status, auto_renewal: none', request(['status', 'autoRenewal'], 'title', { status: 'completed' }), {}],
    ['a window sorted by its own date: none', request(['expirationFrom', 'expirationTo'], 'expiration_date'), {}],
    ['an expiration window sorted by created_at: none', request(['expirationFrom', 'expirationTo']), {}],
    ['a renewal window (the next renewal) sorted by created_at: the stale probe only', request(['renewalFrom', 'renewalTo']), { stale: true }],
    ['updated_since sorted by updated_at: none', request(['updatedSince'], '-updated_at'), {}],
    ['updated_since sorted by title: its range, capped', request(['updatedSince'], 'title'), { choice: { kind: 'range', few: FEW_MATCHES } }],
    [
      'an expiration window sorted by renewal date: the window counters',
      request(['expirationFrom', 'expirationTo'], '-renewal_date'),
      { choice: { kind: 'window', date: 'expiration', bounds: ['expirationFrom', 'expirationTo'], few: WINDOW_FEW_MATCHES } },
    ],
    [
      'a renewal window with updated_since sorted by expiration date: the window first',
      request(['renewalFrom', 'updatedSince'], 'expiration_date'),
      { choice: { kind: 'window', date: 'renewal', bounds: ['renewalFrom'], few: WINDOW_FEW_MATCHES }, stale: true },
    ],
    ['an expiration window with updated_since sorted by title: updated_since', request(['expirationTo', 'updatedSince'], 'title'), { choice: { kind: 'range', few: FEW_MATCHES } }],
    [
      'q with a window, any sort: the window, and the window for the capped count',
      request(['renewalTo', 'search'], 'title', { searchCap: 1000 }),
      { choice: { kind: 'window', date: 'renewal', bounds: ['renewalTo'], few: WINDOW_FEW_MATCHES }, searchRange: { kind: 'window', date: 'renewal', bounds: ['renewalTo'] }, stale: true },
    ],
    ['q alone, capped: the paths\' counters for the count only', request(['search'], 'title', { searchCap: 1000 }), { searchRange: { kind: 'path' } }],
    ['q alone, not capped: none', request(['search'], 'title'), {}],
    ['q with updated_since, capped: updated counters', request(['search', 'updatedSince'], 'updated_at', { searchCap: 5 }), { searchRange: { kind: 'updated' } }],
    ['q with a status other than completed sorted by title: the matches', request(['status', 'search'], 'title', { status: 'processing' }), { choice: { kind: 'matches', few: FEW_MATCHES } }],
    ['q with a status other than completed sorted by created_at: the matches too', request(['status', 'search'], '-created_at', { status: 'processing' }), { choice: { kind: 'matches', few: FEW_MATCHES } }],
    ['q with a status other than completed and updated_since: its range', request(['status', 'search', 'updatedSince'], 'title', { status: 'processing' }), { choice: { kind: 'range', few: FEW_MATCHES } }],
    ['q with status completed sorted by title: none', request(['status', 'search'], 'title', { status: 'completed' }), {}],
  ])('%s', (_, req, needs) => {
    expect(figuresNeeded(req)).toEqual(needs);
  });
});

describe('how each path is read', () => {
  const few = (n: number) => [n - 1, n, n + 1];
  it.each<[string, ListRequest, Figures, Partial<ListPlan['page']>]>([
    ['no filter: every path walks', request([]), {}, { reads: ['walk', 'walk', 'walk'], deferred: false, nullKeys: false }],
    ['updated_since by title: a path under FEW_MATCHES reads its range, at it or over walks', request(['updatedSince'], 'title'), { inRange: few(FEW_MATCHES) }, { reads: ['range', 'walk', 'walk'], deferred: false }],
    ['updated_since by title, none in a path: range', request(['updatedSince'], 'title'), { inRange: [0, 0, 5000] }, { reads: ['range', 'range', 'walk'] }],
    ['a window by the other date: under WINDOW_FEW_MATCHES reads it, deferred', request(['expirationFrom'], 'renewal_date'), { inRange: few(WINDOW_FEW_MATCHES) }, { reads: ['window', 'walk', 'walk'], deferred: true }],
    ['a window, every path large: all walk, still deferred', request(['expirationFrom'], 'renewal_date'), { inRange: [1e6, 1e6, 1e6] }, { reads: ['walk', 'walk', 'walk'], deferred: true }],
    ['q not completed by title: matches', request(['status', 'search'], 'title', { status: 'pending' }), { inRange: [3, 1000, 0] }, { reads: ['matches', 'walk', 'matches'], deferred: true }],
    ['q not completed by created_at, many matches: walks that index, deferred', request(['status', 'search'], 'created_at', { status: 'pending' }), { inRange: [1000, 1000, 5000] }, { reads: ['walk', 'walk', 'walk'], deferred: true }],
    ['status other than completed by an extracted sort: null keys', request(['status'], '-renewal_date', { status: 'processing' }), {}, { nullKeys: true }],
    ['status completed by an extracted sort: no null keys', request(['status'], '-renewal_date', { status: 'completed' }), {}, { nullKeys: false }],
    ['status other than completed by title: no null keys', request(['status'], 'title', { status: 'processing' }), {}, { nullKeys: false }],
    ['after a non-null key of a nullable sort: keys, then nulls', request([], 'contract_value', { cursor: { nullKey: false } }), {}, { cursor: 'after-key-then-nulls' }],
    ['after a null key: one range', request([], 'contract_value', { cursor: { nullKey: true } }), {}, { cursor: 'after-null-key' }],
    ['after a key of a sort that is never null: one range', request([], 'title', { cursor: { nullKey: false } }), {}, { cursor: 'after-key' }],
    ['one organisation: one path', request([], '-created_at', { access: ONE_ORG }), {}, { reads: ['walk'] }],
  ])('%s', (_, req, figures, page) => {
    expect(planList(req, figures).page).toMatchObject(page);
  });

  it('refuses to plan without the figures it needs, or with one per path missing', () => {
    expect(() => planList(request(['updatedSince'], 'title'))).toThrow(/one figure per access path/);
    expect(() => planList(request(['updatedSince'], 'title'), { inRange: [1, 2] })).toThrow(/one figure per access path \(3\)/);
  });
});

describe('how the total is counted', () => {
  it.each<[string, ListRequest, Figures, ListPlan['total']]>([
    ['no filter: counters', request([]), {}, { source: 'counters' }],
    ['status and auto_renewal: counters', request(['status', 'autoRenewal']), {}, { source: 'counters' }],
    ['a window with auto_renewal: date counters', request(['expirationFrom', 'expirationTo', 'autoRenewal']), {}, { source: 'date-counters' }],
    ['both windows: rows', request(['expirationFrom', 'renewalTo']), {}, { source: 'rows' }],
    ['updated_since with status: updated counters', request(['status', 'updatedSince'], '-updated_at'), {}, { source: 'updated-counters' }],
    ['updated_since with a window: rows', request(['expirationTo', 'updatedSince'], '-updated_at'), {}, { source: 'rows' }],
    ['dates_from (the calendar feed): rows', request(['datesFrom']), {}, { source: 'rows' }],
    ['q without a cap: rows', request(['search']), {}, { source: 'rows' }],
    [
      'q not completed, more matches than the cap in all: the cap, not exact, from the figures',
      request(['status', 'search'], 'title', { status: 'pending', searchCap: 1000 }),
      { inRange: [3, 999, 0], searchRange: [0, 0, 0] },
      { source: 'figures', total: 1000, exact: false },
    ],
    [
      'q not completed, under the cap: exact, no statement',
      request(['status', 'search'], 'title', { status: 'pending', searchCap: 1000 }),
      { inRange: [3, 40, 0], searchRange: [0, 0, 0] },
      { source: 'figures', total: 43, exact: true },
    ],
    [
      'q not completed, a path at FEW_MATCHES and the sum within the cap: the capped count decides',
      request(['status', 'search'], 'title', { status: 'pending', searchCap: 5000 }),
      { inRange: [3, FEW_MATCHES, 0], searchRange: [0, 0, 0] },
      { source: 'rows-capped', cap: 5000, range: { kind: 'path' }, reads: ['range', 'range', 'range'] },
    ],
    [
      'q capped: a path under SEARCH_RANGE_ROWS reads its range',
      request(['search'], '-created_at', { searchCap: 1000 }),
      { searchRange: [SEARCH_RANGE_ROWS - 1, SEARCH_RANGE_ROWS, 0] },
      { source: 'rows-capped', cap: 1000, range: { kind: 'path' }, reads: ['range', 'walk', 'range'] },
    ],
  ])('%s', (_, req, figures, total) => {
    expect(planList(req, figures).total).toEqual(total);
  });
});

describe('rows the job has not rolled forward yet', () => {
  it.each<[string, ListRequest, boolean]>([
    ['no filter, sort by created_at: none read apart', request([]), false],
    ['sort by the extracted renewal date: none', request([], 'renewal_date'), false],
    ['an expiration window: none', request(['expirationFrom', 'expirationTo'], 'expiration_date'), false],
    ['a renewal window (the next renewal): every path\'s stale rows too', request(['renewalFrom', 'renewalTo']), true],
    ['a notice window sorted by title: stale rows too', request(['noticeFrom'], 'title'), true],
    ['sort by next renewal, no filter: stale rows too', request([], 'next_renewal_date'), true],
    ['sort by notice deadline descending: stale rows too', request([], '-notice_deadline'), true],
    ['status completed with a notice window: stale rows too', request(['status', 'noticeTo'], '-created_at', { status: 'completed' }), true],
    ['a status other than completed sorted by next renewal: none (a stale row is completed)', request(['status'], 'next_renewal_date', { status: 'pending' }), false],
  ])('%s', (_, req, stale) => {
    const figures = figuresNeeded(req).choice ? { inRange: [0, 0, 0] } : {};
    expect(figuresNeeded(req).stale ?? false).toBe(stale);
    expect(planList(req, figures).page.stale).toBe(stale);
    // The figures' probe found none in any path: no stale branch (the job ran today).
    expect(planList(req, { ...figures, staleRows: false }).page.stale).toBe(false);
  });

  it('reads a notice window sorted by expiration date from the window, and says that stale rows are read apart', () => {
    const req = request(['noticeFrom', 'noticeTo'], 'expiration_date');
    expect(figuresNeeded(req)).toEqual({ choice: { kind: 'window', date: 'notice', bounds: ['noticeFrom', 'noticeTo'], few: WINDOW_FEW_MATCHES }, stale: true });
    const plan = planList(req, { inRange: [10, WINDOW_FEW_MATCHES, 0], staleRows: true });
    expect(plan.page.reads).toEqual(['window', 'walk', 'window']);
    expect(plan.total).toEqual({ source: 'date-counters' });
    expect(describePlan(plan, ['personal', 'o1', 'o2'])).toContain(
      'page, every path: also its evergreen contracts not rolled forward yet (the rolling index, dates by the rule), merged in order',
    );
  });
});

describe('the plan in words', () => {
  it('names every path\'s read, the figures behind it and the total', () => {
    const plan = planList(request(['updatedSince', 'search'], 'title', { searchCap: 1000, cursor: { nullKey: false } }), { inRange: [4, 1000, 0], searchRange: [10, 50_000, 0] });
    expect(describePlan(plan, ['personal', 'o1', 'o2'])).toEqual([
      'filters: updatedSince, search; sort: title',
      'figures: each path\'s rows updated since updated_since, counted up to 1,000: 4, 1000, 0',
      'page, path personal: reads its rows updated since updated_since (fewer than 1,000) and sorts them',
      'page, path o1: walks its title index',
      'page, path o2: reads its rows updated since updated_since (fewer than 1,000) and sorts them',
      'after the cursor: one range (after-key)',
      'total: the matches counted up to the cap (total_exact: false beyond)',
      'total figures: each path\'s rows in its updated_since range: 10, 50000, 0',
      'total, path personal: reads that range (under 20,000 rows), word tested on each row',
      'total, path o1: walks in list order (the trigram index may find a rare word)',
      'total, path o2: reads that range (under 20,000 rows), word tested on each row',
    ]);
  });
});
