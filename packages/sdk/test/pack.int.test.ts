import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The published SDK as a user gets it: `npm pack` in packages/sdk (its `prepack` runs the build),
 * then `npm install <tarball> viem` in an empty folder outside the repository, then `import`,
 * `require` and a `tsc` type check against the installed package. No registry access beyond
 * what `npm ci` already cached (`--prefer-offline`): the package's only dependencies are viem
 * (peer) and `@x402/*`, which the repository's lockfile holds too.
 */

const SDK_DIR = fileURLToPath(new URL('..', import.meta.url));
const ROOT = path.resolve(SDK_DIR, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const VIEM_VERSION = (createRequire(path.join(ROOT, 'package.json'))('viem/package.json') as { version: string }).version;
const manifest = JSON.parse(readFileSync(path.join(SDK_DIR, 'package.json'), 'utf8')) as { name: string; version: string };

/** The environment without the npm_* variables of the `npm test` that may have started vitest (they would steer the child npm). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
}

function run(cmd: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r;
}

let work: string;
let tarball: string;
let app: string;

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'agent-capability-gateway-sdk-pack-'));
  const packDir = path.join(work, 'pack');
  mkdirSync(packDir);
  run('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], SDK_DIR);
  const tgz = readdirSync(packDir).filter((f) => f.endsWith('.tgz'));
  expect(tgz).toEqual([`${manifest.name}-${manifest.version}.tgz`]);
  tarball = path.join(packDir, tgz[0]!);

  app = path.join(work, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true }));
  run('npm', ['install', tarball, `viem@${VIEM_VERSION}`, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], app);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed SDK', () => {
  it('holds the built dist files, README and LICENSE, and no sources', () => {
    const files = run('tar', ['tzf', tarball], work)
      .stdout.split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''))
      .sort();
    for (const f of ['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts'])
      expect(files).toContain(f);
    expect(files.filter((f) => !f.startsWith('dist/') && !['LICENSE', 'README.md', 'package.json'].includes(f))).toEqual([]);
  });

  it('declares what a published package needs, and every path it exports exists', () => {
    const installedDir = path.join(app, 'node_modules', manifest.name);
    const pj = JSON.parse(readFileSync(path.join(installedDir, 'package.json'), 'utf8'));
    expect(pj).toMatchObject({
      name: 'agent-capability-gateway-sdk',
      license: 'MIT',
      type: 'module',
      sideEffects: false,
      engines: { node: '>=20.11' },
      publishConfig: { access: 'public' },
    });
    expect(Object.keys(pj.dependencies ?? {}).filter((d) => d.startsWith('@acg/'))).toEqual([]);
    const targets: string[] = [pj.main, pj.module, pj.types];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') targets.push(v);
      else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
    };
    walk(pj.exports);
    for (const t of targets) expect(() => readFileSync(path.join(installedDir, t)), t).not.toThrow();
  });

  it('loads with import and with require, with the same exports, and works', () => {
    const probe = `
      const { createGatewayClient, formatUsdc, parseUsdc, SpendLedger, SDK_VERSION, PaymentRequiredError, AcgError, callPaidTool } = sdk;
      const gw = createGatewayClient({ baseUrl: 'http://127.0.0.1:9/', spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' } });
      console.log(JSON.stringify({
        keys: Object.keys(sdk).filter((k) => k !== 'default' && k !== '__esModule').sort(),
        baseUrl: gw.baseUrl,
        perCall: String(gw.spendLimits.perCallBaseUnits),
        spent: gw.spent().usdc,
        formatted: formatUsdc(1000n),
        parsed: String(parseUsdc('0.05')),
        ledger: String(new SpendLedger({ totalUsdc: 1 }).totalLimit),
        version: SDK_VERSION,
        errorChain: new PaymentRequiredError('x', { x402Version: 2, resource: { url: 'u' }, accepts: [] }) instanceof AcgError,
        mcp: typeof callPaidTool,
      }));`;
    writeFileSync(path.join(app, 'esm.mjs'), `import * as sdk from 'agent-capability-gateway-sdk';\n${probe}`);
    writeFileSync(path.join(app, 'cjs.cjs'), `const sdk = require('agent-capability-gateway-sdk');\n${probe}`);
    const esm = JSON.parse(run(process.execPath, ['esm.mjs'], app).stdout);
    const cjs = JSON.parse(run(process.execPath, ['cjs.cjs'], app).stdout);
    const expected = {
      baseUrl: 'http://127.0.0.1:9',
      perCall: '10000',
      spent: '0',
      formatted: '0.001',
      parsed: '50000',
      ledger: '1000000',
      version: manifest.version,
      errorChain: true,
      mcp: 'function',
    };
    expect(esm).toMatchObject(expected);
    expect(cjs).toMatchObject(expected);
    expect(cjs.keys).toEqual(esm.keys);
    expect(esm.keys).toEqual(expect.arrayContaining(['createGatewayClient', 'execute', 'payAndRetry', 'verifyWebhook', 'callPaidTool']));
  });

  it('type-checks for ESM and CommonJS consumers (moduleResolution nodenext)', () => {
    const use = `const gw: GatewayClient = createGatewayClient({ baseUrl: 'http://127.0.0.1:9' });
const usdc: string = formatUsdc(1000n);
const exe: Promise<Execution<{ address: string }>> = gw.execute<{ address: string }>('intelligence.wallet_balances', { address: '0x' });
export { usdc, exe };`;
    writeFileSync(
      path.join(app, 'use.mts'),
      `import { createGatewayClient, formatUsdc, type Execution, type GatewayClient } from 'agent-capability-gateway-sdk';\n${use}`,
    );
    writeFileSync(
      path.join(app, 'use.cts'),
      `import sdk = require('agent-capability-gateway-sdk');\ntype GatewayClient = sdk.GatewayClient;\ntype Execution<T> = sdk.Execution<T>;\nconst { createGatewayClient, formatUsdc } = sdk;\n${use}`,
    );
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2022', 'dom'],
          skipLibCheck: true,
          types: [],
        },
        files: ['use.mts', 'use.cts'],
      }),
    );
    run(process.execPath, [TSC, '-p', 'tsconfig.json'], app);
  });
});
