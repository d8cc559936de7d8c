import 'server-only';
import type { Session } from 'next-auth';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { cache } from 'react';
import { auth } from './next-auth';

export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
  /** How and when this session signed in (seconds since the epoch); absent on sessions issued before they were recorded. */
  signIn?: { method?: string; at?: number };
}

/**
 * The signed-in user of this request. Each use of a session costs a lookup of its
 * version (server/auth/session-version.ts): a page asks once per render (React's cache),
 * however many components ask.
 *
 * The session cookie is read from `cookies()`, not from the request's Cookie header as
 * next-auth's `auth()` does: after a server action that set a new session cookie (the
 * password change signs its browser in again), Next.js renders the page again in the same
 * response with `cookies()` updated but the headers as they arrived, whose cookie the
 * change has just ended; the page would then send the person to sign-in.
 */
export const currentUser = cache(async (): Promise<SessionUser | undefined> => {
  const request = new Headers(await headers());
  request.set('cookie', (await cookies()).toString());
  // next-auth's form for API routes: the headers given, its Set-Cookie answers dropped (a page cannot set cookies).
  const readSession = auth as unknown as (context: { req: { headers: Headers }; res: { headers: Headers } }) => Promise<Session | null>;
  const session = await readSession({ req: { headers: request }, res: { headers: new Headers() } });
  const user = session?.user;
  if (!user?.id || !user.email) return undefined;
  return { id: user.id, email: user.email, name: user.name ?? null, signIn: { method: session?.signedInWith, at: session?.signedInAt } };
});

/** The signed-in user, or a redirect to sign-in that comes back to `returnTo`. */
export async function requireUser(returnTo: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?callbackUrl=${encodeURIComponent(returnTo)}`);
  return user;
}
