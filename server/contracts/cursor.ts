import { createHash } from 'node:crypto';
import type { Cursor } from '@/db/queries/contracts/page';
import { SORT_KEYS } from '@/db/queries/contracts/expressions';
import type { SortField, SortValue } from '@/lib/contracts';
import { AppError } from '@/server/errors';

/**
 * Cursor pagination (docs/api-decisions.md, Additions): `next_cursor` names the position after
 * the last contract of a page in the list's order (its sort key and id), so that the next
 * page is a keyset read whose cost does not grow with depth, and rows inserted or deleted
 * meanwhile do not shift the pages.
 *
 * Opaque to clients: base64url of a small JSON array. It also carries the sort and a
 * fingerprint of the filters it was made for, so that a cursor is never read in another
 * query (a 400 says so). Nothing in it is secret (it names a contract the caller can see),
 * and everything in it is checked before it reaches SQL: a hand-made cursor is a 400,
 * never a 500.
 */

const VERSION = 1;

/** A stable fingerprint of the query parameters a walk is made of (not the paging ones). */
export function filtersFingerprint(params: Record<string, unknown>): string {
  const entries = Object.entries(params)
    .filter(([name, value]) => value !== undefined && !['cursor', 'limit', 'offset', 'sort'].includes(name))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 16);
}

export function encodeCursor(sort: SortValue, position: Cursor, fingerprint: string): string {
  return Buffer.from(JSON.stringify([VERSION, sort, position.key, position.id, fingerprint])).toString('base64url');
}

// What Postgres writes for each sort key type with `::text` (the page statements select it so).
const KEY_TEXT: Record<(typeof SORT_KEYS)[SortField]['type'], RegExp> = {
  timestamptz: /^\d{4,}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/,
  date: /^\d{4,}-\d{2}-\d{2}$/,
  numeric: /^-?\d{1,20}(\.\d{1,10})?$/,
  text: /^[\s\S]{0,2000}$/,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const invalid = (message: string) => new AppError('invalid_request', message, [{ param: 'cursor', message }]);

/** The position a cursor names, for the sort and filters of this request; a 400 when it was made for others. */
export function decodeCursor(text: string, sort: SortValue, fingerprint: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('cursor is not a cursor this API wrote: pass pagination.next_cursor of the previous page as it is');
  }
  if (!Array.isArray(parsed) || parsed.length !== 5 || parsed[0] !== VERSION) {
    throw invalid('cursor is not a cursor this API wrote: pass pagination.next_cursor of the previous page as it is');
  }
  const [, cursorSort, key, id, cursorFingerprint] = parsed as [number, unknown, unknown, unknown, unknown];
  if (cursorSort !== sort || cursorFingerprint !== fingerprint) {
    throw invalid('cursor belongs to another query: keep the filters and the sort of the request that returned it');
  }
  const field = (sort.startsWith('-') ? sort.slice(1) : sort) as SortField;
  const keyType = SORT_KEYS[field];
  const keyOk = key === null ? keyType.nullable : typeof key === 'string' && KEY_TEXT[keyType.type].test(key);
  if (!keyOk || typeof id !== 'string' || !UUID.test(id)) {
    throw invalid('cursor is not a cursor this API wrote: pass pagination.next_cursor of the previous page as it is');
  }
  return { key: key as string | null, id };
}
