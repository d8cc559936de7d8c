import { createHash, randomBytes } from 'node:crypto';
import type { LinkTokenKind, TokenKind } from '@/lib/tokens';

/**
 * Secret token format, after GitHub's tokens: a prefix that names the product and the
 * kind of token, 32 base62 characters from a cryptographic source (190 bits), then the
 * CRC32 of those characters as 6 base62 characters. The prefix lets secret scanners
 * recognise a leaked token and keeps the kinds apart (an API key is never a calendar feed
 * token: each kind only accepts its own prefix); the checksum rejects a mistyped token
 * before any database lookup.
 *
 *   cdapi_<32 random base62><6 checksum base62>   (44 characters): API keys
 *   cdcal_<32 random base62><6 checksum base62>   (44 characters): calendar feed tokens
 *   cdver_…, cdpwr_… (44 characters): e-mailed verification and password-reset links
 */
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 characters: bytes >= 248 (4 × 62) are rejected to avoid modulo bias. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A 32-bit number as exactly 6 base62 digits (62^6 > 2^32), zero-padded. */
function toBase62(value: number, width: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

export function checksumOf(randomPart: string): string {
  return toBase62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** SHA-256, hex: what is stored. A slow hash adds nothing for 190 random bits. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** One kind of token: the format above with its own prefix. */
export interface TokenFormat {
  readonly prefix: string;
  readonly length: number;
  generate(): string;
  /** Whether the text has this kind's prefix, the format and a correct checksum (no database involved). */
  isWellFormed(text: string): boolean;
  /** The non-secret hint shown in lists: prefix and last four characters. */
  hint(token: string): string;
}

export function tokenFormat(prefix: string): TokenFormat {
  // The prefix goes into a regular expression as is: letters and a final underscore only.
  if (!/^[a-z]+_$/.test(prefix)) throw new Error(`token prefix must be lower-case letters and "_": ${prefix}`);
  const length = prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
  const pattern = new RegExp(`^${prefix}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
  return {
    prefix,
    length,
    generate() {
      const random = randomBase62(RANDOM_LENGTH);
      return `${prefix}${random}${checksumOf(random)}`;
    },
    isWellFormed(text) {
      if (text.length !== length || !pattern.test(text)) return false;
      const random = text.slice(prefix.length, prefix.length + RANDOM_LENGTH);
      return checksumOf(random) === text.slice(prefix.length + RANDOM_LENGTH);
    },
    hint: (token) => `${prefix}…${token.slice(-4)}`,
  };
}

/** Each kind of token, with its own prefix. */
export const TOKEN_FORMATS: Record<TokenKind | LinkTokenKind, TokenFormat> = {
  api_key: tokenFormat('cdapi_'),
  calendar_feed: tokenFormat('cdcal_'),
  email_verification: tokenFormat('cdver_'),
  password_reset: tokenFormat('cdpwr_'),
};

/**
 * Webhook signing secrets follow Standard Webhooks instead: `whsec_` + base64 of the key
 * (32 random bytes, the size of an HMAC-SHA256 key), because that is what receivers'
 * libraries (`standardwebhooks`, Svix) decode. They are never presented back to us, so
 * they need no checksum; they must be recoverable to sign deliveries, so they are stored
 * encrypted (./secret-box.ts), never hashed.
 */
export const WEBHOOK_SECRET_FORMAT = {
  prefix: 'whsec_',
  generate(): string {
    return `whsec_${randomBytes(32).toString('base64')}`;
  },
  isWellFormed(text: string): boolean {
    return /^whsec_[A-Za-z0-9+/]{43}=$/.test(text);
  },
  /** The HMAC key a secret stands for. */
  keyOf(secret: string): Buffer {
    return Buffer.from(secret.slice('whsec_'.length), 'base64');
  },
  hint: (secret: string) => `whsec_…${secret.slice(-5, -1)}`,
} as const;
