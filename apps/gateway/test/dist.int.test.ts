import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { devPrivateKey, startDevStack, type DevStack } from '@acg/devnet';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { build } from 'tsup';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appsBuild, nestedDependencies } from '../../../tsup.config.js';

/**
 * The built entry points (tsup.config.ts `appsBuild`, what `npm run build` writes to dist/ and the
 * Dockerfile ships): built into a temporary folder laid out as the container image is (`dist/`, a
 * `package.json` with `"type": "module"`, `node_modules` beside it), then `node dist/gateway.js`,
 * `dist/worker.js` and `dist/builder.js` each run as their own process on a dev chain and a private
 * Redis: they start, answer (`/status/health`, `/metrics`, a paid execute) and stop on SIGTERM with
 * exit code 0.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let dir: string;
let stack: DevStack;
const children: ChildProcess[] = [];

/** Runs `node <dir>/dist/<entry>.js` with `env`; resolves with the process and the first output line matching `ready`. */
function run(entry: string, env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  const child = spawn(process.execPath, [path.join(dir, 'dist', `${entry}.js`)], {
    cwd: dir,
    // only what the image's environment would hold: no tsx loader, no inherited NODE_OPTIONS
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = out.match(ready);
      if (match) resolve({ child, match, output: () => out });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code, signal) => reject(new Error(`dist/${entry}.js exited (${code ?? signal}): ${out.slice(-800)}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'acg-dist-'));
  const [s] = await Promise.all([
    startDevStack({ quiet: true, preferPrivateRedis: true }),
    // paths in the build options are relative to the repository root (vitest's cwd)
    build({ ...appsBuild(path.join(dir, 'dist')), config: false, silent: true }),
  ]);
  stack = s;
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'acg-image', private: true, type: 'module' }));
  await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('dist entry points', () => {
  it('import only production dependencies that resolve from dist/ (a package only a workspace holds is bundled)', async () => {
    const files = (await readdir(path.join(dir, 'dist'))).filter((f) => f.endsWith('.js'));
    const imported = new Set<string>();
    for (const f of files) {
      const code = await readFile(path.join(dir, 'dist', f), 'utf8');
      // esbuild's ESM output: `import ... from "x";` (names may span lines), `export ... from "x";`, `import "x";`, `import("x")`
      const specifiers = [
        ...code.matchAll(/^(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["'];?$/gm),
        ...code.matchAll(/^import\s*["']([^"']+)["'];?$/gm),
        ...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
      ].map((m) => m[1]);
      for (const spec of specifiers) {
        if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (!builtinModules.includes(name)) imported.add(name);
      }
    }
    expect([...imported]).toEqual(expect.arrayContaining(['viem', 'bullmq', 'ioredis', '@x402/core']));
    expect([...imported].filter((n) => n.startsWith('@acg/'))).toEqual([]);
    expect(nestedDependencies(REPO).filter((n) => imported.has(n))).toEqual([]);
    // `npm ci --omit=dev` (the image) installs the `dependencies` of the root and of every workspace
    const manifests = [path.join(REPO, 'package.json')];
    for (const group of ['apps', 'packages']) {
      for (const w of await readdir(path.join(REPO, group))) manifests.push(path.join(REPO, group, w, 'package.json'));
    }
    const production = new Set<string>();
    for (const m of manifests) {
      const json = JSON.parse(await readFile(m, 'utf8').catch(() => '{}')) as { dependencies?: Record<string, string> };
      for (const name of Object.keys(json.dependencies ?? {})) production.add(name);
    }
    expect([...imported].filter((n) => !production.has(n))).toEqual([]);
  });

  it('node dist/gateway.js, dist/worker.js and dist/builder.js start against Redis and the dev chain, answer, and stop on SIGTERM', async () => {
    const shared = {
      REDIS_URL: stack.redis.url,
      REDIS_KEY_PREFIX: `acg:test:${ulid()}:`,
      PAYMENT_RPC_URL: stack.payment.rpcUrl,
      ETHEREUM_RPC_URL: stack.payment.rpcUrl,
      PAY_TO_ADDRESS: stack.payment.treasury.address,
      FACILITATOR_PRIVATE_KEY: devPrivateKey(0),
      TREASURY_PRIVATE_KEY: devPrivateKey(1),
      PROBE_INTERVAL_SECONDS: '0',
      LOG_LEVEL: 'warn',
    };
    const [gateway, worker, builder] = await Promise.all([
      run('gateway', { ...shared, GATEWAY_PORT: '0' }, /^gateway (http:\/\/\S+)$/m),
      run('worker', { ...shared, WORKER_METRICS_PORT: '0' }, /^worker up: .*; metrics (http:\/\/\S+)$/m),
      // an unreachable relay: the builder has nothing to submit here
      run('builder', { ...shared, BUILDER_PORT: '0', RELAY_URLS: 'local=http://127.0.0.1:9' }, /^builder (http:\/\/\S+)\/rpc /m),
    ]);

    const health = await fetch(`${gateway.match[1]}/status/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ operational_status: expect.any(String), capabilities: expect.any(Array) });
    // the web pages from the bundle: their own files read from dist/static, uPlot from node_modules
    const page = await fetch(`${gateway.match[1]}/status`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const name of ['site.css', 'status.js', 'uplot.min.js']) {
      const href = new RegExp(`"(/assets/${name.replace('.', '\\.')}\\?v=[^"]+)"`).exec(html)?.[1];
      expect(href, name).toBeDefined();
      expect((await fetch(`${gateway.match[1]}${href}`)).status, name).toBe(200);
    }
    expect((await fetch(`${gateway.match[1]}/favicon.ico`)).status).toBe(200);
    expect((await fetch(worker.match[1])).status).toBe(200);
    const builderMetrics = await fetch(`${builder.match[1]}/metrics`);
    expect(builderMetrics.status).toBe(200);
    expect(await builderMetrics.text()).toContain('acg_builder_bundles_received_total');

    // a paid execute through the bundle: x402 verify and settle on the dev chain, the Lua scripts read from dist/lua
    const buyer = stack.payment.buyers[0];
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer as never });
    const paid = await wrapFetchWithPayment(fetch, client)(`${gateway.match[1]}/api/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } }),
    });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ status: 'SUCCEEDED', payment: { amount: '1000' } });

    for (const p of [gateway, worker, builder]) p.child.kill('SIGTERM');
    const codes = await Promise.all([gateway, worker, builder].map((p) => exited(p.child)));
    expect(codes, [gateway, worker, builder].map((p) => p.output().slice(-300)).join('\n---\n')).toEqual([0, 0, 0]);
  });
});
