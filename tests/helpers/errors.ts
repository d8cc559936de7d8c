import { expect } from 'vitest';
import { toAppError, type ErrorCode } from '@/server/errors';

/** Expects a rejection that the API's one error mapping (server/errors.ts) answers with `code`. */
export async function expectAppError(promise: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a rejection with ${code}`).toBeDefined();
  const mapped = toAppError(error, 'test', false);
  expect(mapped.code).toBe(code);
  if (message) expect(mapped.message).toMatch(message);
}
