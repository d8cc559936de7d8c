/** An API key as the settings page shows it (dates as ISO strings across the server/client boundary). */
export interface ApiKeyRow {
  id: string;
  name: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'expired' | 'revoked';
}

export function toRow(key: {
  id: string;
  name: string;
  hint: string;
  createdAt: Date | string;
  lastUsedAt: Date | string | null;
  expiresAt: Date | string | null;
  revokedAt: Date | string | null;
  status: ApiKeyRow['status'];
}): ApiKeyRow {
  const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
  return {
    id: key.id,
    name: key.name,
    hint: key.hint,
    createdAt: iso(key.createdAt)!,
    lastUsedAt: iso(key.lastUsedAt),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
    status: key.status,
  };
}
