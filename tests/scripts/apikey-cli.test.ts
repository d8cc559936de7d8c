import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '@/db/client';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

// The operators' command line, run as a real process against its own database: a fresh
// Postgres database next to DATABASE_URL when set, else a fresh PGlite directory.
let env: NodeJS.ProcessEnv;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const base = process.env.DATABASE_URL;
  if (base) {
    const name = `cda_cli_${randomBytes(4).toString('hex')}`;
    const admin = await openPostgres(base, { max: 1 });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.close();
    const url = new URL(base);
    url.pathname = `/${name}`;
    env = { ...process.env, DATABASE_URL: url.toString() };
    cleanup = async () => {
      const a = await openPostgres(base, { max: 1 });
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.close();
    };
  } else {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-cli-'));
    env = { ...process.env, PGLITE_DIR: path.join(dir, 'db') };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  await run(TSX, ['--conditions=react-server', 'scripts/db-seed.ts'], { env });
}, 120_000);
afterAll(async () => cleanup?.());

async function cli(...args: string[]) {
  try {
    const { stdout, stderr } = await run(TSX, ['--conditions=react-server', 'scripts/apikey.ts', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run apikey', () => {
  it('creates a key and prints it alone on stdout; list shows its hint; revoke revokes it', async () => {
    const created = await cli('create', '--email', 'alice@example.com', '--name', 'CLI key', '--expires-in-days', '30');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^cdapi_[0-9A-Za-z]{38}$/);

    const listed = await cli('list', '--email', 'alice@example.com');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`cdapi_…${key.slice(-4)}`);
    expect(listed.stdout).not.toContain(key);
    const id = listed.stdout.split('\n').find((l) => l.includes('CLI key'))!.split(' ')[0]!;

    const revoked = await cli('revoke', '--id', id);
    expect(revoked.code).toBe(0);
    expect((await cli('list', '--email', 'alice@example.com')).stdout).toMatch(/revoked.*CLI key/);
  }, 120_000);

  it.each([
    [['create', '--email', 'nobody@example.com', '--name', 'x'], /No user with the email nobody@example.com/],
    [['create', '--email', 'alice@example.com'], /--name is required/],
    [['create', '--email', 'alice@example.com', '--name', 'x', '--expires-in-days', 'soon'], /--expires-in-days must be/],
    [['revoke', '--id', 'not-a-uuid'], /--id must be a key id/],
    [['revoke', '--id', '00000000-0000-4000-8000-000000000000'], /No API key with the id/],
    [['frobnicate'], /Usage:/],
    [['list', '--bogus'], /Unknown option '--bogus'/],
  ])('%j fails with a clear message on stderr', async (args, message) => {
    const result = await cli(...args);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 30_000);
});
