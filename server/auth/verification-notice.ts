import 'server-only';
import { getDb } from '@/server/database';
import { currentUser } from './session';
import { isEmailVerified, UNVERIFIED_MESSAGE } from './verification';

/** For the settings pages: the signed-in user's address and why, while it is unverified; else undefined. */
export async function unverifiedNotice(): Promise<{ email: string; message: string } | undefined> {
  const user = await currentUser();
  if (!user || (await isEmailVerified(await getDb(), user.id))) return undefined;
  return { email: user.email, message: UNVERIFIED_MESSAGE };
}
