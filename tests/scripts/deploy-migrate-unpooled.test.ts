import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';

/**
 * The migrations of `npm run vercel-build` go to the unpooled URL (DATABASE_URL_UNPOOLED,
 * else POSTGRES_URL_NON_POOLING), which Vercel's Neon integration sets next to the pooled
 * DATABASE_URL: here DATABASE_URL leads nowhere, so the migrations can only succeed there.
 */
const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!process.env.DATABASE_URL)('npm run vercel-build: migrations on the unpooled URL (Postgres)', () => {
  const name = `pooler_migrate_${process.pid}_${randomBytes(3).toString('hex')}`;
  let admin: DatabaseHandle;
  let unpooledUrl: string;
  beforeAll(async () => {
    admin = await openPostgres(process.env.DATABASE_URL!, { max: 1 });
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${name}`;
    unpooledUrl = u.toString();
  });
  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.close();
  });

  it.each([['DATABASE_URL_UNPOOLED'], ['POSTGRES_URL_NON_POOLING']])('are applied through %s, not DATABASE_URL', async (variable) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'development',
      VERCEL_ENV: 'production',
      DATABASE_URL: `postgres://nobody@127.0.0.1:${await closedPort()}/pooled`,
      DATABASE_PREPARE: 'false',
      [variable]: unpooledUrl,
    };
    const { stdout } = await run(TSX, ['--conditions=react-server', 'scripts/deploy-migrate.ts'], { env });
    expect(stdout).toMatch(/Migrations applied \(postgres\)/);
    const [row] = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_database WHERE datname = $1`, [name]);
    expect(row!.n).toBe(1);
    const db = await openPostgres(unpooledUrl, { max: 1 });
    try {
      const [applied] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
      expect(applied!.n).toBeGreaterThanOrEqual(4);
    } finally {
      await db.close();
    }
  }, 120_000);
});
