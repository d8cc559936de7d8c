import { and, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type PreparableQuery, type Statement } from '../../client';
import { contracts } from '../../schema';
import { accessibleTo, accessValues, ofOrganization, type CallerScope } from '../access';
import { exactKey, onRollingDate, visibleContractValue, visibleExpirationDate } from './expressions';

/**
 * Upcoming renewals (the next renewal: an evergreen contract at its next term),
 * expirations and notice deadlines of a caller's contracts, grouped by month, kind and
 * currency: the figures of the contracts page's chart.
 *
 * Dates and values are read through the visible* expressions, so only completed
 * contracts count (a pending contract's raw columns are not extracted data), exactly as
 * the API's filters and sorts read them. Those expressions are also the ones the
 * per-path expiration and renewal indexes hold, so each kind's date range can be served
 * from them.
 */

export type TimelineKind = 'renewal' | 'expiration' | 'notice';

export interface TimelineRow {
  /** YYYY-MM */
  month: string;
  kind: TimelineKind;
  /** null when extraction found no currency. */
  currency: string | null;
  /** Renewals, expirations or notice deadlines in that month with that currency. */
  count: number;
  /** How many of them have a value. */
  valued: number;
  /**
   * The sum of their values as exact decimal text (Postgres numeric), null when none has
   * one. Values of different currencies are never added: currency is a grouping key.
   */
  total: string | null;
}

export interface TimelineWindow {
  /** First day included, YYYY-MM-DD. */
  from: string;
  /** First day excluded, YYYY-MM-DD. */
  to: string;
  /** Only this organisation's contracts (the service checks membership first). */
  organizationId?: string;
}

/**
 * One statement: a UNION ALL of the renewals, expirations and notice deadlines in [from, to) over the
 * caller's access paths, grouped by (month, kind, currency). Its text depends only on
 * whether an organisation filter is given, so it is prepared once per shape.
 */
export function contractTimelineStatement(scope: CallerScope, window: TimelineWindow): Statement<TimelineRow[]> {
  const byOrganization = window.organizationId !== undefined;
  // The rolling dates' "today" (expressions.ts, isStale) is the window's first day.
  const values: Record<string, unknown> = byOrganization
    ? { organizationId: window.organizationId, from: window.from, to: window.to, today: window.from }
    : { ...accessValues(scope), from: window.from, to: window.to, today: window.from };

  const build = (db: Database) => {
    const access: SQL = byOrganization ? ofOrganization() : accessibleTo();
    // The kind is a literal in the SQL text, not a parameter: an untyped parameter in a
    // UNION's select list would leave Postgres guessing its type.
    const inWindow = (date: SQL) => sql`(${date} >= ${sql.placeholder('from')}::date AND ${date} < ${sql.placeholder('to')}::date)`;
    const events = (kind: TimelineKind, date: SQL, where: SQL) =>
      db
        .select({
          kind: sql<TimelineKind>`${sql.raw(`'${kind}'`)}::text`.as('kind'),
          month: sql<string>`to_char(${date}, 'YYYY-MM')`.as('month'),
          currency: sql<string | null>`${contracts.currency}`.as('currency'),
          value: sql<string | null>`${visibleContractValue}`.as('value'),
        })
        .from(contracts)
        .where(and(access, where));
    const upcoming = events('renewal', exactKey('next_renewal_date'), onRollingDate('next_renewal_date', inWindow))
      .unionAll(events('expiration', visibleExpirationDate, inWindow(visibleExpirationDate)))
      .unionAll(events('notice', exactKey('notice_deadline'), onRollingDate('notice_deadline', inWindow)))
      .as('upcoming');
    return db
      .select({
        month: upcoming.month,
        kind: upcoming.kind,
        currency: upcoming.currency,
        count: sql<number>`count(*)::int`,
        valued: sql<number>`count(${upcoming.value})::int`,
        total: sql<string | null>`sum(${upcoming.value})::text`,
      })
      .from(upcoming)
      .groupBy(upcoming.month, upcoming.kind, upcoming.currency)
      .orderBy(upcoming.month, upcoming.kind, upcoming.currency) as unknown as PreparableQuery<TimelineRow[]>;
  };
  return { name: `contracts.timeline ${byOrganization ? 'one-org' : 'scope'}`, build, values };
}

export function selectContractTimeline(db: Database, scope: CallerScope, window: TimelineWindow): Promise<TimelineRow[]> {
  return runStatement(db, contractTimelineStatement(scope, window));
}
