import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerTokenOf } from '@acg/identity/bearer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/** The path every service serves its metrics at. */
export const METRICS_PATH = '/metrics';

const TITLES: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 500: 'Internal Server Error' };

/** Writes an RFC 9457 problem+json answer (`type` about:blank). */
export function writeProblem(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail });
  res.writeHead(status, { ...headers, 'Content-Type': 'application/problem+json', 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * True when `authorization` is `Bearer <token>` (scheme case-insensitive), compared in constant time.
 * Always true when `token` is undefined or empty (the endpoint is open).
 */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const presented = bearerTokenOf(authorization);
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}

/**
 * The `GET /metrics` handler of one registry: the Prometheus text exposition format (0.0.4),
 * `Cache-Control: no-store`. With `token` (METRICS_TOKEN) set, a request without
 * `Authorization: Bearer <token>` gets 401 problem+json with `WWW-Authenticate: Bearer`. The method
 * is the caller's to check (GET and HEAD; HEAD gets the headers only). A registry that cannot be
 * read answers 500 problem+json.
 */
export function metricsHandler(registry: Registry, token?: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (!metricsAuthorized(req.headers.authorization, token)) {
      return writeProblem(res, 401, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.', { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    let text: string;
    try {
      text = await registry.metrics();
    } catch {
      return writeProblem(res, 500, 'The metrics could not be collected.');
    }
    res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(text)) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}

/** A running metrics listener (the worker's): its URL and `close()`. */
export interface MetricsServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * A tiny node:http listener serving only `GET /metrics` (and HEAD) for a process without an HTTP
 * server of its own (the worker, `WORKER_METRICS_PORT`). Other paths: 404; other methods: 405 with
 * `Allow: GET, HEAD`; both problem+json. Resolves once listening; rejects when the port is taken.
 */
export async function startMetricsServer(o: { registry: Registry; port: number; host?: string; token?: string; log?: Logger }): Promise<MetricsServer> {
  const handle = metricsHandler(o.registry, o.token);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH) return writeProblem(res, 404, `Only ${METRICS_PATH} is served here.`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return writeProblem(res, 405, 'Use GET.', { Allow: 'GET, HEAD' });
    void handle(req, res).catch((e) => {
      o.log?.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'metrics request failed');
      writeProblem(res, 500, 'The metrics could not be collected.');
    });
  });
  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${METRICS_PATH}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
