import { defineConfig } from 'vitest/config';

/**
 * Two projects (docs/architecture.md "Shape"):
 * - unit: pure code, no services (`*.unit.test.ts`; `test/` at the root holds the workspace-shape tests).
 * - integration: real Redis and real anvil chains (`*.int.test.ts`); files run one at a time
 *   because each starts its own anvil and the machine has two cores.
 * Tests never assert wall-clock limits; speed lives in bench/.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['apps/*/test/**/*.unit.test.ts', 'packages/*/test/**/*.unit.test.ts', 'test/**/*.unit.test.ts'],
          environment: 'node',
          // a harness limit, not a speed check: the workspace-shape tests read every source file,
          // which takes longer than vitest's 5 s default while the integration files load the cores
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['apps/*/test/**/*.int.test.ts', 'packages/*/test/**/*.int.test.ts'],
          environment: 'node',
          pool: 'forks',
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
