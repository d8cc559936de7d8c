import 'server-only';
import type { TokenKind, TokenSummary } from '@/lib/tokens';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { listTokens } from './tokens';

/** What the settings pages of API keys and calendar feeds list for the signed-in user. */
export async function tokensPage(user: SessionUser, kind: TokenKind): Promise<TokenSummary[]> {
  return listTokens(await getDb(), kind, user.id);
}
