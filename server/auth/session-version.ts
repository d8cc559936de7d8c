import type { Database } from '@/db/client';
import { currentActor, personActor } from '@/server/security-log/actor';
import { recordSecurityEvent } from '@/server/security-log/record';
import { bumpSessionVersion, selectSessionVersion } from '@/db/queries/sessions';

/**
 * Sessions are JWTs in a cookie (next-auth's credentials sign-in needs them), which stay
 * valid until they expire whatever happens on the server. Each carries its user's
 * `session_version` (claim `sv`), compared with the user's row on every use: sign-out and
 * "sign out everywhere" raise the version, so every cookie issued before stops working on
 * its next request, on every instance (docs/security.md, "Sessions").
 *
 * The lookup reads the primary (`getDb()`), never the replica: a replica a second behind
 * would still accept a cookie that was just signed out. It is one primary-key lookup per
 * use of a session, and no process cache, so that no instance keeps a stale answer.
 *
 * Kept free of next-auth, so that it runs (and is tested) on its own.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface VersionedToken {
  sub?: string | null;
  sv?: unknown;
}

/** Writes the user's current version into a token being issued at sign-in. False if the user is gone. */
export async function stampSessionVersion(db: Database, token: VersionedToken): Promise<boolean> {
  if (!token.sub || !UUID.test(token.sub)) return false;
  const version = await selectSessionVersion(db, token.sub);
  if (version === undefined) return false;
  token.sv = version;
  return true;
}

/**
 * Whether a session token is still good: its user exists and its version is the user's
 * current one. A token without a version (issued before versions existed) is not.
 */
export async function sessionIsCurrent(db: Database, token: VersionedToken): Promise<boolean> {
  if (!token.sub || !UUID.test(token.sub) || typeof token.sv !== 'number') return false;
  const version = await selectSessionVersion(db, token.sub);
  return version !== undefined && version === token.sv;
}

/** Ends every session of the user (sign-out, "sign out everywhere"; a future password change must call it too). */
export async function endAllSessions(db: Database, userId: string | null | undefined): Promise<void> {
  if (!userId || !UUID.test(userId)) return;
  await db.transaction(async (tx) => {
    const email = await bumpSessionVersion(tx as unknown as Database, userId);
    const actor = currentActor();
    // Once per action (sign out everywhere ends them, then next-auth's signOut event again).
    if (email === undefined || actor.endedSessionsOf === userId) return;
    actor.endedSessionsOf = userId;
    const { clientAddress, userAgent } = actor;
    await recordSecurityEvent(tx as unknown as Database, {
      kind: 'sign_out.everywhere',
      subjectUserId: userId,
      objectType: 'user',
      objectId: userId,
      objectLabel: email,
      actor: personActor({ id: userId, email }, { clientAddress, userAgent }),
    });
  });
}
