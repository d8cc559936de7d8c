import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database, DatabaseHandle } from '@/db/client';
import { accessTokens, contractCounts, contracts, mailOutbox, memberships, oauthAccounts, organizations, users, webhookEndpoints } from '@/db/schema';
import { wasRevokedElsewhere } from '@/server/access/revocations';
import { changePassword } from '@/server/accounts/change-password';
import { deleteAccount, FRESH_SIGN_IN_SECONDS, isFreshGitHubSignIn } from '@/server/accounts/delete-account';
import { sessionIsCurrent, stampSessionVersion } from '@/server/auth/session-version';
import { signInWithPasswordLimited } from '@/server/auth/sign-in-limit';
import { createUserWithPassword } from '@/server/auth/users';
import { setProcessDatabase } from '@/server/database';
import { sendDueMail } from '@/server/mail/sender';
import { smtpTransport } from '@/server/mail/transport';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server';
import { newApiKey, newFeedToken } from '../helpers/tokens';
import { awayFromWindowEdge } from '../helpers/window-edge';

/**
 * Settings → Account (issue 24): changing the password and deleting the account, on the
 * services the server actions call (server/accounts/), against the real database and the
 * rate-limit store of the run (Redis with REDIS_URL, else memory). The pages, the e-mails
 * and the browser's session are in e2e/account-settings.spec.ts.
 */

configureForFile({
  ...PROXY_CLIENT_ADDRESS,
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '5',
  RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: '8',
  RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS: '3600',
  RATE_LIMIT_SIGN_IN_ACCOUNT_WINDOW_SECONDS: '14400',
});

const PASSWORD = 'the first password';
const NEW_PASSWORD = 'a second, better password';
const RUN = randomBytes(4).toString('hex');
let n = 0;
/** A client address of its own per test: the limits of one test never reach another (or another run's, in Redis). */
const address = () => `2001:db8:${RUN.slice(0, 4)}:${RUN.slice(4)}::${(++n).toString(16)}`;

let handle: DatabaseHandle;
let db: Database;
let smtp: TestSmtpServer;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  db = handle.db;
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
  await handle?.close();
});

/** What the outbox holds for `to` (queued in the change's transaction, not yet sent). */
const queuedFor = (to: string) => db.select({ subject: mailOutbox.subject, text: mailOutbox.text }).from(mailOutbox).where(eq(mailOutbox.recipient, to));
/** Sends the outbox over the test's SMTP server (what the worker's pass does) and waits for the message to `to`. */
async function deliveredTo(to: string, subject: RegExp) {
  await sendDueMail(db, { transport: smtpTransport(smtp.url, 'Contract Data API <no-reply@example.test>') });
  return smtp.waitFor((m) => m.to.includes(to) && subject.test(m.subject), 10_000);
}
afterEach(() => vi.restoreAllMocks());
// Attempts are counted within one window: hour-long, so that a test seldom waits for a boundary.
beforeEach(() => awayFromWindowEdge(3600, 10_000), 15_000);

async function newPerson(password: string | null = PASSWORD) {
  const email = `person-${RUN}-${++n}@example.com`;
  if (password === null) {
    const [row] = await db.insert(users).values({ email }).returning({ id: users.id });
    return { id: row!.id, email };
  }
  const user = await createUserWithPassword(db, { email, password });
  return { id: user.id, email };
}

/** A session token of the person as next-auth issues it (the session version stamped). */
async function session(userId: string) {
  const token = { sub: userId, sv: undefined as unknown };
  expect(await stampSessionVersion(db, token)).toBe(true);
  return token;
}

const signsIn = async (email: string, password: string) => (await signInWithPasswordLimited(db, { address: address(), email, password })).ok;

describe('change password', () => {
  it('with the right current password: the new one signs in, the old one no more, and every earlier session ends', async () => {
    const person = await newPerson();
    const before = await session(person.id);
    const reset = await db
      .insert(accessTokens)
      .values({ userId: person.id, kind: 'password_reset', name: 'reset', tokenHash: randomBytes(32).toString('hex'), hint: 'x', expiresAt: new Date(Date.now() + 1_800_000) })
      .returning({ id: accessTokens.id });
    const from = address();
    const outcome = await changePassword(db, { userId: person.id, address: from, currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(outcome).toMatchObject({ ok: true, email: person.email });
    expect(await sessionIsCurrent(db, before)).toBe(false);
    expect(await signsIn(person.email, NEW_PASSWORD)).toBe(true);
    expect(await signsIn(person.email, PASSWORD)).toBe(false);
    // An outstanding password-reset link no longer works.
    const [link] = await db.select({ revokedAt: accessTokens.revokedAt }).from(accessTokens).where(eq(accessTokens.id, reset[0]!.id));
    expect(link!.revokedAt).not.toBeNull();
    // The e-mail: when, and from which client address; no password in it.
    const mail = await deliveredTo(person.email, /password was changed/);
    const when = outcome.ok ? `${outcome.changedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '';
    expect(mail.text).toContain(when);
    expect(mail.text).toContain(from);
    expect(mail.html).toContain(from);
    expect(mail.text).not.toContain(NEW_PASSWORD);
  });

  it("refuses a new password that breaks sign-up's rules or equals the current one, before any hash, changing nothing", async () => {
    const person = await newPerson();
    const before = await session(person.id);
    const compare = vi.spyOn(bcrypt, 'compare');
    const hash = vi.spyOn(bcrypt, 'hash');
    const cases: [string, string, string][] = [
      [PASSWORD, 'short', 'At least 10 characters.'],
      [PASSWORD, 'x'.repeat(73), 'At most 72 bytes'],
      [PASSWORD, 'é'.repeat(40), 'At most 72 bytes'],
      [PASSWORD, PASSWORD, 'Choose a password other than your current one.'],
    ];
    for (const [currentPassword, newPassword, message] of cases) {
      const outcome = await changePassword(db, { userId: person.id, address: address(), currentPassword, newPassword });
      expect(outcome.ok).toBe(false);
      expect(outcome.ok === false && outcome.reason === 'invalid' && outcome.fieldErrors.newPassword).toContain(message);
    }
    expect(await changePassword(db, { userId: person.id, address: address(), currentPassword: '', newPassword: NEW_PASSWORD })).toMatchObject({
      ok: false,
      reason: 'invalid',
      fieldErrors: { currentPassword: 'Enter your current password.' },
    });
    expect(compare).not.toHaveBeenCalled();
    expect(hash).not.toHaveBeenCalled();
    expect(await sessionIsCurrent(db, before)).toBe(true);
    expect(await signsIn(person.email, PASSWORD)).toBe(true);
  });

  it('a wrong current password is a failed sign-in: it counts against the address, which the sign-in form then refuses too', async () => {
    const person = await newPerson();
    const from = address();
    const before = await session(person.id);
    for (let i = 0; i < 5; i++) {
      const outcome = await changePassword(db, { userId: person.id, address: from, currentPassword: `wrong guess ${i}`, newPassword: NEW_PASSWORD });
      expect(outcome).toEqual({ ok: false, reason: 'wrong_password' });
    }
    const compare = vi.spyOn(bcrypt, 'compare');
    // The right password now: refused before anything is hashed, with the time to wait.
    const refused = await changePassword(db, { userId: person.id, address: from, currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(refused).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(refused.ok === false && refused.reason === 'rate_limited' && refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(await signInWithPasswordLimited(db, { address: from, email: person.email, password: PASSWORD })).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(compare).not.toHaveBeenCalled();
    expect(await sessionIsCurrent(db, before)).toBe(true);
    expect(await queuedFor(person.email)).toEqual([]);
  });

  it("wrong guesses from many addresses use up the account's limit: the guesser is refused, the password unchanged", async () => {
    const person = await newPerson();
    for (let i = 0; i < 8; i++) {
      expect(await changePassword(db, { userId: person.id, address: address(), currentPassword: `guess ${i}`, newPassword: NEW_PASSWORD })).toEqual({
        ok: false,
        reason: 'wrong_password',
      });
    }
    expect(await changePassword(db, { userId: person.id, address: address(), currentPassword: PASSWORD, newPassword: NEW_PASSWORD })).toMatchObject({
      ok: false,
      reason: 'rate_limited',
    });
    const [row] = await db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, person.id));
    expect(await bcrypt.compare(PASSWORD, row!.hash!)).toBe(true);
  });

  it('two changes checked against the same current password at once: one applies, the other changes nothing', async () => {
    const person = await newPerson();
    const outcomes = await Promise.all(
      ['first new password', 'second new password'].map((newPassword) => changePassword(db, { userId: person.id, address: address(), currentPassword: PASSWORD, newPassword })),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    const winner = outcomes[0]!.ok ? 'first new password' : 'second new password';
    const loser = outcomes[0]!.ok ? 'second new password' : 'first new password';
    expect(outcomes.find((o) => !o.ok)).toMatchObject({ ok: false });
    expect(await signsIn(person.email, winner)).toBe(true);
    expect(await signsIn(person.email, loser)).toBe(false);
  });

  it('an account without a password (GitHub only) has none to change', async () => {
    const person = await newPerson(null);
    expect(await changePassword(db, { userId: person.id, address: address(), currentPassword: 'anything at all', newPassword: NEW_PASSWORD })).toEqual({
      ok: false,
      reason: 'no_password',
    });
  });
});

describe('delete account', () => {
  async function organisation(name: string, members: [string, 'owner' | 'admin' | 'member'][]) {
    const [org] = await db.insert(organizations).values({ name }).returning({ id: organizations.id });
    await db.insert(memberships).values(members.map(([userId, role]) => ({ userId, organizationId: org!.id, role })));
    return org!.id;
  }
  const contract = async (ownerId: string, organizationId: string | null, title: string) => {
    const [row] = await db.insert(contracts).values({ ownerId, organizationId, title, fileName: `${title}.pdf`, fileSize: 10 }).returning({ id: contracts.id });
    return row!.id;
  };
  const exists = async (userId: string) => (await db.select({ id: users.id }).from(users).where(eq(users.id, userId))).length === 1;
  const now = new Date();
  const asPasswordSession = { method: 'credentials', at: Math.floor(now.getTime() / 1000) };

  it('removes personal contracts, keys, feeds, webhook endpoints, memberships and sessions; organisation contracts go to another member', async () => {
    const person = await newPerson();
    const colleague = await newPerson();
    const bystander = await newPerson();
    const org = await organisation(`Shared ${RUN}`, [
      [person.id, 'admin'],
      [colleague.id, 'owner'],
    ]);
    const personal = await contract(person.id, null, 'personal');
    const shared = await contract(person.id, org, 'shared');
    const othersContract = await contract(bystander.id, null, 'not mine');
    const { key, id: keyId } = await newApiKey(db, person.id);
    await newFeedToken(db, person.id);
    const bystanderKey = await newApiKey(db, bystander.id);
    await db.insert(webhookEndpoints).values({ userId: person.id, url: 'https://hooks.example.com/x', eventTypes: ['contract.created'], renewalOffsets: [], secretCiphertext: 'c', secretHint: 'h' });
    await db.insert(oauthAccounts).values({ provider: 'github', providerAccountId: `gh-${RUN}`, userId: person.id });
    const signedIn = await session(person.id);
    const list = (k: string) => send(apiRequest('GET', '/contracts?limit=1', { key: k }));
    expect((await list(key)).status).toBe(200); // now in this process's key cache

    const outcome = await deleteAccount(db, { userId: person.id, address: address(), confirmEmail: `  ${person.email.toUpperCase()} `, password: PASSWORD, session: asPasswordSession });
    expect(outcome).toMatchObject({ ok: true, email: person.email });

    expect(await exists(person.id)).toBe(false);
    expect(await sessionIsCurrent(db, signedIn)).toBe(false);
    const mail = await deliveredTo(person.email, /account was deleted/);
    expect(mail.text).toContain('API keys, calendar feeds and webhook endpoints are gone');
    expect((await list(key)).status).toBe(401);
    // Announced to the other instances through the shared store (none to announce to with the memory store).
    if (process.env.REDIS_URL) expect(await wasRevokedElsewhere(keyId)).toBe(true);
    const remaining = await db.select({ id: contracts.id, ownerId: contracts.ownerId }).from(contracts);
    expect(remaining.find((c) => c.id === personal)).toBeUndefined();
    expect(remaining.find((c) => c.id === shared)?.ownerId).toBe(colleague.id);
    expect(remaining.find((c) => c.id === othersContract)?.ownerId).toBe(bystander.id);
    expect(await db.select().from(accessTokens).where(eq(accessTokens.userId, person.id))).toEqual([]);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.userId, person.id))).toEqual([]);
    expect(await db.select().from(memberships).where(eq(memberships.userId, person.id))).toEqual([]);
    expect(await db.select().from(oauthAccounts).where(eq(oauthAccounts.userId, person.id))).toEqual([]);
    expect(await db.select().from(contractCounts).where(eq(contractCounts.scopeId, person.id))).toEqual([]);
    // The organisation and everyone else are untouched.
    expect(await db.select().from(memberships).where(eq(memberships.organizationId, org))).toHaveLength(1);
    expect((await list(bystanderKey.key)).status).toBe(200);
  });

  it('refuses a mistyped e-mail address or a wrong password, deleting nothing; wrong passwords count as failed sign-ins', async () => {
    const person = await newPerson();
    const from = address();
    expect(await deleteAccount(db, { userId: person.id, address: from, confirmEmail: `x${person.email}`, password: PASSWORD, session: asPasswordSession })).toEqual({
      ok: false,
      reason: 'email_mismatch',
    });
    for (let i = 0; i < 5; i++) {
      expect(await deleteAccount(db, { userId: person.id, address: from, confirmEmail: person.email, password: `wrong ${i}`, session: asPasswordSession })).toEqual({
        ok: false,
        reason: 'wrong_password',
      });
    }
    expect(await deleteAccount(db, { userId: person.id, address: from, confirmEmail: person.email, password: PASSWORD, session: asPasswordSession })).toMatchObject({
      ok: false,
      reason: 'rate_limited',
    });
    expect(await exists(person.id)).toBe(true);
    expect(await queuedFor(person.email)).toEqual([]);
  });

  it("the sole owner of an organisation cannot delete (the organisation is named) until another owner exists", async () => {
    const person = await newPerson();
    const member = await newPerson();
    const org = await organisation(`Solo ${RUN}`, [
      [person.id, 'owner'],
      [member.id, 'admin'],
    ]);
    const compare = vi.spyOn(bcrypt, 'compare');
    const refused = await deleteAccount(db, { userId: person.id, address: address(), confirmEmail: person.email, password: PASSWORD, session: asPasswordSession });
    expect(refused).toEqual({ ok: false, reason: 'blocked', organizations: [{ id: org, name: `Solo ${RUN}`, reason: 'sole_owner' }] });
    expect(compare).not.toHaveBeenCalled(); // refused before the password is even checked
    expect(await exists(person.id)).toBe(true);

    // The last member of an organisation it does not own is refused too (its contracts would have nobody).
    const loner = await newPerson();
    await organisation(`Alone ${RUN}`, [[loner.id, 'member']]);
    expect(await deleteAccount(db, { userId: loner.id, address: address(), confirmEmail: loner.email, password: PASSWORD, session: asPasswordSession })).toMatchObject({
      ok: false,
      reason: 'blocked',
      organizations: [{ name: `Alone ${RUN}`, reason: 'last_member' }],
    });

    await db.update(memberships).set({ role: 'owner' }).where(eq(memberships.userId, member.id));
    expect(await deleteAccount(db, { userId: person.id, address: address(), confirmEmail: person.email, password: PASSWORD, session: asPasswordSession })).toMatchObject({ ok: true });
    expect(await db.select({ role: memberships.role }).from(memberships).where(eq(memberships.organizationId, org))).toEqual([{ role: 'owner' }]);
  });

  it('an account without a password: only a session that signed in with GitHub within the last 10 minutes', async () => {
    const person = await newPerson(null);
    const at = (secondsAgo: number) => Math.floor(now.getTime() / 1000) - secondsAgo;
    for (const stale of [{ method: 'github', at: at(FRESH_SIGN_IN_SECONDS + 5) }, { method: 'credentials', at: at(1) }, {}, { method: 'github' }]) {
      expect(await deleteAccount(db, { userId: person.id, address: address(), confirmEmail: person.email, session: stale, now })).toEqual({
        ok: false,
        reason: 'needs_fresh_sign_in',
      });
    }
    expect(await exists(person.id)).toBe(true);
    expect(await deleteAccount(db, { userId: person.id, address: address(), confirmEmail: person.email, session: { method: 'github', at: at(30) }, now })).toMatchObject({ ok: true });
    expect(await exists(person.id)).toBe(false);
  });

  it('isFreshGitHubSignIn: GitHub only, within FRESH_SIGN_IN_SECONDS, not from the future', () => {
    const t = Math.floor(now.getTime() / 1000);
    expect(isFreshGitHubSignIn({ method: 'github', at: t - FRESH_SIGN_IN_SECONDS }, now)).toBe(true);
    expect(isFreshGitHubSignIn({ method: 'github', at: t - FRESH_SIGN_IN_SECONDS - 1 }, now)).toBe(false);
    expect(isFreshGitHubSignIn({ method: 'github', at: t + 3600 }, now)).toBe(false);
    expect(isFreshGitHubSignIn({ method: 'credentials', at: t }, now)).toBe(false);
  });

  it('a second deletion of a deleted account finds nothing to do', async () => {
    const person = await newPerson();
    const input = { userId: person.id, address: address(), confirmEmail: person.email, password: PASSWORD, session: asPasswordSession };
    expect(await deleteAccount(db, input)).toMatchObject({ ok: true });
    expect(await deleteAccount(db, input)).toEqual({ ok: false, reason: 'gone' });
  });
});
