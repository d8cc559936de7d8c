import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { toAppError } from '@/server/errors';
import { keyRequests, keyUsage, type KeyUsage } from './service';
import type { LoggedRequest } from '@/lib/key-activity';

/** What a key's settings page shows first: its usage and the newest page of its requests; undefined for a key the person may not see. */
export async function keyActivityPage(
  user: SessionUser,
  keyId: string,
): Promise<{ usage: KeyUsage; requests: LoggedRequest[]; nextCursor: string | null } | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(keyId)) return undefined;
  const db = await getDb();
  try {
    const usage = await keyUsage(db, user.id, keyId);
    const { requests, nextCursor } = await keyRequests(db, user.id, { keyId });
    return { usage, requests, nextCursor };
  } catch (error) {
    if (toAppError(error, 'page', false).code === 'not_found') return undefined;
    throw error;
  }
}
