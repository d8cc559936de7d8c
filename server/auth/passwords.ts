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
 * At most HASH_CONCURRENCY hashes run at once, the others wait their turn: by default one
 * core fewer than the machine has (at least one), so that sign-ins never take every core
 * from the requests the process serves meanwhile, and the thread pool keeps threads for
 * file and DNS work. Sign-in attempts are limited before they get here (sign-in-limit.ts).
 */

const HASH_CONCURRENCY = Math.max(1, availableParallelism() - 1);

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
