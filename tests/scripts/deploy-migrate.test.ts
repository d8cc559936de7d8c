import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '@/db/client';

/**
 * The migration step of `npm run vercel-build`: only production deployments migrate
 * (VERCEL_ENV=production); previews and other builds leave the database alone.
 */
const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function deployMigrate(vercelEnv: string | undefined) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-deploy-'));
  dirs.push(dir);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'development', PGLITE_DIR: path.join(dir, 'db') };
  if (vercelEnv) env.VERCEL_ENV = vercelEnv;
  const { stdout } = await run(TSX, ['--conditions=react-server', 'scripts/deploy-migrate.ts'], { env });
  return { stdout, dir: path.join(dir, 'db') };
}

describe('npm run vercel-build: migrations', () => {
  it.each([['preview'], ['development'], [undefined]])('are skipped for VERCEL_ENV=%s, and the database is not touched', async (target) => {
    const { stdout, dir } = await deployMigrate(target);
    expect(stdout).toMatch(/Migrations skipped/);
    // No database was even created there.
    expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(false);
  });

  it('are applied for the production deployment', async () => {
    const { stdout, dir } = await deployMigrate('production');
    expect(stdout).toMatch(/Migrations applied/);
    // The script created and migrated it (opening it below would migrate it too).
    expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
    const db = await openPglite(dir);
    try {
      const [row] = await db.query<{ n: number }>('select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(row!.n).toBeGreaterThanOrEqual(4);
    } finally {
      await db.close();
    }
  }, 120_000);
});
