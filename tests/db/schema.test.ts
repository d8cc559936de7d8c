import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase, type DatabaseHandle } from '@/db/client';
import { contracts, users } from '@/db/schema';
import { createTestDatabase, describeDriver } from '../helpers/db';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => handle?.close());

describe(`migrations on ${describeDriver()}`, () => {
  it('create every table, and running them again changes nothing', async () => {
    const tables = await handle.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'access_tokens', 'calendar_feed_versions', 'contract_counts', 'contract_date_counts', 'contract_updated_counts', 'contracts', 'event_list_commits', 'event_list_horizon', 'key_usage', 'mail_outbox', 'memberships', 'oauth_accounts', 'organizations', 'request_log', 'security_events', 'token_organization_removals', 'users',
      'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'webhook_events', 'webhook_upcoming_sent',
    ]);
    await migrateDatabase(handle.db, handle.driver);
    const applied = await handle.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
    expect(applied[0]!.n).toBeGreaterThan(0);
  });

  it('enforce the data rules: unique email, confidence 0..1, three-letter currency, known status', async () => {
    const [owner] = await handle.db.insert(users).values({ email: 'rules@example.com' }).returning();
    await expect(handle.db.insert(users).values({ email: 'rules@example.com' })).rejects.toThrow();
    const base = { ownerId: owner!.id, title: 't', fileName: 'f.pdf', fileSize: 1 };
    await expect(handle.db.insert(contracts).values({ ...base, confidenceScore: 1.5 })).rejects.toThrow();
    await expect(handle.db.insert(contracts).values({ ...base, currency: 'usd' })).rejects.toThrow();
    await expect(
      handle.query(`insert into contracts (owner_id, title, file_name, file_size, status) values ($1, 't', 'f', 1, 'archived')`, [owner!.id]),
    ).rejects.toThrow();
    const [row] = await handle.db
      .insert(contracts)
      .values({ ...base, confidenceScore: 1, currency: 'EUR', contractValue: 1234.56, expirationDate: '2027-02-28' })
      .returning();
    // numeric comes back as a number, date as YYYY-MM-DD, timestamps with milliseconds.
    expect(row).toMatchObject({ contractValue: 1234.56, expirationDate: '2027-02-28', currency: 'EUR', status: 'pending' });
    expect(row!.createdAt).toBeInstanceOf(Date);
  });
});
