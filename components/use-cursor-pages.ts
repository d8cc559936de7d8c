'use client';

import { useState } from 'react';
import { errorMessage } from '@/components/error-alert';

/**
 * A list read a page at a time by an opaque cursor (the request log, the security log):
 * `show(filter)` replaces the rows with the first page of a filter, `show(filter, cursor)`
 * appends the next one. A failure is kept in `error` for the list's alert; the rows stay.
 */
export function useCursorPages<Row, Filter>(
  initial: { rows: Row[]; nextCursor: string | null },
  load: (filter: Filter, cursor: string | undefined) => Promise<{ rows: Row[]; nextCursor: string | null }>,
) {
  const [rows, setRows] = useState(initial.rows);
  const [cursor, setCursor] = useState(initial.nextCursor);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const show = async (filter: Filter, after?: string) => {
    setBusy(true);
    setError(null);
    try {
      const page = await load(filter, after);
      setRows((current) => (after ? [...current, ...page.rows] : page.rows));
      setCursor(page.nextCursor);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return { rows, cursor, error, busy, show };
}
