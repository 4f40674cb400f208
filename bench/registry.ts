/**
 * GET /registry on the gateway vs a bare `node:http` server that serves the exact same bytes with
 * the same Content-Type, ETag and Cache-Control. Same autocannon settings for both, from a
 * separate load-generator process, never both at once: after a warm-up of each, the order is
 * gateway, baseline, baseline, gateway (half the duration each) so drift favours neither. The
 * ratio says what the gateway's request path (routing, tRPC + REST bridge, output validation,
 * serialization, headers) costs on top of writing the same bytes.
 *
 * The same comparison then runs on the gateway's other cached documents, served by the same code path
 * (`sendDocument`) at other body sizes: the bare server's throughput moves with the body size alone
 * (bench/README.md "Body size"), so one ratio at one size cannot tell a regression from that effect;
 * the ratios and CPU per request across sizes can.
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
  /** The gateway's cached documents to compare, `/registry` first (the headline figure); each at its own body size. */
  paths?: string[];
  /** Body sizes (KiB) at which the bare server alone is measured with the registry's bytes cut or repeated to that size. */
  baselineKiB?: number[];
}

/**
 * The gateway's documents served from its server-side document cache as bytes by one code path
 * (`sendDocument`), at different body sizes. (`/openapi.json` is left out: it is cached as a string and
 * encoded on every request, another code path.)
 */
export const DOCUMENT_PATHS = ['/registry', '/gateway-catalog.json', '/llms.txt', '/sitemap.xml'];

/** The bare server's size curve around the registry's size (the issue: 44 KB vs 48-49 KB). */
export const BASELINE_KIB = [16, 32, 40, 44, 46, 48, 52, 64];

/** The bare server alone at one body size. */
export interface BaselinePoint {
  bytes: number;
  reqPerSec: number;
  p50Ms: number;
  cpuMicrosPerRequest: number;
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

/** One document compared: its bytes, and each side. */
export interface DocumentComparison {
  path: string;
  bytes: number;
  sha256: string;
  gateway: RegistrySide;
  baseline: RegistrySide;
}

/** `/registry` (the headline: `bytes`, `sha256`, `gateway`, `baseline`) and every document compared, by body size. */
export interface RegistryBenchResult extends DocumentComparison {
  documents: DocumentComparison[];
  /** The bare server's curve: req/s and CPU per request by body size, same settings, its measured half only. */
  baselineCurve: BaselinePoint[];
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

/** Starts the baseline: `node:http` answering GET `path` with `body` and the given headers. */
async function startBaseline(path: string, body: Buffer, headers: Record<string, string>): Promise<{ url: string; server: Server }> {
  const etag = headers.ETag;
  const server = createServer((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url?.split('?')[0] === path) {
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

/** Runs the registry benchmark against the gateway at `gatewayUrl`: `/registry`, then the other documents. */
export async function benchRegistry(gatewayUrl: string, opts: RegistryBenchOptions = {}): Promise<RegistryBenchResult> {
  const settings = { connections: 10, durationSeconds: 5, warmupSeconds: 1, paths: DOCUMENT_PATHS, baselineKiB: BASELINE_KIB, ...definedOnly(opts) };
  const load = LoadGenerator.start();
  try {
    const documents: DocumentComparison[] = [];
    for (const path of settings.paths) documents.push(await compareDocument(gatewayUrl, path, load, settings));
    const registry = documents.find((d) => d.path === '/registry') ?? documents[0];
    const registryBody = Buffer.from(await (await fetch(`${gatewayUrl}/registry`)).arrayBuffer());
    const baselineCurve: BaselinePoint[] = [];
    for (const kib of settings.baselineKiB) baselineCurve.push(await measureBaselineAt(registryBody, kib * 1024, load, settings));
    return { ...registry, documents: [...documents].sort((a, b) => a.bytes - b.bytes), baselineCurve, settings };
  } finally {
    load.close();
  }
}

/** The bare server serving `source` cut or repeated to `bytes`: a warm-up, then half the measured duration. */
async function measureBaselineAt(
  source: Buffer,
  bytes: number,
  load: LoadGenerator,
  settings: Required<Omit<RegistryBenchOptions, 'paths' | 'baselineKiB'>>,
): Promise<BaselinePoint> {
  const body = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += source.length) source.copy(body, at, 0, Math.min(source.length, bytes - at));
  const baseline = await startBaseline('/registry', body, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=60' });
  try {
    const run = async (durationSeconds: number) => {
      const cpu = process.cpuUsage();
      const r = await load.run(
        { kind: 'autocannon', url: `${baseline.url}/registry`, connections: settings.connections, durationSeconds },
        (durationSeconds + 30) * 1000,
      );
      const used = process.cpuUsage(cpu);
      return { ...r, cpuMicros: used.user + used.system };
    };
    if (settings.warmupSeconds > 0) await run(settings.warmupSeconds);
    const side = merge([await run(settings.durationSeconds / 2)]);
    return { bytes, reqPerSec: side.reqPerSec, p50Ms: side.p50Ms, cpuMicrosPerRequest: side.cpuMicrosPerRequest };
  } finally {
    await new Promise<void>((resolve) => {
      baseline.server.close(() => resolve());
      baseline.server.closeAllConnections();
    });
  }
}

/** Gateway vs a bare `node:http` server serving the same bytes and headers, for one document. */
async function compareDocument(
  gatewayUrl: string,
  path: string,
  load: LoadGenerator,
  settings: Required<Omit<RegistryBenchOptions, 'paths' | 'baselineKiB'>>,
): Promise<DocumentComparison> {
  // The exact bytes and caching headers the gateway serves.
  const res = await fetch(`${gatewayUrl}${path}`);
  if (res.status !== 200) throw new Error(`GET ${path} on the gateway answered ${res.status}`);
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

  const baseline = await startBaseline(path, body, headers);
  try {
    const check = await fetch(`${baseline.url}${path}`);
    const copy = Buffer.from(await check.arrayBuffer());
    if (!copy.equals(body)) throw new Error(`the baseline does not serve the same bytes as the gateway for ${path}`);
    const again = Buffer.from(await (await fetch(`${gatewayUrl}${path}`)).arrayBuffer());
    if (!again.equals(body)) throw new Error(`GET ${path} on the gateway is not stable between two requests; the comparison would be unfair`);

    const run = async (url: string, durationSeconds: number) => {
      const cpu = process.cpuUsage();
      const r = await load.run({ kind: 'autocannon', url: `${url}${path}`, connections: settings.connections, durationSeconds }, (durationSeconds + 30) * 1000);
      const used = process.cpuUsage(cpu);
      return { ...r, cpuMicros: used.user + used.system };
    };
    // Warm both (JIT, keep-alive sockets, the gateway's document cache), then measure in the
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
    return { path, bytes: body.length, sha256: sha256(body), gateway: merge([g1, g2]), baseline: merge([b1, b2]) };
  } finally {
    await new Promise<void>((resolve) => {
      baseline.server.close(() => resolve());
      baseline.server.closeAllConnections();
    });
  }
}

/** The result as compact tables with the ratios gateway/baseline: `/registry`, then every document by body size. */
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
  const lines = [
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
  ];
  if (r.documents.length > 1) {
    lines.push(
      '',
      `By body size: the gateway's cached documents (one code path), each against a bare node:http serving its bytes, same settings`,
      '',
      table(
        ['document', 'bytes', 'gateway req/s', 'baseline req/s', 'ratio req/s', 'gateway CPU µs/req', 'baseline CPU µs/req', 'ratio CPU', 'failures'],
        r.documents.map((d) => [
          d.path,
          String(d.bytes),
          fmt(d.gateway.reqPerSec, 0),
          fmt(d.baseline.reqPerSec, 0),
          fmtRatio(ratio(d.gateway.reqPerSec, d.baseline.reqPerSec)),
          fmt(d.gateway.cpuMicrosPerRequest, 0),
          fmt(d.baseline.cpuMicrosPerRequest, 0),
          fmtRatio(ratio(d.gateway.cpuMicrosPerRequest, d.baseline.cpuMicrosPerRequest)),
          String(d.gateway.failures + d.baseline.failures),
        ]),
      ),
      `  ${sizeSpread(r.documents)}`,
    );
  }
  if (r.baselineCurve.length > 0) {
    lines.push(
      '',
      `Bare node:http alone, the registry's bytes cut or repeated to each size (${s.warmupSeconds} s warm-up, ${s.durationSeconds / 2} s measured each):`,
      '',
      table(
        ['body bytes', 'req/s', 'p50 ms', 'CPU µs/req'],
        r.baselineCurve.map((p) => [String(p.bytes), fmt(p.reqPerSec, 0), fmt(p.p50Ms, 2), fmt(p.cpuMicrosPerRequest, 0)]),
      ),
    );
  }
  return lines.join('\n');
}

/** One line: the range of each figure across the documents (a size effect moves the baseline; a regression moves the gateway's CPU at every size). */
export function sizeSpread(documents: DocumentComparison[]): string {
  const range = (xs: number[], digits: number) => `${fmt(Math.min(...xs), digits)}-${fmt(Math.max(...xs), digits)}`;
  const ratios = documents.map((d) => ratio(d.gateway.reqPerSec, d.baseline.reqPerSec)).filter((x) => Number.isFinite(x));
  return [
    `across ${documents.length} sizes (${range(
      documents.map((d) => d.bytes / 1024),
      1,
    )} KB): ratio req/s ${ratios.length > 0 ? range(ratios, 2) : 'n/a'}`,
    `baseline req/s ${range(
      documents.map((d) => d.baseline.reqPerSec),
      0,
    )}`,
    `gateway req/s ${range(
      documents.map((d) => d.gateway.reqPerSec),
      0,
    )}`,
    `gateway CPU µs/req ${range(
      documents.map((d) => d.gateway.cpuMicrosPerRequest),
      0,
    )}`,
  ].join('; ');
}
