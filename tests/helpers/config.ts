import { afterAll, beforeAll, vi } from 'vitest';
import { resetConfig } from '@/server/config';
import { resetProcessRateLimiter } from '@/server/rate-limit';

/**
 * The one way tests configure the app: environment variables (undefined removes one),
 * read afresh by server/config.ts, with the process-wide rate limiter rebuilt from them.
 */
export async function applyConfig(env: Record<string, string | undefined>): Promise<void> {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  resetConfig();
  await resetProcessRateLimiter();
}

/** Back to the environment the test run started with. */
export async function restoreConfig(): Promise<void> {
  vi.unstubAllEnvs();
  resetConfig();
  await resetProcessRateLimiter();
}

/** `applyConfig` for a whole test file; call it at the top of the file, before other hooks. */
export function configureForFile(env: Record<string, string | undefined>): void {
  beforeAll(() => applyConfig(env));
  afterAll(() => restoreConfig());
}
