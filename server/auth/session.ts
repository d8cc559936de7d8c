import 'server-only';
import { redirect } from 'next/navigation';
import { auth } from './next-auth';

export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
}

export async function currentUser(): Promise<SessionUser | undefined> {
  const session = await auth();
  const user = session?.user;
  if (!user?.id || !user.email) return undefined;
  return { id: user.id, email: user.email, name: user.name ?? null };
}

/** The signed-in user, or a redirect to sign-in that comes back to `returnTo`. */
export async function requireUser(returnTo: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?callbackUrl=${encodeURIComponent(returnTo)}`);
  return user;
}
