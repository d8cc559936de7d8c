import { eq, sql, type SQL } from 'drizzle-orm';
import type { ContractStatus } from '@/lib/contracts';
import { contracts } from '../../schema';
import { containsPattern, searchText, visibleExpirationDate, visibleRenewalDate } from './expressions';

/** What a list, a count or an export keeps, on top of the caller's access. */
export interface ContractFilters {
  status?: ContractStatus;
  /** Must be one of the scope's organisations; the service checks that first. */
  organizationId?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the expiration date the API shows. */
  expirationFrom?: string;
  expirationTo?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the renewal date the API shows. */
  renewalFrom?: string;
  renewalTo?: string;
  autoRenewal?: boolean;
  /** Text searched in the title and the parties, case-insensitively. */
  search?: string;
  /** Updated at or after this instant (ISO 8601 with a time zone, as the client wrote it). */
  updatedSince?: string;
  /** Expires or renews on or after this date (the calendar feed's window; not an API parameter). */
  datesFrom?: string;
}

/**
 * The filters other than the organisation (an access path, see ../access.ts), each a
 * clause over one placeholder of its own name. A statement's name lists the filters it
 * has, because its SQL text (and so its prepared plan) depends on which are present,
 * never on their values.
 */
type FilterName = Exclude<keyof ContractFilters, 'organizationId'>;

const FILTER_CLAUSES: { [F in FilterName]: { clause: SQL; value: (v: NonNullable<ContractFilters[F]>) => unknown } } = {
  status: { clause: eq(contracts.status, sql.placeholder('status')), value: (v) => v },
  expirationFrom: { clause: sql`${visibleExpirationDate} >= ${sql.placeholder('expirationFrom')}::date`, value: (v) => v },
  expirationTo: { clause: sql`${visibleExpirationDate} <= ${sql.placeholder('expirationTo')}::date`, value: (v) => v },
  renewalFrom: { clause: sql`${visibleRenewalDate} >= ${sql.placeholder('renewalFrom')}::date`, value: (v) => v },
  renewalTo: { clause: sql`${visibleRenewalDate} <= ${sql.placeholder('renewalTo')}::date`, value: (v) => v },
  autoRenewal: {
    clause: sql`(${contracts.status} = 'completed' AND ${contracts.autoRenewal} = ${sql.placeholder('autoRenewal')}::boolean)`,
    value: (v) => v,
  },
  search: { clause: sql`${searchText} ILIKE ${sql.placeholder('search')}`, value: (v) => containsPattern(v) },
  datesFrom: {
    clause: sql`(${visibleExpirationDate} >= ${sql.placeholder('datesFrom')}::date OR ${visibleRenewalDate} >= ${sql.placeholder('datesFrom')}::date)`,
    value: (v) => v,
  },
  updatedSince: { clause: sql`${contracts.updatedAt} >= ${sql.placeholder('updatedSince')}::timestamptz`, value: (v) => v },
};

const FILTER_NAMES = Object.keys(FILTER_CLAUSES) as FilterName[];

/** The filters on extracted data, which only a completed contract shows (expressions.ts). */
const EXTRACTED_DATA_FILTERS: FilterName[] = ['expirationFrom', 'expirationTo', 'renewalFrom', 'renewalTo', 'autoRenewal', 'datesFrom'];

/**
 * Whether no contract can match: a status other than `completed` together with a filter on
 * extracted data. Such a list is answered without reading a row; as a query it walked every
 * contract of the caller to find none (`status=processing&expiring_within_days=90`: 121 ms
 * at 2M contracts). tests/db/matches-nothing.test.ts holds this to the SQL of the clauses.
 */
export function matchesNothing(filters: ContractFilters): boolean {
  return filters.status !== undefined && filters.status !== 'completed' && EXTRACTED_DATA_FILTERS.some((name) => filters[name] !== undefined);
}

export interface FilterShape {
  /** The filters present, in a fixed order: the part of a statement's name they decide. */
  names: FilterName[];
  clauses: SQL[];
  values: Record<string, unknown>;
}

export function filterShape(filters: ContractFilters): FilterShape {
  const names = FILTER_NAMES.filter((name) => filters[name] !== undefined);
  const values: Record<string, unknown> = {};
  for (const name of names) values[name] = (FILTER_CLAUSES[name].value as (v: unknown) => unknown)(filters[name]);
  return { names, clauses: names.map((name) => FILTER_CLAUSES[name].clause), values };
}

/** "status,search" or "unfiltered". */
export function filterShapeName(shape: FilterShape): string {
  return shape.names.length > 0 ? shape.names.join(',') : 'unfiltered';
}

/**
 * The specification's own shapes (no filter, or a status filter) are prepared on the
 * server; the renewal filters combine into hundreds of shapes, too many to keep prepared
 * in every pooled connection (see db/client.ts, Statement.prepareOnServer).
 */
export function isCommonFilterShape(shape: FilterShape): boolean {
  return shape.names.length === 0 || (shape.names.length === 1 && shape.names[0] === 'status');
}
