import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * The build of the published SDK (`agent-capability-gateway-sdk`, docs/architecture.md "Shape") → packages/sdk/dist: ESM `index.js`,
 * CJS `index.cjs`, types `index.d.ts` / `index.d.cts` (the package.json `exports`). Paths are
 * absolute, so this runs from packages/sdk (`npm run build -w agent-capability-gateway-sdk`, and `npm pack` /
 * `npm publish` through `prepack`) and from the root `npm run build` (tsup.config.ts imports it).
 *
 * viem (peer dependency) and `@x402/*` (dependencies) stay external so the user's single copy of
 * each is used. The wire types come from `@acg/schemas` already expanded into plain TypeScript
 * (src/wire/types.generated.ts, see scripts/wire-types.ts), so neither zod nor `@acg/schemas` is
 * bundled or referenced by the `.d.ts`; the one runtime piece taken from it is
 * `@acg/schemas/mcpToolName`, a file without imports, bundled.
 */
export const sdkBuild: Options = {
  name: 'sdk',
  entry: { index: here('./src/index.ts') },
  outDir: here('./dist'),
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
  treeshake: true,
  external: ['viem', /^viem\//, /^@x402\//],
  // proof verification: bundled so the CJS build works too (jose 6 is ESM-only); the MCP
  // tool-name mapping the gateway uses too (a file of @acg/schemas without imports)
  noExternal: ['jose', 'canonicalize', /^@acg\/schemas\/mcpToolName$/],
  // ESM output is `.js` and CJS `.cjs` because packages/sdk/package.json has "type": "module".
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.js' }),
  tsconfig: here('./tsconfig.json'),
};

export default defineConfig(sdkBuild);
