import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase, type DatabaseHandle } from '@/db/client';
import { verifyToken } from '@/server/access/tokens';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { createTestDatabase } from '../helpers/db';
import { migrationsBefore } from '../helpers/migrations-before';

/**
 * Migration 0003 moves API keys and calendar feed tokens from their two tables into one:
 * every key and feed address in use keeps working across the upgrade, with its id, name,
 * hint, times and revocation.
 */

const MIGRATED_BEFORE = 3; // 0000..0002: the schema with api_keys and calendar_feeds

let handle: DatabaseHandle;
let before: ReturnType<typeof migrationsBefore>;
beforeAll(async () => {
  // The committed migrations up to 0002, as a folder of their own.
  before = migrationsBefore(MIGRATED_BEFORE);
  handle = await createTestDatabase({ migrationsFolder: before.folder });
});
afterAll(async () => {
  await handle?.close();
  before?.remove();
});

describe('migration 0003 (access_tokens)', () => {
  it('keeps every API key and calendar feed token working, with its metadata', async () => {
    const user = '00000000-0000-4000-8000-0000000000a1';
    await handle.query(`insert into users (id, email) values ($1, 'tokens@example.com')`, [user]);
    const key = TOKEN_FORMATS.api_key.generate();
    const revokedKey = TOKEN_FORMATS.api_key.generate();
    const feed = TOKEN_FORMATS.calendar_feed.generate();
    const keyId = '00000000-0000-4000-8000-0000000000b1';
    const revokedId = '00000000-0000-4000-8000-0000000000b2';
    const feedId = '00000000-0000-4000-8000-0000000000b3';
    await handle.query(
      `insert into api_keys (id, user_id, name, key_hash, hint, created_at, last_used_at, expires_at, revoked_at) values
        ($1, $3, 'ETL', $4, 'cdapi_…aaaa', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', '2099-01-01T00:00:00Z', null),
        ($2, $3, 'old', $5, 'cdapi_…bbbb', '2026-01-02T00:00:00Z', null, null, '2026-03-01T00:00:00Z')`,
      [keyId, revokedId, user, hashToken(key), hashToken(revokedKey)],
    );
    await handle.query(
      `insert into calendar_feeds (id, user_id, name, token_hash, hint, created_at) values ($1, $2, 'Work', $3, 'cdcal_…cccc', '2026-01-03T00:00:00Z')`,
      [feedId, user, hashToken(feed)],
    );

    await migrateDatabase(handle.db, handle.driver);

    // Times as ISO text, whatever the driver returns them as.
    const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as ${column}`;
    const rows = await handle.query<Record<string, unknown>>(
      `select id, kind, name, hint, ${iso('last_used_at')}, ${iso('expires_at')}, ${iso('revoked_at')} from access_tokens order by id`,
    );
    expect(rows).toEqual([
      { id: keyId, kind: 'api_key', name: 'ETL', hint: 'cdapi_…aaaa', last_used_at: '2026-02-01T00:00:00Z', expires_at: '2099-01-01T00:00:00Z', revoked_at: null },
      { id: revokedId, kind: 'api_key', name: 'old', hint: 'cdapi_…bbbb', last_used_at: null, expires_at: null, revoked_at: '2026-03-01T00:00:00Z' },
      { id: feedId, kind: 'calendar_feed', name: 'Work', hint: 'cdcal_…cccc', last_used_at: null, expires_at: null, revoked_at: null },
    ]);
    expect(await verifyToken(handle.db, 'api_key', key)).toMatchObject({ tokenId: keyId, userId: user });
    expect(await verifyToken(handle.db, 'api_key', revokedKey)).toBeUndefined();
    expect(await verifyToken(handle.db, 'calendar_feed', feed)).toMatchObject({ tokenId: feedId, userId: user });
    const tables = await handle.query<{ t: string }>(`select table_name as t from information_schema.tables where table_name in ('api_keys', 'calendar_feeds')`);
    expect(tables).toEqual([]);
  });
});
