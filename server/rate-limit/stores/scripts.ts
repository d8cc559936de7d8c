import { createHash } from 'node:crypto';

/** The SHA-1 hex digest under which Redis caches a script (what EVALSHA takes). */
export function scriptSha(script: string): string {
  return createHash('sha1').update(script).digest('hex');
}

/**
 * @upstash/ratelimit >= 2.1 starts every script with `#!lua flags=allow-key-locking`.
 * Upstash accepts that shebang; plain Redis 7 rejects the flag ("Unexpected flag in
 * script shebang"). Without a shebang Redis runs the script with its default flags,
 * which is what the scripts need (they only touch their declared keys).
 */
export function stripLuaShebang(script: string): string {
  return script.startsWith('#!lua') ? script.slice(script.indexOf('\n') + 1) : script;
}

/** The error text @upstash/ratelimit looks for to fall back from EVALSHA to EVAL. */
export const NOSCRIPT_MESSAGE = 'NOSCRIPT No matching script. Please use EVAL.';

/** Arguments as @upstash/redis sends them: strings and numbers as is, the rest as JSON. */
export function serializeArg(value: unknown): string | number {
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** Values read back the way @upstash/redis deserializes them: JSON when it parses, else the string. */
export function deserializeValue<T>(raw: string | null): T | null {
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return raw as T;
  }
}
