/**
 * A fetch that waits and retries when the API answers 429 (rate limited) or 503 (briefly
 * unavailable) with a `Retry-After` header. The API is read-only, so repeating any of its
 * requests is safe.
 */

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  status: number;
  /** How long the client waits before this retry, from `Retry-After`. */
  waitSeconds: number;
  url: string;
}

export interface RetryOptions {
  /** Retries after the first answer (default 3). */
  maxRetries?: number;
  /**
   * The longest `Retry-After` the client waits for, in seconds (default 60). A longer one
   * (the export's hourly limit can ask for up to an hour) is returned to the caller as the
   * 429 it is, so that a script never hangs silently.
   */
  maxWaitSeconds?: number;
  /** Called before each wait, for example to log it. */
  onRetry?: (info: RetryInfo) => void;
}

export type FetchFunction = (request: Request) => Promise<Response>;

const RETRYABLE = new Set([429, 503]);

/**
 * Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110).
 * undefined when the header is absent or unreadable: then the answer is not retried.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // Every HTTP-date form starts with the day's name ("Tue, 24 Nov 2026 12:00:30 GMT");
  // Date.parse alone would also read "-1" or "2026" as dates.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wraps `fetchFn` so that 429 and 503 answers with `Retry-After` are waited out and retried. */
export function retryOnRateLimit(fetchFn: FetchFunction, options: RetryOptions = {}): FetchFunction {
  const maxRetries = options.maxRetries ?? 3;
  const maxWaitSeconds = options.maxWaitSeconds ?? 60;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // A request body can be read once: every attempt sends a copy.
      const response = await fetchFn(request.clone());
      if (!RETRYABLE.has(response.status) || attempt >= maxRetries) return response;
      const waitSeconds = retryAfterSeconds(response.headers.get('Retry-After'));
      if (waitSeconds === undefined || waitSeconds > maxWaitSeconds) return response;
      await response.body?.cancel();
      options.onRetry?.({ attempt: attempt + 1, status: response.status, waitSeconds, url: request.url });
      await sleep(waitSeconds * 1000, request.signal);
    }
  };
}
