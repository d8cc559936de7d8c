import 'server-only';
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
 */
export const currentUser = cache(async (): Promise<SessionUser | undefined> => {
  const session = await auth();
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
