import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database, DatabaseHandle } from '@/db/client';
import { selectSessionVersion } from '@/db/queries/sessions';
import { accessTokens, mailOutbox, users } from '@/db/schema';
import { checkLinkToken, issueLinkToken, LINK_LIFETIME_MS, redeemLink } from '@/server/access/link-tokens';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { completeSignUp, requestPasswordReset, resendVerification, resetPasswordWithLink, sendPasswordReset, verifyEmailWithLink } from '@/server/auth/accounts';
import { passwordResetAllowed } from '@/server/auth/account-limits';
import { authenticateWithPassword } from '@/server/auth/users';
import { sendDueMail } from '@/server/mail/sender';
import { smtpTransport } from '@/server/mail/transport';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { configureForFile } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp-server';

/**
 * The e-mailed links and the flows behind them, through a real SMTP server: sign-up with
 * its verification link, "Forgot password?" and its reset link, and what no link may do
 * (expired, used, replaced, tampered, of another kind or another account).
 */

const ORIGIN = 'https://contracts.example.test';
configureForFile({ AUTH_URL: `${ORIGIN}/some/path`, RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '3', RATE_LIMIT_ACCOUNT_MAIL_PER_HOUR: '100' });

let handle: DatabaseHandle;
let db: Database;
let smtp: TestSmtpServer;
const run = randomUUID().slice(0, 8); // addresses and limits of their own on a shared Redis
const address = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}-${run}`;
const email = (name: string) => `${name}-${run}@example.test`;

beforeAll(async () => {
  handle = await createTestDatabase();
  db = handle.db;
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
  await handle?.close();
});
beforeEach(() => {
  smtp.received.length = 0;
});

/** Sends what the outbox holds, then the message to `to`. */
async function mailTo(to: string, subject?: RegExp): Promise<ReceivedMail> {
  await sendDueMail(db, { transport: smtpTransport(smtp.url, 'Contract Data API <no-reply@example.test>') });
  return smtp.waitFor((m) => m.to.includes(to) && (!subject || subject.test(m.subject)), 5_000);
}
const tokenOf = (mail: ReceivedMail, path: string) => {
  const link = mail.links.find((l) => l.startsWith(`${ORIGIN}${path}#`));
  expect(link, mail.text).toBeDefined();
  return new URL(link!).hash.slice(1);
};
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
};
const userByEmail = async (e: string) => (await db.select().from(users).where(eq(users.email, e)))[0];

describe(`sign-up and verification (${describeDriver()})`, () => {
  it('creates an unverified account and mails a verification link on AUTH_URL, carrying no address or id', async () => {
    const to = email('new');
    expect(await completeSignUp(db, { email: to, password: 'a long enough password' })).toBe('created');
    const user = await userByEmail(to);
    expect(user!.emailVerifiedAt).toBeNull();
    const mail = await mailTo(to);
    expect(mail.subject).toMatch(/Verify your e-mail address for Contract Data API/);
    expect(mail.html).toContain('Contract Data API');
    const token = tokenOf(mail, '/verify-email');
    expect(TOKEN_FORMATS.email_verification.isWellFormed(token)).toBe(true);
    for (const link of mail.links) {
      expect(link).not.toContain(user!.id);
      expect(decodeURIComponent(link)).not.toContain(to);
    }
    // Only the hash is stored.
    const rows = await db.select().from(accessTokens).where(eq(accessTokens.userId, user!.id));
    expect(rows.map((r) => r.tokenHash)).toEqual([hashToken(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);

    // Unverified: no API key, calendar feed or webhook endpoint.
    const caller = createCallerFactory(internalRouter)(createInnerContext({ db, sessionUser: { id: user!.id, email: to, name: null } }));
    await expect(caller.apiKeys.create({ name: 'ci', expiresInDays: 30 })).rejects.toMatchObject({ cause: { code: 'forbidden', message: expect.stringMatching(/Verify your e-mail address first/) } });
    await expect(caller.calendarFeeds.create({ name: 'phone' })).rejects.toMatchObject({ cause: { code: 'forbidden' } });
    await expect(caller.webhooks.create({ url: 'https://hooks.example.com/x' })).rejects.toMatchObject({ cause: { code: 'forbidden' } });

    // Another account's session cannot use the link, and the link stays usable.
    const other = { id: randomUUID(), address: address() };
    expect(await verifyEmailWithLink(db, { token, address: other.address, sessionUserId: other.id })).toEqual({ ok: false, reason: 'bad_link' });
    expect(await verifyEmailWithLink(db, { token, address: address() })).toEqual({ ok: true, email: to });
    expect((await userByEmail(to))!.emailVerifiedAt).not.toBeNull();
    await expect(caller.apiKeys.create({ name: 'ci', expiresInDays: 30 })).resolves.toMatchObject({ secret: expect.stringMatching(/^cdapi_/) });
    // Single use.
    expect(await verifyEmailWithLink(db, { token, address: address() })).toEqual({ ok: false, reason: 'bad_link' });
  });

  it('tells an address that has an account that someone tried to sign up, and changes nothing', async () => {
    const to = email('taken');
    await completeSignUp(db, { email: to, password: 'the first password' });
    await mailTo(to);
    const before = await userByEmail(to);
    expect(await completeSignUp(db, { email: to.toUpperCase(), password: 'an attacker password' })).toBe('existing');
    const mail = await mailTo(to, /Someone tried to sign up/);
    expect(mail.text).toContain(`${ORIGIN}/forgot-password`);
    expect(await userByEmail(to)).toEqual(before);
    expect(await authenticateWithPassword(db, to, 'an attacker password')).toBeUndefined();
  });

  it('"Send the link again" sends a new link while the address is unverified, and nothing after', async () => {
    const to = email('resend');
    await completeSignUp(db, { email: to, password: 'a long enough password' });
    const first = tokenOf(await mailTo(to), '/verify-email');
    smtp.received.length = 0;
    const user = await userByEmail(to);
    expect(await resendVerification(db, user!.id)).toBe('sent');
    const second = tokenOf(await mailTo(to), '/verify-email');
    expect(second).not.toBe(first);
    // The first one still works (a resent link does not break one that arrives late).
    expect((await verifyEmailWithLink(db, { token: first, address: address() })).ok).toBe(true);
    expect(await resendVerification(db, user!.id)).toBe('verified');
  });
});

describe(`links that do not work (${describeDriver()})`, () => {
  let userId: string;
  beforeAll(async () => {
    const [user] = await db.insert(users).values({ email: email('links') }).returning({ id: users.id });
    userId = user!.id;
  });
  const issue = (kind: 'email_verification' | 'password_reset', now = new Date()) => db.transaction((tx) => issueLinkToken(tx as unknown as Database, kind, userId, now));
  const use = (kind: 'email_verification' | 'password_reset', token: string, now = new Date()) => db.transaction((tx) => redeemLink(tx as unknown as Database, kind, token, now));

  it('a verification link lasts 24 hours, a reset link 30 minutes, to the millisecond', async () => {
    const now = new Date();
    const verification = await issue('email_verification', now);
    const reset = await issue('password_reset', now);
    expect(LINK_LIFETIME_MS).toEqual({ email_verification: 86_400_000, password_reset: 1_800_000 });
    expect(await checkLinkToken(db, 'email_verification', verification, new Date(now.getTime() + 86_400_000 - 1))).toEqual({ userId });
    expect(await use('email_verification', verification, new Date(now.getTime() + 86_400_000))).toBeUndefined();
    expect(await use('password_reset', reset, new Date(now.getTime() + 1_800_000))).toBeUndefined();
    expect(await use('password_reset', reset, new Date(now.getTime() + 1_800_000 - 1))).toEqual({ userId });
  });

  it('tampered, of another kind, or an API key: refused', async () => {
    const token = await issue('password_reset');
    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(await use('password_reset', flipped)).toBeUndefined();
    const wellFormedUnknown = TOKEN_FORMATS.password_reset.generate();
    expect(await use('password_reset', wellFormedUnknown)).toBeUndefined();
    expect(await use('email_verification', token)).toBeUndefined();
    expect(await use('email_verification', `cdver_${token.slice(6)}`)).toBeUndefined();
    expect(await use('password_reset', '')).toBeUndefined();
    expect(await use('password_reset', token)).toEqual({ userId });
  });

  it('a newer reset link replaces the older, and any change of the password revokes them all', async () => {
    const older = await issue('password_reset');
    const newer = await issue('password_reset');
    expect(await checkLinkToken(db, 'password_reset', older)).toBeUndefined();
    expect(await checkLinkToken(db, 'password_reset', newer)).toEqual({ userId });
    // Whatever code sets a password (here a plain UPDATE): the trigger of migration 0011.
    await db.update(users).set({ passwordHash: '$2b$11$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0' }).where(eq(users.id, userId));
    expect(await checkLinkToken(db, 'password_reset', newer)).toBeUndefined();
    // Other changes of the row do not.
    const third = await issue('password_reset');
    await db.update(users).set({ name: 'Renamed' }).where(eq(users.id, userId));
    expect(await checkLinkToken(db, 'password_reset', third)).toEqual({ userId });
  });
});

describe(`forgot password (${describeDriver()})`, () => {
  it('mails a reset link; the new password works, the old does not, every session ends, and "password changed" is sent', async () => {
    const to = email('forgot');
    await completeSignUp(db, { email: to, password: 'the old password' });
    await mailTo(to);
    const user = (await userByEmail(to))!;
    const versionBefore = await selectSessionVersion(db, user.id);
    await requestPasswordReset(db, { email: ` ${to.toUpperCase()} `, address: address() });
    await until(async () => (await db.select().from(mailOutbox)).length > 0);
    const token = tokenOf(await mailTo(to, /Reset your Contract Data API password/), '/reset-password');
    smtp.received.length = 0;

    // Another account's session: refused, nothing changed.
    expect(await resetPasswordWithLink(db, { token, password: 'a brand new password', address: address(), sessionUserId: randomUUID() })).toEqual({ ok: false, reason: 'bad_link' });
    expect(await authenticateWithPassword(db, to, 'the old password')).toBeDefined();

    const from = address();
    expect(await resetPasswordWithLink(db, { token, password: 'a brand new password', address: from })).toEqual({ ok: true, email: to });
    expect(await authenticateWithPassword(db, to, 'the old password')).toBeUndefined();
    expect(await authenticateWithPassword(db, to, 'a brand new password')).toBeDefined();
    expect(await selectSessionVersion(db, user.id)).toBe(versionBefore! + 1);
    // The link reached the address: it counts as verified.
    expect((await userByEmail(to))!.emailVerifiedAt).not.toBeNull();
    const changed = await mailTo(to, /password was changed/);
    expect(changed.text).toMatch(/changed on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(changed.text).toContain(from);

    // Used: one clear refusal, nothing changed.
    expect(await resetPasswordWithLink(db, { token, password: 'yet another password', address: address() })).toEqual({ ok: false, reason: 'bad_link' });
    expect(await authenticateWithPassword(db, to, 'a brand new password')).toBeDefined();
  });

  it('an unknown address gets nothing, and the answer does not wait for the lookup', async () => {
    expect(await sendPasswordReset(db, email('nobody'))).toBe(false);
    expect(await db.select().from(mailOutbox)).toEqual([]);
  });

  it('limits requests per client address before any lookup, and per account', async () => {
    const from = address();
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await passwordResetAllowed(from, email(`limited${i}`)));
    expect(results).toEqual([true, true, true, false]);
  });
});
