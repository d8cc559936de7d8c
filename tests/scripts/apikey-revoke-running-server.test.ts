import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '@/db/client';
import { CHILD_TIMEOUT_MS, PREPARE } from '../helpers/db';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');

// `npm run apikey -- revoke` is another process than the running server: the key must be
// refused by the server on its next request, although the server holds it in its 30 s
// cache. The server counts rate limits in memory (Postgres, no Redis: the self-hosted
// single instance), the case in which the CLI had no marker to leave that the server
// reads. Postgres only: an embedded PGlite directory is opened by one process at a time,
// so the CLI cannot run next to a server on it.
const base = process.env.DATABASE_URL;

// Without Redis the running server learns of the CLI's revocation only by LISTEN, which does
// not cross a transaction pooler (DATABASE_PREPARE=false marks one in this suite; docs/api-guide.md,
// "Key cache": the store's marker covers revocation there).
describe.skipIf(!base || !PREPARE)('npm run apikey -- revoke, next to a running server', () => {
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess | undefined;
  let port = 0;
  let name = '';

  beforeAll(async () => {
    name = `cda_cli_revoke_${randomBytes(4).toString('hex')}`;
    const admin = await openPostgres(base!, { max: 1 });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.close();
    const url = new URL(base!);
    url.pathname = `/${name}`;
    env = { ...process.env, DATABASE_URL: url.toString(), REDIS_URL: '', UPSTASH_REDIS_REST_URL: '', UPSTASH_REDIS_REST_TOKEN: '', KV_REST_API_URL: '', KV_REST_API_TOKEN: '' };
    for (const variable of ['REDIS_URL', 'UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN', 'KV_REST_API_URL', 'KV_REST_API_TOKEN']) delete env[variable];
    await run(TSX, ['--conditions=react-server', 'scripts/db-seed.ts'], { env });
    const child = spawn(process.execPath, ['--import', './tests/helpers/server-only-hook.mjs', '--import', 'tsx', 'tests/server/support/api-server.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    server = child;
    port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening (\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
    });
  }, CHILD_TIMEOUT_MS);

  afterAll(async () => {
    server?.kill('SIGTERM');
    if (name) {
      const admin = await openPostgres(base!, { max: 1 });
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    }
  });

  const cli = async (...args: string[]) => (await run(TSX, ['--conditions=react-server', 'scripts/apikey.ts', ...args], { env })).stdout;
  const list = async (key: string) => (await fetch(`http://127.0.0.1:${port}/api/v1/contracts?limit=1`, { headers: { 'X-API-Key': key } })).status;

  it('the next request with the revoked key is a 401', async () => {
    const key = (await cli('create', '--email', 'alice@example.com', '--name', 'revoked by the CLI')).trim();
    const id = (await cli('list', '--email', 'alice@example.com')).split('\n').find((l) => l.includes('revoked by the CLI'))!.split(' ')[0]!;
    // Served, and cached by the server (the first request after start may not cache it yet).
    for (let i = 0; i < 3; i++) expect(await list(key)).toBe(200);
    await cli('revoke', '--id', id);
    expect(await list(key)).toBe(401);
  }, CHILD_TIMEOUT_MS);
});
