import type { TokenSummary } from '@/lib/tokens';

/** A token as the settings pages show it (dates as ISO strings across the server/client boundary). */
export type TokenRow = Omit<TokenSummary, 'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt'> & {
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
};

type Dated = Date | string | null;

export function toTokenRow(token: Omit<TokenSummary, 'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt'> & Record<'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt', Dated>): TokenRow {
  const iso = (d: Dated) => (d === null ? null : new Date(d).toISOString());
  return {
    id: token.id,
    name: token.name,
    hint: token.hint,
    createdAt: iso(token.createdAt)!,
    lastUsedAt: iso(token.lastUsedAt),
    expiresAt: iso(token.expiresAt),
    revokedAt: iso(token.revokedAt),
    status: token.status,
  };
}
