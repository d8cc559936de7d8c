/**
 * JavaScript ports of the @upstash/ratelimit 2.2.0 Lua scripts that
 * Ratelimit.slidingWindow runs, keyed by the sha1 of the script text the library sends
 * (its SCRIPTS table). If an upgrade changes a script, its sha changes, the in-memory
 * store refuses it with a clear error, and the shared test suite fails: port the new
 * script here, line by line, and update the sha.
 */

/** Just enough of a Redis keyspace: string values with optional expiry. */
export class MemoryKeyspace {
  private readonly entries = new Map<string, { value: string; expiresAt: number | undefined }>();
  private lastSweep: number;

  constructor(private readonly now: () => number) {
    this.lastSweep = now();
  }

  get(key: string): string | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return entry.value;
  }

  set(key: string, value: string): void {
    this.sweepExpired();
    this.entries.set(key, { value, expiresAt: undefined });
  }

  /** INCRBY: a missing key counts as 0; the expiry of an existing key is kept. */
  incrBy(key: string, by: number): number {
    const current = this.get(key);
    const next = (current === null ? 0 : toInteger(current)) + by;
    const entry = this.entries.get(key);
    if (entry) entry.value = String(next);
    else {
      this.sweepExpired();
      this.entries.set(key, { value: String(next), expiresAt: undefined });
    }
    return next;
  }

  pexpire(key: string, ms: number): void {
    const entry = this.entries.get(key);
    if (entry) entry.expiresAt = this.now() + ms;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Counters of identifiers that never come back would otherwise stay forever. A full
   * pass at most every 10 s, triggered by writes, keeps memory bounded by the keys
   * touched within their expiry (two windows plus a second).
   */
  private sweepExpired() {
    const now = this.now();
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.entries.delete(key);
    }
  }
}

type ScriptPort = (keyspace: MemoryKeyspace, keys: string[], args: (string | number)[]) => unknown;

/** Lua's tonumber() on a Redis value or argument, for the values these scripts see. */
function toNumber(value: string | number | null | undefined): number {
  const n = Number(value);
  if (value === null || value === undefined || value === '' || Number.isNaN(n)) {
    throw new Error(`ERR value is not a number: ${String(value)}`);
  }
  return n;
}

function toInteger(value: string): number {
  const n = toNumber(value);
  if (!Number.isInteger(n)) throw new Error('ERR value is not an integer or out of range');
  return n;
}

/** The effective limit: KEYS[3], when given and set, overrides ARGV[1] (dynamic limits). */
function effectiveLimit(keyspace: MemoryKeyspace, keys: string[], tokens: number): number {
  const dynamicLimitKey = keys[2];
  if (dynamicLimitKey) {
    const dynamicLimit = keyspace.get(dynamicLimitKey);
    if (dynamicLimit !== null) return toNumber(dynamicLimit);
  }
  return tokens;
}

/** Previous-window requests weighted by how much of the previous window still overlaps. */
function weightedPrevious(keyspace: MemoryKeyspace, previousKey: string, now: number, window: number): number {
  const previous = keyspace.get(previousKey);
  const percentageInCurrent = (now % window) / window;
  return Math.floor((1 - percentageInCurrent) * (previous === null ? 0 : toNumber(previous)));
}

/** Integer conversion of a Lua number returned to Redis (truncation toward zero). */
const luaToRedisInteger = (n: number) => Math.trunc(n);

/** slidingWindowLimitScript: KEYS current, previous[, dynamic]; ARGV tokens, now, window, incrementBy. */
const slidingWindowLimit: ScriptPort = (keyspace, keys, args) => {
  const [currentKey = '', previousKey = ''] = keys;
  const [tokens, now, window, incrementBy] = args.map(toNumber) as [number, number, number, number];
  const limit = effectiveLimit(keyspace, keys, tokens);
  const current = keyspace.get(currentKey);
  const requestsInCurrentWindow = current === null ? 0 : toNumber(current);
  const requestsInPreviousWindow = weightedPrevious(keyspace, previousKey, now, window);
  // Only check the limit when not refunding (negative rate).
  if (incrementBy > 0 && requestsInPreviousWindow + requestsInCurrentWindow >= limit) {
    return [-1, luaToRedisInteger(limit)];
  }
  const newValue = keyspace.incrBy(currentKey, incrementBy);
  // First write of this window's key: expire once it can no longer be a previous window.
  if (newValue === incrementBy) keyspace.pexpire(currentKey, window * 2 + 1000);
  return [luaToRedisInteger(limit - (newValue + requestsInPreviousWindow)), luaToRedisInteger(limit)];
};

/** slidingWindowRemainingTokensScript: same keys; ARGV tokens, now, window. */
const slidingWindowRemaining: ScriptPort = (keyspace, keys, args) => {
  const [currentKey = '', previousKey = ''] = keys;
  const [tokens, now, window] = args.map(toNumber) as [number, number, number];
  const limit = effectiveLimit(keyspace, keys, tokens);
  const current = keyspace.get(currentKey);
  const requestsInCurrentWindow = current === null ? 0 : toNumber(current);
  const requestsInPreviousWindow = weightedPrevious(keyspace, previousKey, now, window);
  const usedTokens = requestsInPreviousWindow + requestsInCurrentWindow;
  return [luaToRedisInteger(limit - usedTokens), luaToRedisInteger(limit)];
};

export const SCRIPT_PORTS: Partial<Record<string, ScriptPort>> = {
  '74740bb3d7792848093cdef586b6b6037c455fd6': slidingWindowLimit,
  '7ca36169e0fc9caedd81b4eef8e99854c157f9b5': slidingWindowRemaining,
};
