import NextAuth, { type NextAuthConfig } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import GitHub from 'next-auth/providers/github';
import { z } from 'zod';
import { getDb } from '@/db/client';
import { authSecret, config } from '@/server/config';
import { authenticateWithPassword, findOrCreateOAuthUser } from './users';

const credentialsSchema = z.object({ email: z.string().max(320), password: z.string().max(1024) });

function authConfig(): NextAuthConfig {
  const github = config().auth.github;
  return {
    secret: authSecret(),
    // Behind `next start` the app trusts the Host header it is served on (set AUTH_URL to pin it).
    trustHost: true,
    // Credentials sign-in only works with JWT sessions.
    session: { strategy: 'jwt', maxAge: 7 * 24 * 3600 },
    pages: { signIn: '/sign-in' },
    providers: [
      Credentials({
        credentials: { email: {}, password: {} },
        async authorize(raw) {
          const parsed = credentialsSchema.safeParse(raw);
          if (!parsed.success) return null;
          const user = await authenticateWithPassword(await getDb(), parsed.data.email, parsed.data.password);
          return user ?? null;
        },
      }),
      // GitHub sign-in switches on when AUTH_GITHUB_ID and AUTH_GITHUB_SECRET are set.
      ...(github ? [GitHub({ clientId: github.clientId, clientSecret: github.clientSecret })] : []),
    ],
    callbacks: {
      async jwt({ token, user, account, profile }) {
        if (account?.provider === 'github') {
          const email = profile?.email ?? user?.email;
          if (!email) return null; // no verified email: no account
          const row = await findOrCreateOAuthUser(await getDb(), email, profile?.name ?? user?.name);
          token.sub = row.id;
        } else if (user?.id) {
          token.sub = user.id;
        }
        return token;
      },
      session({ session, token }) {
        if (token.sub) session.user.id = token.sub;
        return session;
      },
    },
  };
}

export const { handlers, auth, signIn, signOut } = NextAuth(() => authConfig());

/** Whether GitHub sign-in is configured (the sign-in page shows its button then). */
export function githubEnabled(): boolean {
  return Boolean(config().auth.github);
}
