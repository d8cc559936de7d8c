import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { seedDemo } from '@/db/seed/demo';
import { webhook } from '@/scripts/commands/webhook';
import { runInProcess } from '../helpers/command';
import { configureForFile } from '../helpers/config';
import { createChildProcessDatabase, createTestDatabase } from '../helpers/db';
import { startReceiver, verify, type Receiver } from '../webhooks/support';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

// The operators' command line, run as a real process against its own database (a fresh
// Postgres database next to DATABASE_URL, else a fresh PGlite directory), with AUTH_SECRET
// as a server would have it and no WEBHOOK_ENCRYPTION_KEY: the key derives from it. Where
// the process itself is not what is tested, the same command runs in this process
// (tests/helpers/command.ts) against the file's own demo database, with the same settings.
const SETTINGS = { AUTH_SECRET: 'cli-test-auth-secret-0123456789abcdef', WEBHOOK_ENCRYPTION_KEY: '', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
configureForFile(SETTINGS);
let demo: DatabaseHandle;
let env: NodeJS.ProcessEnv;
let cleanup: () => Promise<void>;
let receiver: Receiver;

beforeAll(async () => {
  const own = await createChildProcessDatabase(seedDemo);
  env = { ...process.env, ...SETTINGS, ...own.env };
  cleanup = own.remove;
  receiver = await startReceiver();
  demo = await createTestDatabase();
  await seedDemo(demo.db);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await demo?.close();
  await cleanup?.();
});

async function cli(...args: string[]) {
  try {
    const { stdout, stderr } = await run(TSX, ['--conditions=react-server', 'scripts/webhook.ts', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const inProcess = (...args: string[]) => runInProcess(webhook, demo.db, args);

describe('npm run webhook', () => {
  it('create prints one JSON object with the id and the secret; another process tests it with a signed event; a failed delivery exits 1', async () => {
    receiver.fallback = { status: 200, body: 'ok' };
    const created = await cli('create', '--email', 'alice@example.com', '--url', receiver.url, '--events', 'contract.updated,contract.renewal_upcoming', '--offsets', '60,14');
    expect(created.code, created.stderr).toBe(0);
    const printed = JSON.parse(created.stdout) as { id: string; secret: string };
    expect(created.stdout).toBe(`${JSON.stringify(printed)}\n`);
    expect(Object.keys(printed)).toEqual(['id', 'secret']);
    expect(printed.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.stderr).not.toContain(printed.secret);

    // Another process decrypts the secret and signs with it: the receiver verifies with the printed one.
    const before = receiver.received.length;
    const tested = await cli('test', '--id', printed.id);
    expect(tested.code, tested.stderr).toBe(0);
    expect(JSON.parse(tested.stdout)).toMatchObject({ state: 'succeeded', status_code: 200 });
    const message = verify(printed.secret, receiver.received[before]!);
    expect(message.type).toBe('webhook.test');

    receiver.fallback = { status: 500 };
    const failed = await cli('test', '--id', printed.id);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ state: 'pending', status_code: 500 });
  }, 300_000);

  it('list shows an endpoint with its last day of deliveries and never its secret; delete removes it', async () => {
    receiver.fallback = { status: 200, body: 'ok' };
    const created = await inProcess('create', '--email', 'alice@example.com', '--url', receiver.url, '--events', 'contract.updated,contract.renewal_upcoming', '--offsets', '60,14');
    expect(created.code, created.stderr).toBe(0);
    const printed = JSON.parse(created.stdout) as { id: string; secret: string };
    expect((await inProcess('test', '--id', printed.id)).code).toBe(0);

    const listed = await inProcess('list', '--email', 'alice@example.com');
    expect(listed.stdout).toContain(printed.id);
    expect(listed.stdout).toContain(`whsec_…${printed.secret.slice(-5, -1)}`);
    expect(listed.stdout).toContain('contract.updated,contract.renewal_upcoming');
    expect(listed.stdout).toContain('offsets 60,14');
    expect(listed.stdout).toContain('last 24 h 1 ok / 0 failed');
    expect(listed.stdout).not.toContain(printed.secret);

    expect(await inProcess('delete', '--id', printed.id)).toEqual({ code: 0, stdout: `Deleted endpoint ${printed.id}.\n`, stderr: '' });
    expect((await inProcess('list', '--email', 'alice@example.com')).stdout).toBe('No webhook endpoints.\n');
  });

  it('prints and exits as the in-process runner of the tests reports', async () => {
    const cases = [['list', '--email', 'bob@example.com'], ['test', '--id', '00000000-0000-4000-8000-000000000000'], ['frobnicate']];
    for (const args of cases) {
      const [asProcess, here] = await Promise.all([cli(...args), inProcess(...args)]);
      expect(asProcess, args.join(' ')).toEqual(here);
    }
    expect((await inProcess('test', '--id', '00000000-0000-4000-8000-000000000000')).code).toBe(1);
  }, 120_000);

  it.each([
    [['create', '--email', 'alice@example.com'], /--url is required/],
    [['create', '--email', 'nobody@example.com', '--url', 'https://example.com'], /No user with the email/],
    [['create', '--email', 'alice@example.com', '--url', 'https://example.com', '--events', 'contract.exploded'], /Each event must be one of/],
    [['create', '--email', 'alice@example.com', '--url', 'https://example.com', '--offsets', 'soon'], /--offsets must be whole numbers/],
    [['create', '--email', 'alice@example.com', '--url', 'https://example.com', '--offsets', '400'], /at most 365 days/],
    [['create', '--email', 'alice@example.com', '--url', 'ftp://example.com'], /must start with https/],
    [['delete', '--id', 'nope'], /--id must be an endpoint id/],
    [['test', '--id', '00000000-0000-4000-8000-000000000000'], /No webhook endpoint with the id/],
    [['frobnicate'], /Usage:/],
  ])('%j fails with a clear message on stderr', async (args, message) => {
    const result = await inProcess(...args);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 90_000);
});

describe('npm run worker', () => {
  it(process.env.DATABASE_URL ? 'delivers a change made with SQL, and stops cleanly on SIGTERM' : 'refuses the embedded database (one process at a time) with a clear message', async () => {
    // `npm run worker`'s own command: node with tsx as a loader, no tsx parent process in
    // between. The tsx CLI relays SIGTERM and, when the child has not confirmed it within
    // 30 ms (twice), SIGKILLs it and exits 143: under load that cut a pass short (CI once).
    // `exec` lets the SIGTERM that npm forwards to its shell reach node (without it the
    // shell died and left the worker running).
    const workerArgs = ['--conditions=react-server', '--import', 'tsx', 'scripts/worker.ts'];
    const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(packageJson.scripts.worker).toBe(`exec node ${workerArgs.join(' ')}`);
    const child = spawn(process.execPath, workerArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A long-running service: its log is JSON lines on stdout (server/observability/logger.ts).
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    if (!env.DATABASE_URL) {
      expect(await exited).toBe(1);
      expect(stderr).toMatch(/embedded database allows one process at a time/);
      return;
    }
    receiver.fallback = { status: 200, body: 'ok' };
    const created = await cli('create', '--email', 'bob@example.com', '--url', receiver.url, '--events', 'contract.updated');
    const { secret } = JSON.parse(created.stdout) as { secret: string };
    const before = receiver.received.length;
    await expect.poll(() => stdout, { timeout: 30_000 }).toMatch(/"msg":"webhook worker started/);
    const writer = await openPostgres(env.DATABASE_URL, { max: 1 });
    try {
      await writer.query(`UPDATE contracts SET title = title || ' (worker)' WHERE owner_id = (SELECT id FROM users WHERE email = 'bob@example.com') AND organization_id IS NULL`);
    } finally {
      await writer.close();
    }
    await receiver.waitFor(before + 1, 10_000);
    const event = verify(secret, receiver.received.at(-1)!);
    expect(event.type).toBe('contract.updated');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const stopping = stdout.split('\n').filter((line) => line.includes('webhook worker stopping')).map((line) => JSON.parse(line) as { level: string; signal: string });
    expect(stopping).toMatchObject([{ level: 'info', signal: 'SIGTERM' }]);
  }, 90_000);
});
