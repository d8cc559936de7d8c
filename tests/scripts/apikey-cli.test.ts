import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_ORGS, seedDemo } from '@/db/seed/demo';
import { apikey } from '@/scripts/commands/apikey';
import { runInProcess } from '../helpers/command';
import { configureForFile } from '../helpers/config';
import { createChildProcessDatabase, createTestDatabase } from '../helpers/db';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

// The operators' command line, run as a real process against its own seeded database (a
// PGlite directory, or a Postgres database next to DATABASE_URL's: createChildProcessDatabase) where
// the process is what is tested: what it prints on which stream, its exit code, the
// deployment's configuration it reads. Everything else runs the same command in this
// process (tests/helpers/command.ts) against the file's own demo database: one process
// is 3 to 7 s of loading the app and opening the database, and this file ran 39 of them.
let env: NodeJS.ProcessEnv;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const own = await createChildProcessDatabase(seedDemo);
  env = { ...process.env, ...own.env };
  cleanup = own.remove;
}, 120_000);
afterAll(async () => cleanup?.());

// Allowed addresses apply only where the deployment knows the client's address: the
// command line reads the same configuration as the server (one trusted proxy here).
configureForFile({ TRUSTED_PROXY_HOPS: '1', CLIENT_ADDRESS_HEADER: undefined, VERCEL: undefined });
let demo: DatabaseHandle;
beforeAll(async () => {
  demo = await createTestDatabase();
  await seedDemo(demo.db);
}, 120_000);
afterAll(async () => demo?.close());
const inProcess = (...args: string[]) => runInProcess(apikey, demo.db, args);

async function cli(...args: string[]) {
  return cliWith({ TRUSTED_PROXY_HOPS: '1' }, ...args);
}

async function cliWith(extra: Record<string, string | undefined>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(TSX, ['--conditions=react-server', 'scripts/apikey.ts', ...args], { env: { ...env, ...extra } });
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

  it('prints and exits as the in-process runner of the tests reports: a failure is exit code 1 with its message alone on stderr', async () => {
    const cases = [['list', '--email', 'bob@example.com'], ['revoke', '--id', '00000000-0000-4000-8000-000000000000'], ['frobnicate'], ['list', '--bogus']];
    for (const args of cases) {
      const [asProcess, here] = await Promise.all([cli(...args), inProcess(...args)]);
      expect(asProcess, args.join(' ')).toEqual(here);
    }
    expect((await inProcess('list', '--email', 'bob@example.com')).stdout).toBe('No API keys.\n');
    expect((await inProcess('revoke', '--id', '00000000-0000-4000-8000-000000000000')).code).toBe(1);
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
    const result = await inProcess(...args);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 30_000);

  it('creates a restricted key and an organisation key; list shows access, permissions, addresses and owner; roll prints the new secret', async () => {
    const { acme, globex } = DEMO_ORGS;
    const restricted = await inProcess('create', '--email', 'bob@example.com', '--name', 'globex reader', '--access', `personal,${globex.id}`, '--permissions', 'contracts:read', '--allowed-ips', '203.0.113.0/24, 2001:db8::/32');
    expect(restricted.code).toBe(0);
    expect(restricted.stdout).toMatch(/^cdapi_[0-9A-Za-z]{38}\n$/);
    const orgKey = await inProcess('create', '--email', 'alice@example.com', '--name', 'acme etl', '--organization', acme.id, '--permissions', 'contracts:export');
    expect(orgKey.code).toBe(0);

    const bob = await inProcess('list', '--email', 'bob@example.com');
    const line = bob.stdout.split('\n').find((l) => l.includes('globex reader'))!;
    expect(line).toContain('owner me');
    expect(line).toContain('access personal, Globex');
    expect(line).toContain('permissions contracts:read ');
    expect(line).toContain('addresses 203.0.113.0/24, 2001:db8::/32');
    // Bob is a member of Acme, not an admin: he does not see Acme's key.
    expect(bob.stdout).not.toContain('acme etl');
    const alice = await inProcess('list', '--email', 'alice@example.com');
    const orgLine = alice.stdout.split('\n').find((l) => l.includes('acme etl'))!;
    expect(orgLine).toContain('owner Acme Corp (organisation)');
    expect(orgLine).toContain('permissions contracts:export');
    expect(orgLine).toContain('addresses any address');

    const id = line.split(' ')[0]!;
    const rolled = await inProcess('roll', '--id', id, '--grace-hours', '24');
    expect(rolled.code).toBe(0);
    expect(rolled.stdout).toMatch(/^cdapi_[0-9A-Za-z]{38}\n$/);
    expect(rolled.stdout).not.toBe(restricted.stdout);
    expect(rolled.stderr).toMatch(/previous secret works until/);
    await inProcess('revoke', '--id', id);
    const again = await inProcess('roll', '--id', id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/Only an active key can be rolled/);
  });

  // Each refusal is checked alone; that none of them changed anything, once for all.
  describe('bad input', () => {
    const lists = async () => ({ alice: (await inProcess('list', '--email', 'alice@example.com')).stdout, bob: (await inProcess('list', '--email', 'bob@example.com')).stdout });
    let before: { alice: string; bob: string };
    beforeAll(async () => {
      before = await lists();
    }, 60_000);

    it.each([
      [['create', '--email', 'alice@example.com', '--name', 'x', '--access', DEMO_ORGS.globex.id], /not a member of the organisation/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--access', 'everything'], /--access: "everything" is neither "personal" nor an organisation id/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--access', ''], /--access must be "all" or a list/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--permissions', 'contracts:write'], /Unknown permission "contracts:write"/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--permissions', ','], /at least one permission/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--allowed-ips', '10.0.0.0/8,not-an-address'], /"not-an-address" is not an IPv4 or IPv6 address/],
      [['create', '--email', 'alice@example.com', '--name', 'x', '--allowed-ips', Array.from({ length: 21 }, (_, i) => `198.51.100.${i}`).join(',')], /At most 20/],
      [['create', '--email', 'bob@example.com', '--name', 'x', '--organization', DEMO_ORGS.acme.id], /Only the organisation's owners and admins/],
      [['create', '--email', 'bob@example.com', '--name', 'x', '--organization', 'acme'], /--organization must be an organisation id/],
      [['roll', '--id', '00000000-0000-4000-8000-000000000000', '--grace-hours', '169'], /--grace-hours must be a whole number of hours from 0 to 168/],
      [['roll', '--id', '00000000-0000-4000-8000-000000000000', '--grace-hours=-1'], /--grace-hours must be/],
      [['roll', '--id', '00000000-0000-4000-8000-000000000000'], /No API key with the id/],
      [['list', '--email', 'alice@example.com', '--grace-hours', '1'], /--grace-hours is an option of roll only/],
    ])('%j fails with a clear message', async (args, message) => {
      const result = await inProcess(...args);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }, 60_000);

    it('none of them changed the keys of alice or bob', async () => {
      expect(await lists()).toEqual(before);
    }, 60_000);
  });

  it('refuses allowed addresses where the deployment cannot know the client address', async () => {
    const result = await cliWith({ TRUSTED_PROXY_HOPS: undefined, CLIENT_ADDRESS_HEADER: undefined, VERCEL: undefined }, 'create', '--email', 'alice@example.com', '--name', 'office', '--allowed-ips', '203.0.113.0/24');
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/cannot apply on this deployment/);
    expect((await cli('list', '--email', 'alice@example.com')).stdout).not.toContain('office');
  }, 60_000);
});
