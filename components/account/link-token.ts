'use client';

import { useEffect, useState } from 'react';

/**
 * The token of an e-mailed link, which comes after `#` (browsers never send it to a
 * server: no access log, no Referer holds it). Read once, then removed from the address
 * bar and the history, so that it does not stay on screen or in the back button.
 */
let current = '';

/** The token read by the page's useLinkToken: what a form adds to its data when it is submitted. */
export function currentLinkToken(): string {
  return current;
}

export function useLinkToken(): { token: string; read: boolean } {
  const [state, setState] = useState({ token: '', read: false });
  useEffect(() => {
    const token = window.location.hash.slice(1);
    if (token) current = token;
    if (token) window.history.replaceState(null, '', window.location.pathname);
    // Read after hydration: the server never saw the fragment.
    const timer = setTimeout(() => setState({ token, read: true }), 0);
    return () => clearTimeout(timer);
  }, []);
  return state;
}
