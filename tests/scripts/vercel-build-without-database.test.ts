import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The migration step of `npm run vercel-build` as Vercel's builder runs it (`vercel build`
 * sets VERCEL=1) in a project where no database is configured yet: a preview builds (and
 * migrates nothing), a production build stops with a message that names what to set,
 * not a stack trace. `npm run vercel:output` in CI builds the whole app this way.
 */
const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

async function deployMigrate(vercelEnv: string) {
  // Nothing of this shell: no DATABASE_URL, no Redis, no PGLITE_DIR.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'development', VERCEL: '1', VERCEL_ENV: vercelEnv };
  return run(TSX, ['--conditions=react-server', 'scripts/deploy-migrate.ts'], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

describe('npm run vercel-build on Vercel with no database configured', () => {
  it('a preview deployment builds: migrations skipped', async () => {
    const result = await deployMigrate('preview');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Migrations skipped: VERCEL_ENV is "preview"/);
  });

  it('a production deployment stops, naming DATABASE_URL, without a stack trace', async () => {
    const result = await deployMigrate('production');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).not.toMatch(/Migrations applied/);
  });
});
