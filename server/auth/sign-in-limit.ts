import { createHash } from 'node:crypto';
import type { Database } from '@/db/client';
import { SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { countSignInFailure, countSignInRefusal } from '@/server/observability/metrics';
import { consumeRateLimit, peekRateLimit, processRateLimitStore, type RateLimitResult } from '@/server/rate-limit';
import { personActor } from '@/server/security-log/actor';
import { queueSecurityEvent, recordSecurityEvent } from '@/server/security-log/record';
import { authenticateWithPassword, normalizeEmail, userIdByEmail } from './users';

/**
 * The limit on password sign-ins and sign-ups, for every path that checks a password:
 * next-auth's `/api/auth/callback/credentials` (through `authorize`, which the sign-in
 * and sign-up forms' server actions reach too) and the sign-up action, which hashes the
 * new password.
 *
 * Each password check costs a bcrypt hash. Failed attempts count against two sliding
 * windows of the API's limiter and store (Redis, Upstash or memory): the client address
 * (`sign_in_address`) and the account, by a hash of its normalised e-mail
 * (`sign_in_account`, the address itself never reaches the store). An attempt with
 * either used up is refused before anything is hashed or read from the database, so a
 * flood of wrong passwords costs two store reads per attempt, not a hash.
 *
 * The per-account limit stops guessing one account's password from many addresses; it is
 * also a way to lock a victim out (anyone who knows the e-mail can use it up). So an
 * address from which this account has signed in successfully within KNOWN_ADDRESS_MS is
 * exempt from the account's limit (its own address limit still applies): the victim keeps
 * signing in from home or the office while the attacker's addresses stay refused. Without
 * a trusted client address (no proxy configured: every client shares one bucket) nobody
 * is exempt; docs/security.md lists that residual risk.
 *
 * Checks and counts are two steps (peek, then count the failure), so attempts already
 * checked when the limit is reached still run: at most the hash pool's concurrency
 * and what waits for it, once per window.
 */

export interface LimitRefusal {
  ok: false;
  reason: 'rate_limited';
  retryAfterSeconds: number;
}

export type SignInOutcome<T> = { ok: true; value: T } | { ok: false; reason: 'wrong_credentials' } | LimitRefusal;

const KNOWN_ADDRESS_MS = 30 * 24 * 3600 * 1000;

/** The account's bucket identifier: a hash of the normalised e-mail, so that no e-mail address is stored. */
export function accountIdentifier(email: string): string {
  return createHash('sha256').update(`sign-in:${normalizeEmail(email)}`).digest('hex').slice(0, 32);
}

const knownAddressKey = (account: string, address: string) => `cda:sign-in-known:${account}:${address}`;

function retryAfterSeconds(results: RateLimitResult[], now = Date.now()): number {
  const refused = results.filter((r) => !r.allowed);
  return Math.max(1, ...refused.map((r) => Math.ceil((r.resetMs - now) / 1000)));
}

async function isKnownAddress(account: string, address: string): Promise<boolean> {
  if (address === SHARED_CLIENT_BUCKET) return false;
  try {
    return await processRateLimitStore().markers.has(knownAddressKey(account, address));
  } catch {
    return false;
  }
}

async function rememberAddress(account: string, address: string): Promise<void> {
  if (address === SHARED_CLIENT_BUCKET) return;
  try {
    await processRateLimitStore().markers.set(knownAddressKey(account, address), KNOWN_ADDRESS_MS);
  } catch {
    // Only the exemption from the account limit is lost; the store's failure is logged by the limiter.
  }
}

/**
 * Buckets this process has seen used up, until their reset: a flood is then refused from
 * memory, without a store call (as @upstash/ratelimit's ephemeralCache does for its
 * `limit`, which the peek below does not use). Bounded: the oldest entry goes first.
 */
const blockedUntil = new Map<string, number>();
const BLOCKED_MAX = 10_000;

async function peekBucket(bucket: 'sign_in_address' | 'sign_in_account', identifier: string): Promise<RateLimitResult> {
  const key = `${bucket}:${identifier}`;
  const until = blockedUntil.get(key);
  if (until !== undefined) {
    if (until > Date.now()) return { allowed: false, limit: 0, remaining: 0, resetMs: until, windowSeconds: 0, degraded: false };
    blockedUntil.delete(key);
  }
  const state = await peekRateLimit(bucket, identifier);
  if (!state.allowed) {
    if (blockedUntil.size >= BLOCKED_MAX) blockedUntil.delete(blockedUntil.keys().next().value!);
    blockedUntil.set(key, state.resetMs);
  }
  return state;
}

/**
 * Whether an attempt would be refused now, without hashing or counting anything: for the
 * route handler, which then answers 429 before next-auth reads the request.
 */
export async function signInRefusal(address: string, email: string): Promise<LimitRefusal | undefined> {
  const account = accountIdentifier(email);
  const [byAddress, byAccount] = await Promise.all([peekBucket('sign_in_address', address), peekBucket('sign_in_account', account)]);
  if (!byAddress.allowed) return refusal([byAddress], 'sign_in_address');
  if (!byAccount.allowed && !(await isKnownAddress(account, address))) return refusal([byAccount], 'sign_in_account');
  return undefined;
}

function refusal(results: RateLimitResult[], bucket: 'sign_in_address' | 'sign_in_account'): LimitRefusal {
  countSignInRefusal(bucket);
  return { ok: false, reason: 'rate_limited', retryAfterSeconds: retryAfterSeconds(results) };
}

/** Forgets what this process remembered (tests). */
export function forgetBlockedSignIns(): void {
  blockedUntil.clear();
}

/**
 * Checks `password` for `email` unless the address or the account is out of failed
 * attempts; counts a failure against both.
 */
export async function signInWithPasswordLimited(
  db: Database,
  attempt: { address: string; email: string; password: string; userAgent?: string | null },
): Promise<SignInOutcome<{ id: string; email: string; name: string | null }>> {
  const account = accountIdentifier(attempt.email);
  const refused = await signInRefusal(attempt.address, attempt.email);
  if (refused) return refused;
  const user = await authenticateWithPassword(db, attempt.email, attempt.password);
  const from = { clientAddress: attempt.address === SHARED_CLIENT_BUCKET ? null : attempt.address, userAgent: attempt.userAgent?.slice(0, 300) ?? null };
  if (!user) {
    countSignInFailure();
    // In the account's own log when there is one; otherwise in nobody's (no one learns
    // whether an account exists). Batched: failures come at an attacker's pace.
    const [subject] = await Promise.all([
      userIdByEmail(db, attempt.email),
      consumeRateLimit('sign_in_address', attempt.address),
      consumeRateLimit('sign_in_account', account),
    ]);
    queueSecurityEvent(db, {
      kind: 'sign_in.failed',
      subjectUserId: subject ?? null,
      objectType: 'user',
      objectId: subject ?? null,
      objectLabel: subject ? normalizeEmail(attempt.email) : null,
      actor: { kind: 'user', userId: null, label: 'unknown (wrong e-mail or password)', ...from },
    });
    return { ok: false, reason: 'wrong_credentials' };
  }
  await rememberAddress(account, attempt.address);
  await recordSecurityEvent(db, { kind: 'sign_in.succeeded', subjectUserId: user.id, objectType: 'user', objectId: user.id, objectLabel: user.email, actor: personActor(user, from), details: { method: 'password' } });
  return { ok: true, value: user };
}

/**
 * Creates an account unless the address is out of attempts. Every sign-up counts against
 * the address (each one hashes a password, and a refused one tells whether the e-mail is
 * taken): a client can create accounts or probe for taken e-mails only at that pace.
 */
export async function signUpLimited<T>(address: string, create: () => Promise<T>): Promise<{ ok: true; value: T } | LimitRefusal> {
  // A denied request counts nothing, so one call checks and counts.
  const counted = await consumeRateLimit('sign_in_address', address);
  if (!counted.allowed) return refusal([counted], 'sign_in_address');
  return { ok: true, value: await create() };
}
