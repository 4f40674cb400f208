/**
 * GET /registry on the gateway vs a bare `node:http` server that serves the exact same bytes with
 * the same Content-Type, ETag and Cache-Control. Same autocannon settings for both, from a
 * separate load-generator process, never both at once: after a warm-up of each, the order is
 * gateway, baseline, baseline, gateway (half the duration each) so drift favours neither. The
 * ratio says what the gateway's request path (routing, tRPC + REST bridge, output validation,
 * serialization, headers) costs on top of writing the same bytes.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoadGenerator, type AutocannonSummary } from './lib/load.js';
import { definedOnly, fmt, fmtRatio, percentile, ratio, table } from './lib/stats.js';

export interface RegistryBenchOptions {
  connections?: number;
  durationSeconds?: number;
  warmupSeconds?: number;
}

/** One side's runs, merged. */
export interface RegistrySide {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  failures: number;
  /** CPU time of the bench process (where both servers run) per request, microseconds (user + system, measured runs only). */
  cpuMicrosPerRequest: number;
}

export interface RegistryBenchResult {
  bytes: number;
  sha256: string;
  gateway: RegistrySide;
  baseline: RegistrySide;
  settings: Required<RegistryBenchOptions>;
}

function merge(runs: (AutocannonSummary & { cpuMicros: number })[]): RegistrySide {
  const latencies = runs.flatMap((r) => r.latenciesMs);
  const seconds = runs.reduce((a, r) => a + r.durationSeconds, 0);
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  return {
    reqPerSec: requests / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    requests,
    failures: runs.reduce((a, r) => a + r.non2xx + r.errors, 0),
    cpuMicrosPerRequest: runs.reduce((a, r) => a + r.cpuMicros, 0) / requests,
  };
}

/** Starts the baseline: `node:http` answering GET /registry with `body` and the given headers. */
async function startBaseline(body: Buffer, headers: Record<string, string>): Promise<{ url: string; server: Server }> {
  const etag = headers.ETag;
  const server = createServer((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url?.split('?')[0] === '/registry') {
      if (etag && req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag)) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, 'Content-Length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    res.writeHead(404);
    res.end();
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Runs the registry benchmark against the gateway at `gatewayUrl`. */
export async function benchRegistry(gatewayUrl: string, opts: RegistryBenchOptions = {}): Promise<RegistryBenchResult> {
  const settings = { connections: 10, durationSeconds: 5, warmupSeconds: 1, ...definedOnly(opts) };

  // The exact bytes and caching headers the gateway serves.
  const res = await fetch(`${gatewayUrl}/registry`);
  if (res.status !== 200) throw new Error(`GET /registry on the gateway answered ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  const headers: Record<string, string> = {};
  for (const [name, key] of [
    ['content-type', 'Content-Type'],
    ['etag', 'ETag'],
    ['cache-control', 'Cache-Control'],
  ] as const) {
    const v = res.headers.get(name);
    if (v !== null) headers[key] = v;
  }

  const baseline = await startBaseline(body, headers);
  try {
    const check = await fetch(`${baseline.url}/registry`);
    const copy = Buffer.from(await check.arrayBuffer());
    if (!copy.equals(body)) throw new Error('the baseline does not serve the same bytes as the gateway');
    const again = Buffer.from(await (await fetch(`${gatewayUrl}/registry`)).arrayBuffer());
    if (!again.equals(body)) throw new Error('GET /registry on the gateway is not stable between two requests; the comparison would be unfair');

    const load = LoadGenerator.start();
    try {
      const run = async (url: string, durationSeconds: number) => {
        const cpu = process.cpuUsage();
        const r = await load.run(
          { kind: 'autocannon', url: `${url}/registry`, connections: settings.connections, durationSeconds },
          (durationSeconds + 30) * 1000,
        );
        const used = process.cpuUsage(cpu);
        return { ...r, cpuMicros: used.user + used.system };
      };
      // Warm both (JIT, keep-alive sockets, the gateway's discovery cache), then measure in the
      // order gateway, baseline, baseline, gateway (half the duration each) so drift cancels out.
      if (settings.warmupSeconds > 0) {
        await run(gatewayUrl, settings.warmupSeconds);
        await run(baseline.url, settings.warmupSeconds);
      }
      const half = settings.durationSeconds / 2;
      const g1 = await run(gatewayUrl, half);
      const b1 = await run(baseline.url, half);
      const b2 = await run(baseline.url, half);
      const g2 = await run(gatewayUrl, half);
      return { bytes: body.length, sha256: sha256(body), gateway: merge([g1, g2]), baseline: merge([b1, b2]), settings };
    } finally {
      load.close();
    }
  } finally {
    await new Promise<void>((resolve) => {
      baseline.server.close(() => resolve());
      baseline.server.closeAllConnections();
    });
  }
}

/** The result as a compact table with the ratios gateway/baseline. */
export function formatRegistry(r: RegistryBenchResult): string {
  const { gateway: g, baseline: b, settings: s } = r;
  const row = (name: string, x: RegistrySide) => [
    name,
    fmt(x.reqPerSec, 0),
    fmt(x.p50Ms, 2),
    fmt(x.p99Ms, 2),
    String(x.requests),
    String(x.failures),
    fmt(x.cpuMicrosPerRequest, 0),
  ];
  return [
    `GET /registry: autocannon, ${s.connections} connections; per side a ${s.warmupSeconds} s warm-up, then 2 x ${s.durationSeconds / 2} s measured (order G B B G)`,
    `  body ${r.bytes} bytes (sha256 ${r.sha256.slice(0, 16)}...), same bytes and Content-Type/ETag/Cache-Control on both sides`,
    '',
    table(
      ['', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx+errors', 'server CPU µs/req*'],
      [
        row('gateway', g),
        row('baseline (bare node:http)', b),
        [
          'ratio gateway/baseline',
          fmtRatio(ratio(g.reqPerSec, b.reqPerSec)),
          fmtRatio(ratio(g.p50Ms, b.p50Ms)),
          fmtRatio(ratio(g.p99Ms, b.p99Ms)),
          '',
          '',
          fmtRatio(ratio(g.cpuMicrosPerRequest, b.cpuMicrosPerRequest)),
        ],
      ],
    ),
    '* CPU of the bench process (both servers run in it, one at a time) per request; the load generator is another process.',
  ].join('\n');
}
