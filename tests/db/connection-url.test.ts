import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '@/db/client';
import { postgresJsUrl } from '@/db/connection-url';

// Neon's connection strings (DATABASE_URL and DATABASE_URL_UNPOOLED as Vercel's integration
// sets them) end in `?sslmode=require&channel_binding=require`. postgres.js sends query
// parameters it does not know as startup parameters, which Postgres and poolers refuse.

const NEON_POOLED = 'postgresql://neondb_owner:p%40ss%2Fw0rd@ep-cool-darkness-a1b2c3d4-pooler.us-east-2.aws.neon.tech/neondb?sslmode=require&channel_binding=require';

describe('postgresJsUrl', () => {
  it("drops libpq's client-only keywords and keeps what postgres.js reads and real settings", () => {
    expect(postgresJsUrl(NEON_POOLED)).toBe(
      'postgresql://neondb_owner:p%40ss%2Fw0rd@ep-cool-darkness-a1b2c3d4-pooler.us-east-2.aws.neon.tech/neondb?sslmode=require',
    );
    expect(postgresJsUrl('postgres://u@h/db?channel_binding=prefer&application_name=x&keepalives=1&options=-c%20search_path%3Dpublic')).toBe(
      'postgres://u@h/db?application_name=x&options=-c%20search_path%3Dpublic',
    );
    expect(postgresJsUrl('postgres://u@h/db?channel_binding=require')).toBe('postgres://u@h/db');
  });

  it('leaves everything else byte for byte: no query, multi-host lists, odd encodings', () => {
    for (const url of ['postgres://u:p@h:5432/db', 'postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write', 'postgres://u@h/db?x=%E0%A4%A', 'not a url']) {
      expect(postgresJsUrl(url)).toBe(url);
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('a Neon-style URL on a real Postgres', () => {
  const withNeonParams = () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('sslmode', 'disable');
    url.searchParams.set('channel_binding', 'require');
    return url.toString();
  };

  it('postgres.js alone is refused: channel_binding reaches the server as a setting', async () => {
    const sql = postgres(withNeonParams(), { max: 1, connect_timeout: 5, onnotice: () => {} });
    try {
      await expect(sql`SELECT 1`).rejects.toThrow('unrecognized configuration parameter "channel_binding"');
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it("the app's pool connects", async () => {
    const handle = await openPostgres(withNeonParams(), { max: 1 });
    try {
      expect(await handle.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    } finally {
      await handle.close();
    }
  });
});
