import 'server-only';
import { selectAccount, selectDeletionBlocks, type OrganizationBlock } from '@/db/queries/own-account';
import { getDb } from '@/server/database';
import type { SessionUser } from '@/server/auth/session';
import { githubEnabled } from '@/server/auth/next-auth';
import { isFreshGitHubSignIn } from './delete-account';

export interface AccountPage {
  email: string;
  hasPassword: boolean;
  /** Organisations that stop a deletion now (the page says so before the person tries). */
  blocks: OrganizationBlock[];
  /** For an account without a password: whether this session may delete it now, or must sign in with GitHub first. */
  freshGitHubSignIn: boolean;
  githubEnabled: boolean;
}

/** What Settings → Account shows; undefined when the user is gone. */
export async function accountPage(user: SessionUser): Promise<AccountPage | undefined> {
  const db = await getDb();
  const [account, blocks] = await Promise.all([selectAccount(db, user.id), selectDeletionBlocks(db, user.id)]);
  if (!account) return undefined;
  return {
    email: account.email,
    hasPassword: Boolean(account.passwordHash),
    blocks,
    freshGitHubSignIn: isFreshGitHubSignIn(user.signIn ?? {}, new Date()),
    githubEnabled: githubEnabled(),
  };
}
