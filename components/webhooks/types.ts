import type { DeliveryLogRow, EndpointSummary } from '@/server/webhooks/endpoints';

/** A row as it crosses the server/client boundary: the app's tRPC endpoint sends dates as ISO strings. */
type Wire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

export type EndpointRow = Wire<EndpointSummary>;
export type DeliveryRow = Wire<DeliveryLogRow>;

/** Dates as ISO strings, whether they come as Dates (the page's server render) or already as strings (tRPC). */
export function onTheWire<T extends object>(value: T): Wire<T> {
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, v instanceof Date ? v.toISOString() : v])) as Wire<T>;
}
