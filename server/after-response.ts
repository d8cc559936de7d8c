import { after } from 'next/server';
import { errorCodeOf } from './errors';
import { logger } from './observability/logger';

/**
 * Runs bookkeeping that must not delay the response (last-used times): inside a Next.js
 * request through after(), which also keeps a serverless function alive until it is done;
 * outside one (tests, scripts) after() throws and the task runs in the background.
 * A failure is logged as one warning, `failure.msg` with `failure.fields` and the error's
 * code only (`reason`): the database's message would carry the statement's parameters.
 */
export function afterResponse(task: () => Promise<unknown>, failure: { msg: string; fields?: Record<string, unknown> }): void {
  const run = () =>
    task().then(
      () => undefined,
      (error: unknown) => logger().warn({ ...failure.fields, reason: reasonOf(error) }, failure.msg),
    );
  try {
    after(run);
  } catch {
    void run();
  }
}

/** The first error code down the cause chain (a SQLSTATE, ECONNREFUSED…), else the error's name. */
function reasonOf(error: unknown): string {
  return errorCodeOf(error) ?? (error instanceof Error ? error.name : 'unknown error');
}
