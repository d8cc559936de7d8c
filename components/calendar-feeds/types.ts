/** A calendar feed as the settings page shows it (dates as ISO strings across the server/client boundary). */
export interface CalendarFeedRow {
  id: string;
  name: string;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'revoked';
}

export function toFeedRow(feed: {
  id: string;
  name: string;
  hint: string;
  createdAt: Date | string;
  lastUsedAt: Date | string | null;
  revokedAt: Date | string | null;
  status: CalendarFeedRow['status'];
}): CalendarFeedRow {
  const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
  return {
    id: feed.id,
    name: feed.name,
    hint: feed.hint,
    createdAt: iso(feed.createdAt)!,
    lastUsedAt: iso(feed.lastUsedAt),
    revokedAt: iso(feed.revokedAt),
    status: feed.status,
  };
}
