/**
 * tRPC, in three parts: 1. the context every procedure receives, 2. initialisation with
 * the error formatter, 3. the procedures: public, session-protected (the app's own
 * pages) and API-key-protected (the public REST API).
 */
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Database } from '@/db/client';
import type { SessionUser } from '@/server/auth/session';
import { AppError } from '@/server/errors';
import { authenticateApiRequest, type ApiCaller } from '@/server/rest/authenticate';
import type { RateLimitBucket } from '@/server/rate-limit';

// 1. Context ---------------------------------------------------------------------------

export interface RequestContext {
  db: Database;
  requestId: string;
  /** The request's headers (read-only). */
  headers: Headers;
  /** The client's address, for limits on unauthenticated traffic. */
  clientIp: string;
  /** Sets a response header; survives on error responses too. */
  setHeader(name: string, value: string): void;
  /** Present on the app's own endpoint when signed in. */
  sessionUser?: SessionUser;
}

/** The inner context, creatable in tests without HTTP. */
export function createInnerContext(input: Partial<RequestContext> & { db: Database }): RequestContext {
  return {
    requestId: input.requestId ?? crypto.randomUUID(),
    headers: input.headers ?? new Headers(),
    clientIp: input.clientIp ?? '127.0.0.1',
    setHeader: input.setHeader ?? (() => {}),
    ...input,
  };
}

// 2. Initialisation --------------------------------------------------------------------

const t = initTRPC
  .context<RequestContext>()
  .meta<OpenApiMeta>()
  .create({
    errorFormatter({ shape, error }) {
      // Only AppError messages are written for users; anything else stays in the log.
      const appError = error.cause instanceof AppError ? error.cause : undefined;
      const internal = !appError && error.code === 'INTERNAL_SERVER_ERROR';
      return {
        ...shape,
        message: internal ? 'Something went wrong on our side.' : shape.message,
        data: {
          code: shape.data.code,
          httpStatus: appError?.status ?? shape.data.httpStatus,
          appCode: appError?.code,
          details: appError?.details,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// AppErrors thrown in procedures become TRPCErrors with the matching code, so that the
// app's own client sees a proper status and message.
const TRPC_CODE_OF: Record<AppError['code'], TRPCError['code']> = {
  invalid_request: 'BAD_REQUEST',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  method_not_allowed: 'METHOD_NOT_SUPPORTED',
  conflict: 'CONFLICT',
  rate_limited: 'TOO_MANY_REQUESTS',
  internal_error: 'INTERNAL_SERVER_ERROR',
  service_unavailable: 'SERVICE_UNAVAILABLE',
};

const appErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE_OF[cause.code], message: cause.message, cause });
  }
  return result;
});

// 3. Procedures ------------------------------------------------------------------------

export const publicProcedure = t.procedure.use(appErrors);

/** Signed-in users of the app; narrows ctx.user so no procedure repeats the check. */
export const protectedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.sessionUser) throw new AppError('unauthorized', 'Sign in first.');
  return next({ ctx: { user: ctx.sessionUser } });
});

/** The public REST API: a valid X-API-Key, within its rate limit, puts the caller in ctx. */
export function apiKeyProcedure(bucket: Exclude<RateLimitBucket, 'auth_failure'>) {
  return publicProcedure.use(async ({ ctx, next }) => {
    const caller: ApiCaller = await authenticateApiRequest(ctx, bucket);
    return next({ ctx: { caller } });
  });
}
