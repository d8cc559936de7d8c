import { describe, expect, it } from 'vitest';
import { hashConcurrency, passwordPoolState, threadPoolSize } from '@/server/auth/passwords';

/**
 * How many bcrypt hashes may run at once (server/auth/passwords.ts): one core fewer than
 * the machine has and one thread fewer than libuv's thread pool, at least one. Before,
 * only the cores counted, so on five or more cores sign-ins could hold all four threads of
 * the default pool, leaving none for file, DNS or zlib work.
 */
describe('hash concurrency', () => {
  it('reads UV_THREADPOOL_SIZE as libuv does', () => {
    expect(threadPoolSize(undefined)).toBe(4);
    expect(threadPoolSize('8')).toBe(8);
    expect(threadPoolSize(' 16')).toBe(16);
    expect(threadPoolSize('6threads')).toBe(6);
    expect(threadPoolSize('0')).toBe(1);
    expect(threadPoolSize('')).toBe(1);
    expect(threadPoolSize('many')).toBe(1);
    expect(threadPoolSize('5000')).toBe(1024);
    expect(threadPoolSize('-2')).toBe(1024);
  });

  it('is min(cores - 1, thread pool - 1), at least 1', () => {
    const cases: [cores: number, setting: string | undefined, expected: number][] = [
      [1, undefined, 1],
      [2, undefined, 1],
      [4, undefined, 3],
      [5, undefined, 3], // before: 4, the whole default pool
      [64, undefined, 3],
      [64, '16', 15],
      [8, '16', 7],
      [8, '2', 1],
      [8, '1', 1],
      [8, '0', 1],
      [0, undefined, 1],
    ];
    for (const [cores, setting, expected] of cases) {
      expect(hashConcurrency(cores, setting), `${cores} cores, UV_THREADPOOL_SIZE=${setting}`).toBe(expected);
    }
  });

  it('this process uses that computation', async () => {
    const { availableParallelism } = await import('node:os');
    expect(passwordPoolState().concurrency).toBe(hashConcurrency(availableParallelism(), process.env.UV_THREADPOOL_SIZE));
  });
});
