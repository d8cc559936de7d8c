import { vi } from 'vitest';
import type { Database } from '@/db/client';

/**
 * Counts what reaches the database driver under Drizzle: every statement, prepared or not,
 * and every transaction (postgres.js: `unsafe`, `begin`, `reserve`; PGlite: `query`, `exec`,
 * `transaction`). To prove that a path does no database work at all, on either driver.
 */
export function countDatabaseCalls(db: Database): { readonly count: number; reset(): void; restore(): void } {
  const client = (db as unknown as { $client: Record<string, unknown> }).$client;
  let count = 0;
  const spies = ['unsafe', 'begin', 'reserve', 'query', 'exec', 'transaction']
    .filter((method) => typeof client[method] === 'function')
    .map((method) => {
      const original = client[method] as (...args: unknown[]) => unknown;
      return vi.spyOn(client as Record<string, (...args: unknown[]) => unknown>, method).mockImplementation(function (this: unknown, ...args: unknown[]) {
        count++;
        return original.apply(this, args);
      });
    });
  return {
    get count() {
      return count;
    },
    reset() {
      count = 0;
    },
    restore() {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
