/**
 * tRPC, in three parts: 1. the context every procedure receives, 2. initialisation with
 * the error formatter, 3. the procedures: session-protected (the app's own pages) and
 * API-key-protected (the public REST API).
 */
import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Database } from '@/db/client';
import { apiKeyCredential, authenticate, type Credential } from '@/server/access/authenticate';
import type { SessionUser } from '@/server/auth/session';
import { requireVerifiedEmail } from '@/server/auth/verification';
import { AppError, toAppError } from '@/server/errors';
import { SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import type { RequestContext } from '@/server/http/context';
import { userAgentOf, withActor, type SecurityActor } from '@/server/security-log/actor';

// 1. Context ---------------------------------------------------------------------------

export interface TrpcContext extends RequestContext {
  /** Present on the app's own endpoint when signed in. */
  sessionUser?: SessionUser;
}

/** The context without HTTP, for tests and callers that already know who is asking. */
export function createInnerContext(input: Partial<TrpcContext> & { db: Database }): TrpcContext {
  return {
    readDb: input.db,
    url: input.url ?? 'http://localhost/',
    requestId: input.requestId ?? `req_${crypto.randomUUID().replaceAll('-', '')}`,
    headers: input.headers ?? new Headers(),
    clientAddress: input.clientAddress ?? '127.0.0.1',
    setHeader: input.setHeader ?? (() => {}),
    ...input,
  };
}

// 2. Initialisation --------------------------------------------------------------------

const t = initTRPC
  .context<TrpcContext>()
  .meta<OpenApiMeta>()
  .create({
    // The app's own client reads the message, the status and the details of server/errors.ts,
    // the same mapping the REST API answers with; internal messages never leave the server.
    errorFormatter({ shape, error, ctx }) {
      // Logged by the transport's onError, once.
      const appError = toAppError(error, ctx?.requestId ?? 'no-request', false);
      return {
        ...shape,
        message: appError.message,
        data: { code: appError.code, httpStatus: appError.status, details: appError.details, path: shape.data.path },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// 3. Procedures ------------------------------------------------------------------------

export const publicProcedure = t.procedure;

/** Signed-in users of the app; narrows ctx.user so no procedure repeats the check. */
export const protectedProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.sessionUser) throw new AppError('unauthorized', 'Sign in first.');
  const user = ctx.sessionUser;
  // The security log's actor of every event written by the procedure (server/security-log/actor.ts).
  const actor: SecurityActor = {
    kind: 'user',
    userId: user.id,
    label: user.email ?? user.id,
    clientAddress: ctx.clientAddress === SHARED_CLIENT_BUCKET ? null : ctx.clientAddress,
    userAgent: userAgentOf(ctx.headers),
  };
  return withActor(actor, () => next({ ctx: { user } }));
});

/**
 * Signed-in users whose e-mail address is verified: what creates credentials that act
 * outside the app (API keys, calendar feeds, webhook endpoints; server/auth/verification.ts).
 */
export const verifiedProcedure = protectedProcedure.use(async ({ ctx, next }) => {
  await requireVerifiedEmail(ctx.db, ctx.user.id);
  return next();
});

/** The public REST API: a valid X-API-Key, within its rate limit, puts the caller in ctx. */
export function apiKeyProcedure(bucket: Credential['bucket']) {
  return t.procedure.use(async ({ ctx, next }) => {
    const caller = await authenticate(ctx, apiKeyCredential(ctx.headers, bucket));
    return next({ ctx: { caller } });
  });
}
