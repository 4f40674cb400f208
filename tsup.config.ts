import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Options } from 'tsup';
import { sdkBuild } from './packages/sdk/tsup.config.js';

/**
 * npm packages installed in a workspace's own `node_modules` (apps/* or packages/*), not hoisted
 * to the root because the root holds another version of them (or none in a production install),
 * e.g. `jose` 6 of @acg/receipts beside a root `jose` 5. A bare import in dist/ resolves from the
 * root `node_modules` only, so the apps' build bundles these (esbuild resolves each import from
 * its importer, as Node does from the sources); every other npm dependency stays external.
 */
export function nestedDependencies(root = '.'): string[] {
  const names = new Set<string>();
  for (const group of ['apps', 'packages']) {
    for (const workspace of readdirSync(join(root, group))) {
      const modules = join(root, group, workspace, 'node_modules');
      if (!existsSync(modules)) continue;
      for (const entry of readdirSync(modules)) {
        if (entry.startsWith('.')) continue;
        if (entry.startsWith('@')) for (const scoped of readdirSync(join(modules, entry))) names.add(`${entry}/${scoped}`);
        else names.add(entry);
      }
    }
  }
  return [...names].filter((n) => !n.startsWith('@acg/')).sort();
}

/**
 * The folders of Lua scripts the apps load at run time: `packages/redis/src/lua` (the common
 * scripts) and every workspace's `src/commands/lua` (a domain's own scripts, packages/redis README).
 */
export function luaFolders(root = '.'): string[] {
  const out = [join(root, 'packages/redis/src/lua')];
  for (const group of ['apps', 'packages']) {
    for (const workspace of readdirSync(join(root, group)).sort()) {
      const dir = join(root, group, workspace, 'src/commands/lua');
      if (existsSync(dir)) out.push(dir);
    }
  }
  return out;
}

/**
 * Builds (docs/architecture.md "Shape"): `npm run build` (= `tsup`) runs every config below.
 *
 * 1. The SDK (`agent-capability-gateway-sdk`) → packages/sdk/dist: its config lives with it (packages/sdk/tsup.config.ts)
 *    so that `npm pack` / `npm publish` in packages/sdk build it alone (`prepack`).
 */
const sdk: Options = sdkBuild;

/**
 * 2. The apps' entry points → dist/ (ESM, Node 20): `node dist/gateway.js`, `node dist/worker.js`, `node dist/builder.js`,
 *    `node dist/start.js` (the embedded-defaults launcher), `node dist/example-provider.js` (the
 *    example provider, which `dist/start.js` spawns from next to itself). Workspace packages (`@acg/*`, consumed
 *    from TypeScript source) are bundled in; npm dependencies stay external. The Lua scripts are
 *    read at run time next to the bundle, so every Lua folder ({@link luaFolders}) is copied to dist/lua (and the lending dev
 *    contracts' Solidity sources to dist/contracts, the web pages' static files to dist/static). The container image (Dockerfile) runs these
 *    files with the production dependencies beside them. `appsBuild(outDir)` is the same build into
 *    another folder (apps/gateway/test/dist.int.test.ts builds and starts it).
 */
export function appsBuild(outDir = 'dist'): Options {
  return {
    name: 'apps',
    entry: {
      gateway: 'apps/gateway/src/main.ts',
      worker: 'apps/worker/src/main.ts',
      builder: 'apps/builder/src/main.ts',
      start: 'apps/launcher/src/start.ts',
      'example-provider': 'apps/example-provider/src/main.ts',
    },
    outDir,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    sourcemap: true,
    clean: true,
    // workspace packages, and the npm packages only a workspace's own node_modules holds (see nestedDependencies)
    noExternal: [/^@acg\//, ...nestedDependencies().map((name) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/|$)`))],
    external: [/^[^.@/][^:]*$/, /^@(?!acg\/)[^/]+\/.+/],
    outExtension: () => ({ js: '.js' }),
    async onSuccess() {
      const { cp } = await import('node:fs/promises');
      // every Lua folder: the common scripts of @acg/redis and each domain's own (src/commands/lua), into one dist/lua
      for (const dir of luaFolders()) await cp(dir, `${outDir}/lua`, { recursive: true });
      // Solidity sources of the lending dev data, compiled at run time by solc-js (packages/devnet/src/lending)
      await cp('packages/devnet/src/lending/contracts', `${outDir}/contracts`, { recursive: true });
      // the web pages' own stylesheet, scripts and icons (apps/gateway/src/web/assets.ts reads ./static next to the bundle)
      await cp('apps/gateway/src/web/static', `${outDir}/static`, { recursive: true });
    },
  };
}

export default defineConfig([sdk, appsBuild()]);
