import type { Database } from '@/db/client';
import { selectSecurityEvents, type SecurityEventRecord, type SecurityLogFilter, type SecurityLogOwner } from '@/db/queries/security-events';
import {
  SECURITY_EVENT_KINDS,
  SECURITY_LOG_CSV_MAX_ROWS,
  SECURITY_LOG_PAGE_SIZE,
  type SecurityEventKind,
  type SecurityEventRow,
} from '@/lib/key-activity';
import { toCsvLines } from '@/server/csv';
import { AppError, type ErrorDetail } from '@/server/errors';
import { flushSecurityEvents } from './record';

/**
 * Reading the security log: a person's own events (Settings → Security log), or an
 * organisation's, filtered by kind and time, newest first, paged by an opaque cursor, and
 * as CSV (the contracts export's formula-safe writer). Filters that make no sense are a
 * 400 naming the parameter.
 */

export interface SecurityLogQuery {
  kinds?: string[];
  /** ISO 8601 time, or a date (YYYY-MM-DD: from its start / to its end, UTC). */
  from?: string;
  to?: string;
  cursor?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseTime(param: 'from' | 'to', value: string, problems: ErrorDetail[]): Date | undefined {
  const v = value.trim();
  let date: Date | undefined;
  if (DATE.test(v)) date = new Date(`${v}T${param === 'from' ? '00:00:00.000' : '23:59:59.999'}Z`);
  else if (ISO.test(v)) date = new Date(v);
  if (!date || Number.isNaN(date.getTime()) || (DATE.test(v) && date.toISOString().slice(0, 10) !== v)) {
    problems.push({ param, message: `${param} must be a date (YYYY-MM-DD) or an ISO 8601 time with a zone (2026-11-27T10:00:00Z).` });
    return undefined;
  }
  return date;
}

const encodeCursor = (row: SecurityEventRecord) => Buffer.from(`${row.at.getTime()}.${row.id}`).toString('base64url');

function decodeCursor(cursor: string, problems: ErrorDetail[]): { at: Date; id: number } | undefined {
  const match = cursor.length <= 64 ? /^([0-9]{1,15})\.([0-9]{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  if (!match) {
    problems.push({ param: 'cursor', message: 'cursor is not one this log gave: start again from the first page.' });
    return undefined;
  }
  return { at: new Date(Number(match[1])), id: Number(match[2]) };
}

/** The filter of a query, or a 400 listing every parameter that makes no sense. */
export function parseSecurityLogQuery(query: SecurityLogQuery): SecurityLogFilter {
  const problems: ErrorDetail[] = [];
  const kinds = query.kinds?.filter((k) => k !== '');
  const unknown = kinds?.filter((k) => !(SECURITY_EVENT_KINDS as readonly string[]).includes(k)) ?? [];
  if (unknown.length > 0) problems.push({ param: 'kind', message: `Unknown kind ${JSON.stringify(unknown[0]!.slice(0, 60))}; one of: ${SECURITY_EVENT_KINDS.join(', ')}.` });
  if (kinds && kinds.length > SECURITY_EVENT_KINDS.length) problems.push({ param: 'kind', message: 'Too many kinds.' });
  const from = query.from ? parseTime('from', query.from, problems) : undefined;
  const to = query.to ? parseTime('to', query.to, problems) : undefined;
  if (from && to && from > to) problems.push({ param: 'from', message: 'from must not be after to.' });
  const before = query.cursor ? decodeCursor(query.cursor, problems) : undefined;
  if (problems.length > 0) throw new AppError('invalid_request', problems[0]!.message, problems);
  return { kinds, from, to, before };
}

export function toEventRow(row: SecurityEventRecord): SecurityEventRow {
  return {
    id: String(row.id),
    at: row.at.toISOString(),
    kind: row.kind as SecurityEventKind,
    actor: row.actorLabel,
    clientAddress: row.clientAddress,
    userAgent: row.userAgent,
    objectType: row.objectType,
    objectId: row.objectId,
    object: row.objectLabel,
    details: row.details ?? null,
  };
}

/** A page of a log. */
export async function securityLogPage(db: Database, owner: SecurityLogOwner, query: SecurityLogQuery): Promise<{ events: SecurityEventRow[]; nextCursor: string | null }> {
  const filter = parseSecurityLogQuery(query);
  // This process's queued failures are in it at once; other instances' within a second.
  await flushSecurityEvents();
  const rows = await selectSecurityEvents(db, owner, filter, SECURITY_LOG_PAGE_SIZE + 1);
  const page = rows.slice(0, SECURITY_LOG_PAGE_SIZE);
  return { events: page.map(toEventRow), nextCursor: rows.length > SECURITY_LOG_PAGE_SIZE ? encodeCursor(page.at(-1)!) : null };
}

export const SECURITY_LOG_CSV_COLUMNS = ['time', 'kind', 'actor', 'client_address', 'user_agent', 'object_type', 'object_id', 'object', 'details'] as const;

/** The log as CSV (at most SECURITY_LOG_CSV_MAX_ROWS events, newest first), formula-safe. */
export async function securityLogCsv(db: Database, owner: SecurityLogOwner, query: SecurityLogQuery): Promise<string> {
  const filter = parseSecurityLogQuery({ ...query, cursor: undefined });
  await flushSecurityEvents();
  const rows = await selectSecurityEvents(db, owner, filter, SECURITY_LOG_CSV_MAX_ROWS);
  return toCsvLines([
    [...SECURITY_LOG_CSV_COLUMNS],
    ...rows.map((r) => [
      r.at.toISOString(),
      r.kind,
      r.actorLabel,
      r.clientAddress,
      r.userAgent,
      r.objectType,
      r.objectId,
      r.objectLabel,
      r.details ? JSON.stringify(r.details) : null,
    ]),
  ]);
}
