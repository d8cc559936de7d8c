import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '@/db/client';

// The page query is replaced so that the page read ahead can fail on cue. A plain function,
// not vi.fn(): a spy attaches its own handler to the promises it returns, which would hide
// the very unhandled rejection this test looks for.
const answers: (() => Promise<unknown>)[] = [];
vi.mock('@/db/queries/contracts/page', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@/db/queries/contracts/page')>()),
  selectContractPage: () => answers.shift()!(),
}));
const { contractsInPages } = await import('@/server/contracts/service');

const row = (id: string) => ({ id, sortKeyText: id });
const scope = { userId: '00000000-0000-4000-8000-000000000001', organizationIds: [] } as never;

describe('the export and feed walk (contractsInPages)', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('a page read ahead that fails while the caller works on the previous one is thrown on the next turn, never reported as unhandled', async () => {
    const failure = Object.assign(new Error('server login has been failing'), { code: '08P01' });
    answers.push(async () => [row('a'), row('b')], () => Promise.reject(failure));
    const pages = contractsInPages({} as Database, scope, {}, 2);

    const first = await pages.next();
    expect(first.value).toHaveLength(2);
    // The caller writes the first page while the second query fails.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    await expect(pages.next()).rejects.toBe(failure);
  });

  it('a caller that stops early drops the page read ahead and its failure', async () => {
    answers.push(async () => [row('a'), row('b')], () => Promise.reject(new Error('connection lost')));
    const pages = contractsInPages({} as Database, scope, {}, 2);
    await pages.next();
    await pages.return(undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  });
});
