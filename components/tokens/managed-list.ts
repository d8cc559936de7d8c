'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from '@/components/error-alert';

/**
 * The state the settings lists (API keys, calendar feeds) share: the rows, reloaded after
 * each change, with an error to show when reloading fails.
 */
/** `load` must be stable (defined outside the component). */
export function useRefreshableList<Row>(initialRows: Row[], load: () => Promise<Row[]>) {
  const [rows, setRows] = useState(initialRows);
  const [listError, setListError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      setRows(await load());
      setListError(null);
    } catch (e) {
      setListError(`The list could not be refreshed: ${errorMessage(e)} Reload the page.`);
    }
  }, [load]);
  return { rows, listError, refresh };
}

/**
 * A ref for the page's "Create" button, which gets the focus back when the last dialog
 * has closed (and React has removed it): while a modal is open the page behind it cannot
 * take focus, so the browser would leave it on the body.
 */
export function useFocusReturn(dialogOpen: boolean) {
  const target = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!dialogOpen && document.activeElement === document.body) target.current?.focus();
  }, [dialogOpen]);
  return target;
}
