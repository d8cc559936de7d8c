import { availableParallelism } from 'node:os';
import bcrypt from 'bcrypt';
import { PASSWORD_HASH_COST } from '@/lib/passwords';

/**
 * Password hashing with the native `bcrypt` package: it hashes on libuv's thread pool, so
 * the event loop keeps serving while a hash runs (bcryptjs computed on the main thread and
 * stalled every request of the process), and its C implementation needs less CPU (82 ms
 * against 106 ms per cost-11 comparison, measured here: docs/security.md, row 3c). A
 * worker-thread pool around bcryptjs would also free the loop, at bcryptjs's CPU cost.
 *
 * At most HASH_CONCURRENCY hashes run at once, the others wait their turn: one core fewer
 * than the machine has, and one thread fewer than libuv's thread pool (UV_THREADPOOL_SIZE,
 * 4 by default), at least one. So sign-ins never take every core from the requests the
 * process serves meanwhile, and the pool keeps a thread for file, DNS and zlib work even
 * on a machine with more than four cores. Sign-in attempts are limited before they get
 * here (sign-in-limit.ts).
 */

const HASH_CONCURRENCY = hashConcurrency(availableParallelism(), process.env.UV_THREADPOOL_SIZE);

/** The size of libuv's thread pool for a UV_THREADPOOL_SIZE value, read as libuv reads it (atoi, 0 -> 1, at most 1024). */
export function threadPoolSize(setting: string | undefined): number {
  if (setting === undefined) return 4;
  const n = Number.parseInt(setting, 10);
  if (!Number.isFinite(n) || n === 0) return 1; // atoi's 0 for "" or "abc"
  // libuv keeps the count unsigned: a negative value wraps round to the maximum.
  return n < 0 ? 1024 : Math.min(n, 1024);
}

/** How many hashes may run at once: min(cores - 1, thread pool - 1), at least 1. */
export function hashConcurrency(cores: number, threadPoolSetting: string | undefined): number {
  return Math.max(1, Math.min(cores - 1, threadPoolSize(threadPoolSetting) - 1));
}

// Compared against when the email is unknown, so that a wrong email and a wrong password
// take the same time and give the same answer. Made on first use, with the same cost as
// every stored hash.
let dummyHash: Promise<string> | undefined;

export const PASSWORD_MIN_LENGTH = 10;
/** bcrypt reads at most 72 bytes: longer passwords are refused rather than silently cut. */
export const PASSWORD_MAX_BYTES = 72;

export function passwordTooLong(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
}

export function hashPassword(password: string): Promise<string> {
  if (passwordTooLong(password)) return Promise.reject(new Error(`Passwords are at most ${PASSWORD_MAX_BYTES} bytes`));
  return inPool(() => bcrypt.hash(password, PASSWORD_HASH_COST));
}

export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  // A longer password could only match by its first 72 bytes: never accept one.
  const candidate = passwordTooLong(password) ? '' : password;
  dummyHash ??= hashPassword('not-a-real-password');
  const against = hash ?? (await dummyHash);
  const ok = await inPool(() => bcrypt.compare(candidate, against));
  return ok && Boolean(hash) && candidate === password;
}

/** Whether `hash` was made with another cost than today's (then it is made again at sign-in). */
export function needsRehash(hash: string): boolean {
  try {
    return bcrypt.getRounds(hash) !== PASSWORD_HASH_COST;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------
// The bounded pool: a counting semaphore. Waiting costs one closure, no thread.

let running = 0;
const waiting: (() => void)[] = [];

async function inPool<T>(work: () => Promise<T>): Promise<T> {
  if (running >= HASH_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    // Hands the slot straight to the next in line, or frees it.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

/** How many hashes run and wait now (tests, the flood script's figures). */
export function passwordPoolState(): { running: number; waiting: number; concurrency: number } {
  return { running, waiting: waiting.length, concurrency: HASH_CONCURRENCY };
}
