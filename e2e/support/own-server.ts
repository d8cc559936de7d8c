import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * A second production server for a spec that needs its own settings or its own log
 * (e2e/web-server.ts: its own throw-away PGlite database, seeded, and in-memory rate
 * limits). Its stdout and stderr are collected, so a spec can check what a request
 * logged. Never the suite's Postgres or Redis: a spec must not reset the database the
 * other specs use.
 */
export interface OwnServer {
  base: string;
  /** Its AUTH_SECRET (to read or write a session cookie). */
  secret: string;
  /** Everything the server has written so far (seed, `next start`, requests). */
  log(): string;
  stop(): void;
}

export async function startOwnServer(port: number, extraEnv: Record<string, string> = {}): Promise<OwnServer> {
  const { DATABASE_URL: _d, REDIS_URL: _r, UPSTASH_REDIS_REST_URL: _u, KV_REST_API_URL: _k, ...env } = process.env;
  const base = `http://127.0.0.1:${port}`;
  const secret = process.env.E2E_AUTH_SECRET ?? 'own-server-secret-at-least-32-characters';
  let output = '';
  const server: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join('e2e', 'web-server.ts')], {
    cwd: path.resolve(import.meta.dirname, '..', '..'),
    env: {
      ...env,
      E2E_PORT: String(port),
      NEXT_TELEMETRY_DISABLED: '1',
      AUTH_SECRET: secret,
      AUTH_TRUST_HOST: 'true',
      RATE_LIMIT_STORE: 'memory',
      // Production needs a way to send mail: only logged, unless the spec passes SMTP_URL
      // and MAIL_TRANSPORT=smtp.
      MAIL_TRANSPORT: 'log',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const deadline = Date.now() + 140_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/v1/openapi.json`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || server.exitCode !== null) {
      server.kill('SIGTERM');
      throw new Error(`the server on port ${port} did not start:\n${output.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { base, secret, log: () => output, stop: () => void server.kill('SIGTERM') };
}
