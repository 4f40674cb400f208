import { defineConfig, type Options } from 'tsup';

/**
 * Builds (DESIGN.md 1): `npm run build` (= `tsup`) runs every config below.
 *
 * 1. `@acg/sdk` → packages/sdk/dist: ESM `index.js`, CJS `index.cjs`, types `index.d.ts` /
 *    `index.d.cts` (the package.json `exports`). viem (peer dependency) and `@x402/*`
 *    (dependencies) stay external so the user's single copy of each is used. The wire types come
 *    from `@acg/schemas` already expanded into plain TypeScript (packages/sdk/src/wire/types.generated.ts,
 *    see packages/sdk/scripts/wire-types.ts), so neither zod nor `@acg/schemas` is bundled or
 *    referenced by the `.d.ts`.
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

/**
 * 2. The apps' entry points → dist/ (ESM, Node 20): `node dist/gateway.js`, `node dist/worker.js`, `node dist/builder.js`,
 *    `node dist/start.js` (the embedded-defaults launcher). Workspace packages (`@acg/*`, consumed
 *    from TypeScript source) are bundled in; npm dependencies stay external. The Lua scripts are
 *    read at run time next to the bundle, so they are copied to dist/lua (and the lending dev
 *    contracts' Solidity sources to dist/contracts).
 */
const apps: Options = {
  name: 'apps',
  entry: {
    gateway: 'apps/gateway/src/main.ts',
    worker: 'apps/worker/src/main.ts',
    builder: 'apps/builder/src/main.ts',
    start: 'apps/devnet/src/start.ts',
  },
  outDir: 'dist',
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  splitting: true,
  sourcemap: true,
  clean: true,
  noExternal: [/^@acg\//],
  external: [/^[^.@/][^:]*$/, /^@(?!acg\/)[^/]+\/.+/],
  outExtension: () => ({ js: '.js' }),
  async onSuccess() {
    const { cp } = await import('node:fs/promises');
    await cp('packages/redis/src/lua', 'dist/lua', { recursive: true });
    // Solidity sources of the lending dev data, compiled at run time by solc-js (packages/devnet/src/lending)
    await cp('packages/devnet/src/lending/contracts', 'dist/contracts', { recursive: true });
  },
};

export default defineConfig([sdk, apps]);
