import { afterEach, vi } from 'vitest';
import type { RecordedAnswer } from './prism';

/**
 * Every test file's requests to the API go through Prism's validator (./prism.ts): after
 * each test, every answer it received is validated against the OpenAPI document, and a
 * violation fails that test with the violations, as `prism proxy --errors` would answer
 * the request with an error.
 */
// On globalThis: in the shared project (vitest.config.ts) this file runs again before each
// test file while the mocked router is made once per worker, so a module-level array would be
// the first file's alone and every later file's answers would go unchecked.
const store = globalThis as { cdaPrismAnswers?: RecordedAnswer[] };
const answers = (store.cdaPrismAnswers ??= []);

vi.mock('@/server/rest/router', async (importOriginal) => {
  const original = await importOriginal<typeof import('@/server/rest/router')>();
  const { recordAnswer } = await import('./prism');
  return {
    ...original,
    async handleApiRequest(req: Request): Promise<Response> {
      const res = await original.handleApiRequest(req);
      (globalThis as typeof store).cdaPrismAnswers!.push(recordAnswer(req, res));
      return res;
    },
  };
});

afterEach(async () => {
  if (answers.length === 0) return;
  const { prismViolations } = await import('./prism');
  const failures: string[] = [];
  for (const answer of answers.splice(0)) {
    const violations = await prismViolations(answer);
    if (violations.length > 0) failures.push(`${answer.method} ${answer.url} -> ${answer.status}\n${violations.map((v) => `  ${v.path}: ${v.message}`).join('\n')}`);
  }
  if (failures.length > 0) throw new Error(`Prism: answers that violate the OpenAPI document:\n${failures.slice(0, 10).join('\n')}`);
});
