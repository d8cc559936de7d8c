import { errorCodeOf } from '@/server/errors';

/** What one part's check came to, and how long it took. */
export type Outcome<T> = { ok: true; value: T; durationMs: number } | { ok: false; error: string; durationMs: number };

/**
 * Runs `work` and gives up after `budgetMs` (the work itself is left to finish or fail on
 * its own: a database that does not answer is not waited for). Never rejects.
 */
export async function withinBudget<T>(work: () => Promise<T>, budgetMs: number): Promise<Outcome<T>> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), budgetMs);
  });
  const running = (async () => work())();
  running.catch(() => {});
  try {
    const result = await Promise.race([running.then((value) => ({ value })), expired]);
    if (result === 'timeout') return { ok: false, error: 'timeout', durationMs: elapsed() };
    return { ok: true, value: result.value, durationMs: elapsed() };
  } catch (error) {
    return { ok: false, error: safeErrorCode(error), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}

// An error code is an identifier from a fixed list (SQLSTATE, ECONNREFUSED,
// CONNECT_TIMEOUT): nothing of a host, user or URL fits this shape.
const CODE = /^[A-Z0-9_]{2,40}$/;
const CLASS_NAME = /^[A-Za-z]{2,60}$/;

/**
 * The error as a code safe to show anyone: the first code down its cause chain, else its
 * class name (MaxRetriesPerRequestError, StoreUnavailableError), else `error`. Never its
 * message: a driver's message can quote the connection string.
 */
export function safeErrorCode(error: unknown): string {
  const code = errorCodeOf(error, (c) => CODE.test(c));
  if (code) return code;
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name === 'string' && CLASS_NAME.test(name) && name !== 'Error') return name;
  return 'error';
}
