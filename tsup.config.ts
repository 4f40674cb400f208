import { defineConfig, type Options } from 'tsup';

/**
 * Builds (DESIGN.md 1): `npm run build` (= `tsup`) runs every config below.
 *
 * 1. `@acg/sdk` → packages/sdk/dist: ESM `index.js`, CJS `index.cjs`, types `index.d.ts` /
 *    `index.d.cts` (the package.json `exports`). viem (peer dependency) and `@x402/*`
 *    (dependencies) stay external so the user's single copy of each is used.
 */
const sdk: Options = {
  name: 'sdk',
  entry: { index: 'packages/sdk/src/index.ts' },
  outDir: 'packages/sdk/dist',
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: true,
  external: ['viem', /^viem\//, /^@x402\//],
  // ESM output is `.js` and CJS `.cjs` because packages/sdk/package.json has "type": "module".
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.js' }),
  tsconfig: 'packages/sdk/tsconfig.json',
};

export default defineConfig([
  sdk,
  // ---------------------------------------------------------------------------------------
  // LEAD: add the apps' entry points here (gateway, builder, worker, devnet start), e.g.
  //   { name: 'apps', entry: { gateway: 'apps/gateway/src/index.ts', ... }, outDir: 'dist',
  //     format: ['esm'], target: 'node20', platform: 'node', clean: false, ... },
  // Keep `clean: false` on any config whose outDir is shared, or it deletes the others' output.
  // ---------------------------------------------------------------------------------------
]);
