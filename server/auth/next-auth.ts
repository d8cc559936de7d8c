import 'server-only';
import NextAuth, { AuthError, CredentialsSignin, type NextAuthConfig } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import GitHub from 'next-auth/providers/github';
import { z } from 'zod';
import { getDb } from '@/server/database';
import { selectUserByOAuthAccount } from '@/db/queries/oauth-accounts';
import { authSecret, config } from '@/server/config';
import { requestGitHubUserinfo } from './github-userinfo';
import { GITHUB, resolveGitHubSignIn } from './oauth-accounts';
import { safeRedirect } from './callback-url';
import { endAllSessions, sessionIsCurrent, stampSessionVersion } from './session-version';
import { clientAddressOf } from '@/server/http/client-address';
import { signInRefusal, signInWithPasswordLimited } from './sign-in-limit';
import { describeSignInFailure, noteRefusal, signInFailureFields, SignInRateLimited, tooManySignInAttempts, withRefusalSlot } from './sign-in-refusal';
import { htmlMessageResponse } from '@/server/http/html-message';
import { newRequestId } from '@/server/http/responses';
import { logger } from '@/server/observability/logger';
import { setRequestErrorCode } from '@/server/observability/request';
import { SYSTEM_ACTOR, userAgentOf, withActor, type SecurityActor } from '@/server/security-log/actor';
import { recordOwnAccountEvent } from '@/server/security-log/record';
import type { NextRequest } from 'next/server';

const credentialsSchema = z.object({ email: z.string().max(320), password: z.string().max(1024) });

declare module 'next-auth' {
  interface Session {
    /** 'credentials' or 'github': how this session signed in. */
    signedInWith?: string;
    /** When it signed in, in seconds since the epoch. */
    signedInAt?: number;
  }
}

function authConfig(): NextAuthConfig {
  const github = config().auth.github;
  return {
    secret: authSecret(),
    // Behind `next start` the app trusts the Host header it is served on (set AUTH_URL to pin it).
    trustHost: true,
    // Credentials sign-in only works with JWT sessions.
    session: { strategy: 'jwt', maxAge: 7 * 24 * 3600 },
    pages: { signIn: '/sign-in' },
    events: {
      // Sign-out ends every session of the user, not only this cookie (docs/security.md).
      async signOut(message) {
        if ('token' in message) await endAllSessions(await getDb(), message.token?.sub);
      },
    },
    logger: {
      error(error) {
        // A failed sign-in is an everyday event: one line, no stack, no e-mail address.
        if (error instanceof CredentialsSignin) {
          logger().warn(signInFailureFields(error), describeSignInFailure(error));
          return;
        }
        // next-auth's own failures (a bad CSRF token, a provider error): its type, and the
        // error through the logger's serializer (no query parameters).
        logger().error({ auth_error: error instanceof AuthError ? error.type : error.name, err: error }, 'next-auth error');
      },
    },
    providers: [
      Credentials({
        credentials: { email: {}, password: {} },
        // The one password check of every sign-in path: this callback, and the sign-in and
        // sign-up forms, whose server actions call signIn('credentials'), which comes here
        // with the form's request headers (so the same client address).
        async authorize(raw, request) {
          const parsed = credentialsSchema.safeParse(raw);
          if (!parsed.success) return null;
          const outcome = await signInWithPasswordLimited(await getDb(), {
            address: clientAddressOf(request.headers),
            userAgent: request.headers.get('user-agent'),
            email: parsed.data.email,
            password: parsed.data.password,
          });
          if (outcome.ok) return outcome.value;
          if (outcome.reason === 'rate_limited') {
            const refusal = new SignInRateLimited(outcome.retryAfterSeconds);
            noteRefusal(refusal);
            throw refusal;
          }
          return null;
        },
      }),
      // GitHub sign-in switches on when AUTH_GITHUB_ID and AUTH_GITHUB_SECRET are set.
      // Its user info is requested by this app, so that only a verified address is taken.
      ...(github
        ? [
            GitHub({
              clientId: github.clientId,
              clientSecret: github.clientSecret,
              userinfo: { url: 'https://api.github.com/user', request: requestGitHubUserinfo },
            }),
          ]
        : []),
    ],
    callbacks: {
      // GitHub accounts are matched by their GitHub id, never by e-mail (oauth-accounts.ts).
      // A refused sign-in goes back to the sign-in page, which explains the error code.
      async signIn({ account, profile, user }) {
        if (account?.provider !== GITHUB) return true;
        const result = await resolveGitHubSignIn(await getDb(), {
          providerAccountId: account.providerAccountId,
          email: profile?.email,
          // The provider's user falls back to the GitHub login when no name is set.
          name: profile?.name ?? user?.name,
        });
        return result.refused ? `/sign-in?error=${result.refused}` : true;
      },
      // Runs when a session is issued (user or account set) and on every later use of it.
      // A later use is checked against the user's session version on the primary: a
      // signed-out, "signed out everywhere" or deleted user's cookie gives no session
      // (null makes next-auth clear the cookie). server/auth/session-version.ts.
      async jwt({ token, user, account }) {
        const db = await getDb();
        if (account?.provider === GITHUB) {
          // signIn above has just linked the account: the session is the linked user.
          const linked = await selectUserByOAuthAccount(db, GITHUB, account.providerAccountId);
          if (!linked) return null;
          token.sub = linked.id;
          token.email = linked.email;
          token.name = linked.name;
        } else if (user?.id) {
          token.sub = user.id;
        } else {
          return (await sessionIsCurrent(db, token)) ? token : null;
        }
        // How and when this session signed in: deleting an account without a password
        // asks for a recent GitHub sign-in (server/accounts/delete-account.ts).
        token.signedInWith = account?.provider === GITHUB ? GITHUB : 'credentials';
        token.signedInAt = Math.floor(Date.now() / 1000);
        if (!(await stampSessionVersion(db, token))) return null;
        // A password sign-in's event is written where the password is checked (sign-in-limit.ts).
        if (account?.provider === GITHUB) await recordOwnAccountEvent(db, 'sign_in.succeeded', { id: token.sub!, email: String(token.email) }, { method: GITHUB });
        return token;
      },
      // Only paths of this site, never "//host" (server/auth/callback-url.ts).
      redirect: safeRedirect,
      session({ session, token }) {
        if (token.sub) session.user.id = token.sub;
        if (typeof token.signedInWith === 'string') session.signedInWith = token.signedInWith;
        if (typeof token.signedInAt === 'number') session.signedInAt = token.signedInAt;
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

/**
 * next-auth's route handlers. A password sign-in over the limit is answered 429 with
 * Retry-After (and a short page saying when to try again) before next-auth reads the
 * request, so that refusing a flood costs as little as possible; one refused inside
 * `authorize` (the limit reached meanwhile) would come back as next-auth's redirect with
 * `?code=rate_limited` only, and is answered the same way.
 */
export const routeHandlers = {
  GET: (request: NextRequest): Promise<Response> => withActor(requestActor(request), () => handlers.GET(request)),
  POST: (request: NextRequest): Promise<Response> => withActor(requestActor(request), () => limitedPost(request)),
};

/**
 * Who an /api/auth request comes from, before anyone is signed in: its address and
 * browser, for the events its callbacks write (a GitHub sign-in, a sign-out), which name
 * the person themselves.
 */
function requestActor(request: NextRequest): SecurityActor {
  return { ...SYSTEM_ACTOR, clientAddress: clientAddressOf(request.headers), userAgent: userAgentOf(request.headers) };
}

async function limitedPost(request: NextRequest): Promise<Response> {
  if (request.nextUrl.pathname.endsWith('/callback/credentials')) {
    const email = await formField(request, 'email');
    const refused = email === undefined ? undefined : await signInRefusal(clientAddressOf(request.headers), email);
    if (refused) {
      const failure = new SignInRateLimited(refused.retryAfterSeconds);
      logger().warn(signInFailureFields(failure), describeSignInFailure(failure));
      return tooManyAttempts(refused.retryAfterSeconds);
    }
  }
  const { response, retryAfterSeconds } = await withRefusalSlot(() => handlers.POST(request));
  return retryAfterSeconds === undefined ? response : tooManyAttempts(retryAfterSeconds);
}

async function formField(request: NextRequest, name: string): Promise<string | undefined> {
  try {
    const value = (await request.clone().formData()).get(name);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined; // not a form: next-auth answers it
  }
}

function tooManyAttempts(retryAfterSeconds: number): Response {
  setRequestErrorCode('rate_limited');
  return htmlMessageResponse(
    {
      status: 429,
      title: 'Too many sign-in attempts',
      message: tooManySignInAttempts(retryAfterSeconds),
      back: { href: '/sign-in', label: 'Back to sign-in' },
      requestId: newRequestId(),
    },
    new Headers({ 'Retry-After': String(retryAfterSeconds) }),
  );
}
