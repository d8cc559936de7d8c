'use client';

import { useEffect, useState } from 'react';

/**
 * The token of an e-mailed link, which comes after `#` (browsers never send it to a
 * server: no access log, no Referer holds it). Read at mount and whenever the fragment
 * changes (a second link opened in the same tab is a same-page navigation, not a load),
 * then removed from the address bar and the history, so that it does not stay on screen.
 */
let current = '';

/** The token the page read last: what a form adds to its data when it is submitted. */
export function currentLinkToken(): string {
  return current;
}

export function useLinkToken(): { token: string; read: boolean } {
  const [state, setState] = useState({ token: '', read: false });
  useEffect(() => {
    const read = () => {
      const token = window.location.hash.slice(1);
      if (!token) return false;
      current = token;
      window.history.replaceState(null, '', window.location.pathname);
      setState({ token, read: true });
      return true;
    };
    // After hydration: the server never saw the fragment.
    const timer = setTimeout(() => {
      if (!read()) setState((s) => ({ ...s, read: true }));
    }, 0);
    window.addEventListener('hashchange', read);
    return () => {
      clearTimeout(timer);
      window.removeEventListener('hashchange', read);
    };
  }, []);
  return state;
}
