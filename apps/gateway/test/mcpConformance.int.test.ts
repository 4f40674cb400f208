import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, `server` mode) against
 * the gateway's `/mcp`, for every scenario of the suite that applies to this server (the list and
 * the reasons are in docs/mcp.md "Conformance"):
 * - `server-initialize`, `ping`, `tools-list`, `dns-rebinding-protection` (a foreign Host/Origin
 *   gets a 4xx, the server's own gets 2xx), `resources-list`, `prompts-list`: against `/mcp`;
 * - `resources-read-text`: the scenario reads the fixed URI `test://static-text` of the suite's
 *   reference server. It runs through a pass-through proxy that changes only that request's URI to
 *   a real capability page (`acg://capabilities/intelligence.wallet_balances`); the answer, checked
 *   by the suite (contents with uri, mimeType and text), is the gateway's own.
 * Not applicable, so not run: the scenarios that call the reference server's fixtures
 * (`tools-call-*`, `json-schema-2020-12`, `elicitation-*`, `resources-read-binary`,
 * `resources-templates-read`, `prompts-get-*`), features this server does not declare
 * (`logging-set-level`, `completion-complete`, `resources-subscribe`, `resources-unsubscribe`),
 * and SSE sessions (`server-sse-polling`, `server-sse-multiple-streams`: the endpoint is stateless
 * with JSON answers and no session, so the suite can only warn).
 * The tool needs Node 22+. Both the tool and that Node live in tools/conformance-node, a folder
 * with its own package.json and lockfile that is not a workspace (so the workspace's `node` stays
 * the Node 20 the README names); `.ci/run` installs it with `npm ci --prefix tools/conformance-node`,
 * whose `node` package fetches the Node 22 binary for the current platform. The test finds both by
 * path. It needs no network: the URL is the test gateway on 127.0.0.1.
 */
const TOOL_DIR = fileURLToPath(new URL('../../../tools/conformance-node/', import.meta.url));
const toolRequire = createRequire(join(TOOL_DIR, 'package.json'));
/** A path inside an installed package of tools/conformance-node; throws with the install command when it is missing. */
function toolPath(pkg: string, file: (manifest: { bin?: Record<string, string> }) => string): string {
  let manifestPath: string;
  try {
    manifestPath = toolRequire.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed in tools/conformance-node: run \`npm ci --prefix tools/conformance-node\``);
  }
  return join(dirname(manifestPath), file(JSON.parse(readFileSync(manifestPath, 'utf8'))));
}
const NODE22 = toolPath('node', (m) => m.bin?.node ?? 'bin/node');
const CONFORMANCE = toolPath('@modelcontextprotocol/conformance', () => join('dist', 'index.js'));
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'resources-list', 'prompts-list'] as const;
/** Scenarios that read a fixture URI of the reference server, and the gateway resource the proxy reads instead. */
const ALIASED: Record<string, { from: string; to: string }> = {
  'resources-read-text': { from: 'test://static-text', to: 'acg://capabilities/intelligence.wallet_balances' },
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
}

let t: TestGateway;
let out: string;
let proxy: Server | undefined;
/** `resources/read` requests the proxy changed (from → to), so a test can show the alias was used. */
const aliased: string[] = [];
beforeAll(async () => {
  t = await startTestGateway();
  out = await mkdtemp(join(tmpdir(), 'acg-mcp-conformance-'));
});
afterAll(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  await t?.close();
  if (out) await rm(out, { recursive: true, force: true });
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * A pass-through proxy to the gateway's `/mcp` that changes one thing: a `resources/read` of
 * `from` reads `to`. Headers MCP uses are forwarded; the answer comes back unchanged.
 */
async function aliasProxy(from: string, to: string): Promise<string> {
  proxy = createServer(async (req, res) => {
    const raw = await readBody(req);
    let body = raw;
    if (raw) {
      const msg = JSON.parse(raw) as { method?: string; params?: { uri?: string } };
      if (msg.method === 'resources/read' && msg.params?.uri === from) {
        msg.params.uri = to;
        aliased.push(`${from} -> ${to}`);
        body = JSON.stringify(msg);
      }
    }
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const upstream = await fetch(`${t.url}/mcp`, { method: req.method, headers, ...(req.method === 'POST' ? { body } : {}) });
    const answer = await upstream.text();
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(answer);
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}

/** Runs one scenario against `url`; its exit code and the checks it saved (checks.json under its output folder). */
function runScenario(scenario: string, url = `${t.url}/mcp`): Promise<{ code: number; stdout: string; checks: Check[] }> {
  const dir = join(out, scenario);
  return new Promise((resolve, reject) => {
    execFile(
      NODE22,
      [CONFORMANCE, 'server', '--url', url, '--scenario', scenario, '-o', dir],
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

  for (const [scenario, { from, to }] of Object.entries(ALIASED)) {
    it(`passes ${scenario}, its fixture ${from} read as ${to}`, async () => {
      const { code, stdout, checks } = await runScenario(scenario, await aliasProxy(from, to));
      expect(aliased).toContain(`${from} -> ${to}`);
      expect(checks.length, stdout).toBeGreaterThan(0);
      const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
      expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
      expect(code, stdout).toBe(0);
    });
  }
});
