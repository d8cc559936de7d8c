import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { simpleParser } from 'mailparser';
import { DEMO_USERS } from '@/db/seed/demo';

/**
 * `npm run dev` with nothing configured (no SMTP_URL, no DATABASE_URL): "Forgot password?"
 * for a demo user, then a sign-up, put their messages in `.data/mail/` as .eml files (the
 * reset link opens its page, the verification link verifies), and the server's log
 * names the recipient, the subject and the link (issue 24: the flows work after
 * `npm ci && npm run dev`). Slow (next dev compiles the pages it serves): one test.
 * Its own embedded database (PGLITE_DIR), never the developer's .data/pglite.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = Number(process.env.E2E_DEV_PORT ?? Number(process.env.E2E_PORT ?? 3210) + 100);
const MAIL_DIR = path.join(ROOT, '.data', 'mail');
// The outbox's files; none before the first message creates the folder (a fresh clone).
const mailFiles = (): string[] => (existsSync(MAIL_DIR) ? readdirSync(MAIL_DIR) : []);

test('npm run dev with nothing configured: the message is logged and written to .data/mail/', async ({ page }) => {
  test.setTimeout(300_000);
  const before = new Set(mailFiles());
  const pglite = mkdtempSync(path.join(os.tmpdir(), 'cda-dev-outbox-'));
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(DATABASE_|POSTGRES_|REDIS_|UPSTASH_|KV_|SMTP_|MAIL_|AUTH_URL|NODE_ENV|E2E_)/.test(name)) env[name] = value;
  }
  let log = '';
  const dev: ChildProcess = spawn('npm', ['run', 'dev'], { cwd: ROOT, env: { ...(env as NodeJS.ProcessEnv), PORT: String(PORT), PGLITE_DIR: pglite, LOG_FORMAT: 'json', NEXT_TELEMETRY_DISABLED: '1' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  dev.stdout!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  dev.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  try {
    await expect.poll(async () => (await fetch(`http://localhost:${PORT}/forgot-password`).catch(() => undefined))?.status, { timeout: 240_000, intervals: [1000] }).toBe(200);
    await page.goto(`http://localhost:${PORT}/forgot-password`);
    const send = page.getByRole('button', { name: 'Send me a link' });
    await expect.poll(() => send.evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { timeout: 60_000 }).toBe(true);
    await page.getByLabel('Email').fill(DEMO_USERS.alice.email);
    await send.click();
    await expect(page.getByRole('status')).toContainText('Check your e-mail', { timeout: 60_000 });

    let file: string | undefined;
    await expect.poll(() => (file = mailFiles().find((f) => f.endsWith('.eml') && !before.has(f))), { timeout: 30_000 }).toBeDefined();
    const eml = readFileSync(path.join(MAIL_DIR, file!), 'utf8');
    expect(eml).toMatch(new RegExp(`^To: ${DEMO_USERS.alice.email.replace('.', '\\.')}$`, 'm'));
    expect(eml).toMatch(/^Subject: Reset your Contract Data API password$/m);
    // The text part as a mail client reads it (quoted-printable wraps long lines in the file).
    const text = (await simpleParser(eml)).text ?? '';
    const link = new RegExp(`http://localhost:${PORT}/reset-password#cdpwr_[0-9A-Za-z]{38}`).exec(text)?.[0];
    expect(link).toBeDefined();
    // The log line: to, subject, the link. Written after the file, and lines wait up to
    // 100 ms in the logger's buffer: polled, and only a whole line counts.
    let line: string | undefined;
    await expect.poll(() => (line = log.split('\n').find((l) => l.includes('development outbox') && l.trimEnd().endsWith('}'))), { timeout: 10_000 }).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ to: DEMO_USERS.alice.email, subject: 'Reset your Contract Data API password', link });
    // The link works.
    await page.goto(link!);
    await expect(page.getByRole('heading', { name: 'Set a new password' })).toBeVisible();
    rmSync(path.join(MAIL_DIR, file!));

    // Sign-up: the verification link arrives in the same outbox and verifies the address.
    const newcomer = `dev-outbox-${Date.now()}@example.com`;
    const seen = new Set(mailFiles());
    // next dev compiles a page on its first request: warm both pages first, then wait for hydration.
    const hydrated = (name: string) =>
      expect.poll(() => page.getByRole('button', { name }).evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { timeout: 60_000 }).toBe(true);
    for (const warm of ['/sign-up', '/verify-email']) {
      await expect.poll(async () => (await fetch(`http://localhost:${PORT}${warm}`).catch(() => undefined))?.status, { timeout: 180_000, intervals: [1000] }).toBe(200);
    }
    await page.goto(`http://localhost:${PORT}/sign-up`, { timeout: 120_000 });
    await hydrated('Create account');
    await page.getByLabel('Name').fill('Dev Newcomer');
    await page.getByLabel('Email').fill(newcomer);
    await page.getByLabel('Password').fill('a-long-enough-password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page.getByRole('status')).toContainText('Check your e-mail to finish', { timeout: 60_000 });
    let welcome: string | undefined;
    await expect
      .poll(() => (welcome = mailFiles().find((f) => f.endsWith('.eml') && !seen.has(f) && readFileSync(path.join(MAIL_DIR, f), 'utf8').includes(newcomer))), { timeout: 30_000 })
      .toBeDefined();
    const welcomeText = (await simpleParser(readFileSync(path.join(MAIL_DIR, welcome!), 'utf8'))).text ?? '';
    const verify = new RegExp(`http://localhost:${PORT}/verify-email#cdver_[0-9A-Za-z]{38}`).exec(welcomeText)?.[0];
    expect(verify).toBeDefined();
    await page.goto(verify!, { timeout: 120_000 });
    await hydrated('Verify my e-mail address');
    await page.getByRole('button', { name: 'Verify my e-mail address' }).click();
    await expect(page.getByRole('status')).toContainText('is verified', { timeout: 60_000 });
    rmSync(path.join(MAIL_DIR, welcome!));
  } finally {
    if (dev.pid) process.kill(-dev.pid, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    rmSync(pglite, { recursive: true, force: true });
  }
});
