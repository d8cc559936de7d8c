import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database, DatabaseHandle } from '@/db/client';
import { countQueuedMail } from '@/db/queries/mail';
import { mailOutbox } from '@/db/schema';
import { parseConfig } from '@/server/config';
import { queueMail } from '@/server/mail/outbox';
import { MAIL_RETRY_SECONDS, sendDueMail } from '@/server/mail/sender';
import { mailStartupProblems } from '@/server/mail/settings';
import { fileTransport, smtpTransport } from '@/server/mail/transport';
import { setLogDestination } from '@/server/observability/logger';
import { WebhookWorker } from '@/server/webhooks/worker';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server';

/**
 * The mail path: a message queued in a transaction is sent by the worker's passes over a
 * real SMTP server, with a plain-text and an HTML part; a refusing server is tried again,
 * a worker that dies holding a message loses nothing, a rolled-back transaction sends
 * nothing; development without SMTP_URL writes .eml files; production without SMTP_URL
 * does not start.
 */

let handle: DatabaseHandle;
let smtp: TestSmtpServer;
const FROM = 'Contract Data API <no-reply@example.test>';
const message = (to: string, subject = 'Hello') => ({ to, subject, text: `Open https://app.example.test/verify-email#cdver_x to go on.`, html: '<p>Open it</p>' });

beforeAll(async () => {
  handle = await createTestDatabase();
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
  await handle?.close();
});
beforeEach(async () => {
  await handle.db.delete(mailOutbox);
  smtp.received.length = 0;
  smtp.refuseNext = 0;
});

const queue = (to: string, subject?: string) => handle.db.transaction((tx) => queueMail(tx as unknown as Database, message(to, subject)));

describe(`the mail outbox (${describeDriver()})`, () => {
  it('sends nothing until a worker pass, then one message with a text and an HTML part, and keeps no copy', async () => {
    await queue('ada@example.test', 'Verify your address');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(smtp.received).toHaveLength(0);
    expect(await countQueuedMail(handle.db)).toBe(1);

    const worker = new WebhookWorker({ handle, mailTransport: smtpTransport(smtp.url, FROM) });
    const pass = await worker.runOnce();
    expect(pass.mailSent).toBe(1);
    const mail = await smtp.waitFor((m) => m.to.includes('ada@example.test'));
    expect(mail.subject).toBe('Verify your address');
    expect(mail.from).toBe('no-reply@example.test');
    expect(mail.text).toContain('https://app.example.test/verify-email#cdver_x');
    expect(mail.html).toContain('<p>Open it</p>');
    expect(mail.raw).toMatch(/multipart\/alternative/);
    expect(await handle.db.select().from(mailOutbox)).toEqual([]);
  });

  it('queues nothing when the transaction rolls back', async () => {
    await expect(
      handle.db.transaction(async (tx) => {
        await queueMail(tx as unknown as Database, message('rolled@example.test'));
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await countQueuedMail(handle.db)).toBe(0);
  });

  it('tries a refused message again on its schedule, and sends it once the server accepts', async () => {
    await queue('retry@example.test');
    let now = new Date();
    const transport = smtpTransport(smtp.url, FROM);
    smtp.refuseNext = 1;
    expect(await sendDueMail(handle.db, { now: () => now, transport })).toEqual({ attempted: 1, sent: 0 });
    const [row] = await handle.db.select().from(mailOutbox);
    expect(row!.attempts).toBe(1);
    expect(row!.lastError).toMatch(/^451/);
    expect(row!.nextAttemptAt.getTime() - now.getTime()).toBe(MAIL_RETRY_SECONDS[0]! * 1000);
    // Not before it is due.
    expect(await sendDueMail(handle.db, { now: () => now, transport })).toEqual({ attempted: 0, sent: 0 });
    now = new Date(now.getTime() + MAIL_RETRY_SECONDS[0]! * 1000);
    expect(await sendDueMail(handle.db, { now: () => now, transport })).toEqual({ attempted: 1, sent: 1 });
    expect(smtp.received.map((m) => m.to)).toEqual([['retry@example.test']]);
    expect(await countQueuedMail(handle.db)).toBe(0);
  });

  it('keeps a message that a server down for good refuses, and gives up after the last retry without keeping its text', async () => {
    await queue('down@example.test');
    let now = new Date();
    const down = smtpTransport('smtp://127.0.0.1:9', FROM); // nothing listens on the discard port
    for (let attempt = 0; attempt <= MAIL_RETRY_SECONDS.length; attempt++) {
      expect((await sendDueMail(handle.db, { now: () => now, transport: down })).attempted).toBe(1);
      now = new Date(now.getTime() + (MAIL_RETRY_SECONDS[attempt] ?? 0) * 1000);
    }
    const [row] = await handle.db.select().from(mailOutbox);
    expect(row!.failedAt).not.toBeNull();
    expect(row!.text).toBe('');
    expect(row!.lastError).toMatch(/ECONNREFUSED/);
    expect(await sendDueMail(handle.db, { now: () => new Date(now.getTime() + 86_400_000), transport: down })).toEqual({ attempted: 0, sent: 0 });
  });

  it('loses nothing when a worker dies holding a message: another sends it once the lease expires', async () => {
    await queue('crash@example.test');
    // A worker claimed it and died before sending (its lease is still running).
    await handle.db.execute(sql`UPDATE mail_outbox SET lease_token = gen_random_uuid(), lease_expires_at = now() + interval '60 seconds'`);
    const transport = smtpTransport(smtp.url, FROM);
    expect(await sendDueMail(handle.db, { transport })).toEqual({ attempted: 0, sent: 0 });
    expect(await sendDueMail(handle.db, { now: () => new Date(Date.now() + 61_000), transport })).toEqual({ attempted: 1, sent: 1 });
    expect(smtp.received.map((m) => m.to)).toEqual([['crash@example.test']]);
  });

  it('sends each message once when two workers drain at the same time', async () => {
    for (let i = 0; i < 12; i++) await queue(`many${i}@example.test`);
    const transport = smtpTransport(smtp.url, FROM);
    const results = await Promise.all([sendDueMail(handle.db, { transport }), sendDueMail(handle.db, { transport })]);
    expect(results[0]!.sent + results[1]!.sent).toBe(12);
    expect(new Set(smtp.received.map((m) => m.to[0])).size).toBe(12);
    expect(smtp.received).toHaveLength(12);
  });
});

describe('without SMTP_URL', () => {
  it('development: whoever watches the folder sees a whole message or none, never one still being written', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-mail-'));
    setLogDestination(new Writable({ write: (_chunk, _e, done) => done() }));
    // A large message takes several writes; the folder is read on every turn of the event loop meanwhile.
    const big = { ...message('dev@example.test', 'A long one'), html: `<p>${'x'.repeat(2_000_000)}</p>` };
    const seen: number[] = [];
    let sending = true;
    const watch = (async () => {
      while (sending) {
        for (const f of readdirSync(dir).filter((name) => name.endsWith('.eml'))) seen.push(readFileSync(path.join(dir, f)).length);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      await fileTransport(dir, FROM).send(big);
      sending = false;
      await watch;
      const [file, ...others] = readdirSync(dir);
      expect(others).toEqual([]);
      const whole = readFileSync(path.join(dir, file!)).length;
      expect(whole).toBeGreaterThan(2_000_000);
      expect(new Set(seen)).toEqual(new Set(seen.length ? [whole] : []));
    } finally {
      setLogDestination();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('development logs the recipient, subject and link, and writes the message as an .eml file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-mail-'));
    const lines: string[] = [];
    setLogDestination(new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    try {
      await fileTransport(dir, FROM).send(message('dev@example.test', 'Verify your address'));
      const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
      expect(files).toHaveLength(1);
      const eml = readFileSync(path.join(dir, files[0]!), 'utf8');
      expect(eml).toMatch(/^To: dev@example\.test$/m);
      expect(eml).toMatch(/^Subject: Verify your address$/m);
      expect(eml).toMatch(/text\/plain/);
      expect(eml).toMatch(/text\/html/);
      const line = JSON.parse(lines.find((l) => l.includes('development outbox'))!) as Record<string, string>;
      expect(line).toMatchObject({ to: 'dev@example.test', subject: 'Verify your address', link: 'https://app.example.test/verify-email#cdver_x' });
    } finally {
      setLogDestination();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('production refuses to start, naming SMTP_URL and MAIL_FROM, unless MAIL_TRANSPORT=log', () => {
    const base = { NODE_ENV: 'production', AUTH_SECRET: 'x'.repeat(32) };
    const [problem] = mailStartupProblems(parseConfig(base));
    expect(problem).toMatch(/SMTP_URL/);
    expect(problem).toMatch(/MAIL_FROM/);
    expect(mailStartupProblems(parseConfig({ ...base, MAIL_TRANSPORT: 'log' }))).toEqual([]);
    // On Vercel too (a preview's NODE_ENV is production as well; VERCEL=1 says it anyway).
    expect(mailStartupProblems(parseConfig({ NODE_ENV: 'development', VERCEL: '1', RATE_LIMIT_STORE: 'memory', DATABASE_URL: 'postgres://x@h/db' }))).toHaveLength(1);
    expect(mailStartupProblems(parseConfig({ ...base, SMTP_URL: 'smtps://u:p@mail.example.test:465', MAIL_FROM: FROM, AUTH_URL: 'https://app.example.test' }))).toEqual([]);
    // Links need AUTH_URL's origin: never a request's Host.
    expect(mailStartupProblems(parseConfig({ ...base, SMTP_URL: 'smtp://mail.example.test:587', MAIL_FROM: FROM }))[0]).toMatch(/AUTH_URL/);
    expect(mailStartupProblems(parseConfig({}))).toEqual([]);
  });

  it('names a wrong mail variable', () => {
    expect(() => parseConfig({ SMTP_URL: 'http://mail.example.test' })).toThrow(/SMTP_URL must be a URL starting with smtp:\/\/ or smtps:\/\//);
    expect(() => parseConfig({ SMTP_URL: 'smtp://mail.example.test' })).toThrow(/MAIL_FROM is required with SMTP_URL/);
    expect(() => parseConfig({ MAIL_TRANSPORT: 'carrier-pigeon' })).toThrow(/MAIL_TRANSPORT must be smtp or log/);
  });
});
