import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type jayson from 'jayson';
import { createRequestObserver, METRICS_PATH, metricsHandler, setRoute, traceRequest, writeProblem, type HttpMetrics, type Registry } from '@acg/observability';
import type { Logger } from 'pino';
import { isRedisUnavailable } from '@acg/redis';
import { JsonNumberError, parseStrictJson, ProblemError } from '@acg/schemas';
import type { TokenBucket } from '../ratelimit.js';
import type { RpcContext } from '../rpc/context.js';
import { internalError, invalidRequest, limitExceeded, parseError, RpcError } from '../rpc/errors.js';
import { SIGNATURE_HEADERS, verifyBundleSignature } from '../signature.js';
import { dispatchJsonRpc, errorResponse, jsonNestingDepth, MAX_JSON_DEPTH, type JsonRpcId } from './jsonrpc.js';

/** Options of {@link createRpcListener}. */
export interface RpcListenerOptions {
  server: jayson.Server;
  bucket: TokenBucket;
  log: Logger;
  /** Largest body, bytes; larger gets HTTP 413 with -32600. */
  maxBodyBytes: number;
  /** Take the client IP from the last X-Forwarded-For hop. */
  trustProxy: boolean;
  /** The builder's registry (served at `GET /metrics`) and its HTTP request metrics. */
  metrics?: { registry: Registry; http: HttpMetrics; token?: string };
}

/** Client IP: the socket peer, or with `trustProxy` the last `X-Forwarded-For` hop. IPv4-mapped IPv6 is unwrapped. */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  let ip = req.socket.remoteAddress ?? 'unknown';
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const last = (Array.isArray(xff) ? xff.join(',') : (xff ?? ''))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .pop();
    if (last) ip = last;
  }
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

class BodyTooLarge extends Error {}

/**
 * How much of an oversized body is still read and discarded after the 413, bytes, so the client can
 * read the answer (closing a socket on unread data resets it, and the 413 is lost); past it the
 * socket is closed. The request timeout bounds the time ({@link BUILDER_REQUEST_TIMEOUT_MS}).
 */
export const MAX_DISCARDED_BYTES = 8 * 1_048_576;
/** Longest wait for a request's head, ms (node's `server.headersTimeout`; 408 past it). */
export const BUILDER_HEADERS_TIMEOUT_MS = 10_000;
/** Longest wait for a whole request, ms (node's `server.requestTimeout`; 408 past it). */
export const BUILDER_REQUEST_TIMEOUT_MS = 30_000;

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (refused) {
        if (size > max + MAX_DISCARDED_BYTES) req.socket.destroy();
        return;
      }
      if (size > max) {
        refused = true;
        chunks.length = 0;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => reject(new Error('the connection closed before the request body ended')));
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/**
 * The `/rpc` route (docs/spec-notes.md 4, 5, 8; docs/decisions.md "Errors"), in this order:
 * 1. rate limit: one token per HTTP request from the client IP, then one per extra call of a batch
 *    (token bucket in Redis) → HTTP 429 + `Retry-After` and -32005;
 * 2. body size → HTTP 413 and -32600; 3. JSON → -32700, nested deeper than {@link MAX_JSON_DEPTH} → -32600;
 * 4. `X-Bundle-Signature` (or `X-Flashbots-Signature`) over the exact body bytes → -32600;
 * 5. batch length at most the burst (20) → -32600;
 * 6. {@link dispatchJsonRpc}: -32600 for a body or batch element that is not a request object (also `[]`),
 *    then jayson per request object: -32600 invalid request, -32601 unknown method, each method's errors.
 * JSON-RPC errors travel with HTTP 200 (clients read the error object); a body of only notifications gets
 * 204 with no body. Other paths → 404; other methods than POST on `/rpc` → 405 with `Allow: POST`
 * (CONNECT, which never reaches this listener, is answered by {@link refuseConnect}).
 * `GET /metrics` serves the builder's Prometheus metrics (METRICS_TOKEN applies; other methods 405
 * problem+json). Every answer carries `X-Request-Id` and is logged in one line and counted
 * (`createRequestObserver` of @acg/observability; routes `/rpc`, `/metrics`, `unmatched`).
 */
export function createRpcListener(opts: RpcListenerOptions): RequestListener {
  const { server, bucket, log } = opts;
  const limited = (res: ServerResponse, retryAfterMs: number) => {
    const { ratePerSecond, burst } = bucket.opts;
    send(
      res,
      429,
      errorResponse(
        limitExceeded(`Rate limit exceeded: ${ratePerSecond} requests per second per IP, burst ${burst}. Retry after ${retryAfterMs} ms.`, {
          retry_after_ms: retryAfterMs,
        }),
      ),
      { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    );
  };

  const observe = createRequestObserver({ log: log.child({ module: 'http' }), metrics: opts.metrics?.http, clientIp: (req) => clientIp(req, opts.trustProxy) });
  const metrics = opts.metrics && metricsHandler(opts.metrics.registry, opts.metrics.token);

  // each request in its OpenTelemetry SERVER span (a plain call without tracing): docs/operating.md → Traces
  return (req, res) => traceRequest(req, res, () => listen(req, res));
  function listen(req: IncomingMessage, res: ServerResponse): void {
    observe(req, res);
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === METRICS_PATH && metrics) {
        setRoute(req, METRICS_PATH);
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          req.resume();
          return writeProblem(res, 405, 'Use GET.', { Allow: 'GET, HEAD' });
        }
        return metrics(req, res);
      }
      if (path === '/rpc') setRoute(req, '/rpc');
      if (path !== '/rpc') return send(res, 404, errorResponse(invalidRequest('Not found: JSON-RPC is served at POST /rpc.', {}, 404)));
      if (req.method !== 'POST') return send(res, 405, errorResponse(invalidRequest('Use POST with a JSON-RPC 2.0 body.', {}, 405)), { allow: 'POST' });
      const ip = clientIp(req, opts.trustProxy);
      const first = await bucket.take(ip, 1);
      if (!first.allowed) {
        req.resume();
        return limited(res, first.retryAfterMs);
      }
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > opts.maxBodyBytes) {
        // the rest is read and discarded (up to a bound) so the client reads the 413; only a body too large even for that closes the connection
        const closeAfter = declared > opts.maxBodyBytes + MAX_DISCARDED_BYTES;
        if (!closeAfter) void readBody(req, 0).catch(() => undefined);
        else req.resume();
        return send(
          res,
          413,
          errorResponse(invalidRequest(`Request body of ${declared} bytes is larger than ${opts.maxBodyBytes} bytes.`, {}, 413)),
          closeAfter ? { connection: 'close' } : {},
        );
      }
      let raw: Buffer;
      try {
        raw = await readBody(req, opts.maxBodyBytes);
      } catch (e) {
        if (e instanceof BodyTooLarge) return send(res, 413, errorResponse(invalidRequest(`Request body is larger than ${opts.maxBodyBytes} bytes.`, {}, 413)));
        return;
      }
      const text = raw.toString('utf8');
      let body: unknown;
      try {
        // the shared strict parse of every surface (@acg/schemas): 1e400 is refused, never Infinity.
        // V8's parser is iterative: any depth up to the body limit is safe here
        body = parseStrictJson(text);
      } catch (e) {
        if (e instanceof JsonNumberError) {
          return send(res, 200, errorResponse(new RpcError('invalidParams', 400, `Invalid params: ${e.message}`, { reason: 'number_not_representable' })));
        }
        return send(res, 200, errorResponse(parseError('Parse error: the body is not valid JSON.')));
      }
      if (jsonNestingDepth(text) > MAX_JSON_DEPTH) {
        return send(
          res,
          200,
          errorResponse(
            invalidRequest(`Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`, { reason: 'nesting_too_deep', limit: MAX_JSON_DEPTH }),
          ),
        );
      }
      const singleId: JsonRpcId =
        body && typeof body === 'object' && !Array.isArray(body) && ['string', 'number'].includes(typeof (body as { id?: unknown }).id)
          ? ((body as { id: JsonRpcId }).id ?? null)
          : null;
      const sigHeader = SIGNATURE_HEADERS.map((h) => req.headers[h]).find((v) => v !== undefined);
      let searcher: RpcContext['searcher'];
      try {
        searcher = await verifyBundleSignature(raw, Array.isArray(sigHeader) ? sigHeader[0] : sigHeader);
      } catch (e) {
        if (e instanceof ProblemError) return send(res, 200, errorResponse(e, singleId));
        throw e;
      }
      if (Array.isArray(body)) {
        if (body.length > bucket.opts.burst) {
          return send(res, 200, errorResponse(invalidRequest(`Batch of ${body.length} calls is over the limit of ${bucket.opts.burst} calls per request.`)));
        }
        if (body.length > 1) {
          const more = await bucket.take(ip, body.length - 1);
          if (!more.allowed) return limited(res, more.retryAfterMs);
        }
      }
      const context: RpcContext = { searcher, ip, log };
      const out = await dispatchJsonRpc(server, body, context, log);
      if (out === undefined) return send(res, 204, undefined);
      send(res, 200, out);
    })().catch((e) => {
      if (isRedisUnavailable(e)) {
        // Redis down or frozen (answered within its bounds, @acg/redis): retry later, nothing was taken
        log.warn({ err: (e as Error)?.message?.slice(0, 200) }, 'redis unavailable');
        return send(res, 503, errorResponse(internalError('The service is briefly unavailable; retry after 5 s.', { reason: 'service_unavailable' }, 503)), {
          'retry-after': '5',
        });
      }
      log.error({ err: e }, 'rpc route failed');
      send(res, 500, errorResponse(internalError('Internal error; it was logged.')));
    });
  }
}

/**
 * Answers an HTTP `CONNECT` request (the server's `connect` event; node:http destroys the socket
 * when nobody listens) with 405 and `Allow: POST`, as the route answers every other method.
 */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  const body = JSON.stringify(errorResponse(invalidRequest('Use POST with a JSON-RPC 2.0 body.', {}, 405)));
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
