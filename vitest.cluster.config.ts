import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files in a fixed order, the ones that break the cluster last: consistency.test.ts
 * ends by stopping and restarting the replica, and reads fail over while it comes back,
 * which an exact count of 200s in the next file must not meet. Each file must pass on a
 * cluster that nothing broke before it.
 */
// health.test.ts stops Redis and the primary (and starts them again) after it.
const LAST = ['consistency.test.ts', 'health.test.ts'];
const rank = (spec: TestSpecification) => LAST.indexOf(path.basename(spec.moduleId)) + 1;
class FaultsLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

/**
 * The tests of the local cluster (tests/cluster/): real HTTP through its balancer.
 * `npm run test:cluster` starts the cluster when none runs, runs them, then stops it.
 */
export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname), 'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js') } },
  test: {
    include: ['tests/cluster/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One cluster: the files would compete for its instances and rate-limit windows.
    fileParallelism: false,
    sequence: { sequencer: FaultsLast },
  },
});
