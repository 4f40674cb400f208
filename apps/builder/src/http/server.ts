import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type jayson from 'jayson';
import type { Logger } from 'pino';
import type { TokenBucket } from '../ratelimit.js';
import type { RpcContext } from '../rpc/context.js';
import { RPC_ERRORS, RpcError, type JsonRpcErrorObject } from '../rpc/errors.js';
import { SIGNATURE_HEADERS, verifyBundleSignature } from '../signature.js';

/** Options of {@link createRpcListener}. */
export interface RpcListenerOptions {
  server: jayson.Server;
  bucket: TokenBucket;
  log: Logger;
  /** Largest body, bytes; larger gets HTTP 413 with -32600. */
  maxBodyBytes: number;
  /** Take the client IP from the last X-Forwarded-For hop. */
  trustProxy: boolean;
}

type JsonRpcId = string | number | null;
type JsonRpcResponse = { jsonrpc: '2.0'; id: JsonRpcId; result?: unknown; error?: JsonRpcErrorObject };

const errorBody = (error: JsonRpcErrorObject, id: JsonRpcId = null): JsonRpcResponse => ({ jsonrpc: '2.0', id, error });

/** Client IP: the socket peer, or with `trustProxy` the last `X-Forwarded-For` hop. IPv4-mapped IPv6 is unwrapped. */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  let ip = req.socket.remoteAddress ?? 'unknown';
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const last = (Array.isArray(xff) ? xff.join(',') : (xff ?? '')).split(',').map((s) => s.trim()).filter(Boolean).pop();
    if (last) ip = last;
  }
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
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

const NULL_ID_PREFIX = '\u0000acg-null-id:';

/**
 * JSON-RPC 2.0 says a request with `"id": null` is a call (answered with id null) and only a missing
 * id makes a notification; jayson treats both as notifications. Null ids are swapped for
 * sentinels before dispatch and swapped back in the responses.
 */
function protectNullIds(body: unknown): unknown {
  const fix = (r: unknown, i: number) =>
    r && typeof r === 'object' && !Array.isArray(r) && 'id' in r && (r as { id: unknown }).id === null ? { ...(r as object), id: `${NULL_ID_PREFIX}${i}` } : r;
  return Array.isArray(body) ? body.map(fix) : fix(body, 0);
}
function restoreNullIds(resp: unknown): unknown {
  const fix = (r: unknown) => (r && typeof r === 'object' && typeof (r as JsonRpcResponse).id === 'string' && ((r as JsonRpcResponse).id as string).startsWith(NULL_ID_PREFIX) ? { ...(r as object), id: null } : r);
  return Array.isArray(resp) ? resp.map(fix) : fix(resp);
}

/**
 * The `/rpc` route (SPEC 4, 5, 8; DESIGN "Errors"), in this order:
 * 1. rate limit: one token per HTTP request from the client IP, then one per extra call of a batch
 *    (token bucket in Redis) → HTTP 429 + `Retry-After` and -32005;
 * 2. body size → HTTP 413 and -32600; 3. JSON → -32700;
 * 4. `X-Bundle-Signature` (or `X-Flashbots-Signature`) over the exact body bytes → -32600;
 * 5. batch length at most the burst (20) → -32600;
 * 6. jayson `server.call(body, context)`: -32600 invalid request, -32601 unknown method, each method's errors.
 * JSON-RPC errors travel with HTTP 200 (clients read the error object); notifications get 204.
 */
export function createRpcListener(opts: RpcListenerOptions): RequestListener {
  const { server, bucket, log } = opts;
  const limited = (res: ServerResponse, retryAfterMs: number) => {
    const { ratePerSecond, burst } = bucket.opts;
    send(
      res,
      429,
      errorBody({ code: RPC_ERRORS.LIMIT_EXCEEDED, message: `Rate limit exceeded: ${ratePerSecond} requests per second per IP, burst ${burst}. Retry after ${retryAfterMs} ms.`, data: { retry_after_ms: retryAfterMs } }),
      { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    );
  };

  return (req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/rpc') return send(res, 404, errorBody({ code: RPC_ERRORS.INVALID_REQUEST, message: `Not found: JSON-RPC is served at POST /rpc.` }));
      if (req.method !== 'POST') return send(res, 405, errorBody({ code: RPC_ERRORS.INVALID_REQUEST, message: 'Use POST with a JSON-RPC 2.0 body.' }), { allow: 'POST' });
      const ip = clientIp(req, opts.trustProxy);
      const first = await bucket.take(ip, 1);
      if (!first.allowed) {
        req.resume();
        return limited(res, first.retryAfterMs);
      }
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > opts.maxBodyBytes) {
        req.resume();
        return send(res, 413, errorBody({ code: RPC_ERRORS.INVALID_REQUEST, message: `Request body of ${declared} bytes is larger than ${opts.maxBodyBytes} bytes.` }), { connection: 'close' });
      }
      let raw: Buffer;
      try {
        raw = await readBody(req, opts.maxBodyBytes);
      } catch (e) {
        if (e instanceof BodyTooLarge) return send(res, 413, errorBody({ code: RPC_ERRORS.INVALID_REQUEST, message: `Request body is larger than ${opts.maxBodyBytes} bytes.` }), { connection: 'close' });
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return send(res, 200, errorBody({ code: RPC_ERRORS.PARSE_ERROR, message: 'Parse error: the body is not valid JSON.' }));
      }
      const singleId: JsonRpcId =
        body && typeof body === 'object' && !Array.isArray(body) && ['string', 'number'].includes(typeof (body as { id?: unknown }).id) ? ((body as { id: JsonRpcId }).id ?? null) : null;
      const sigHeader = SIGNATURE_HEADERS.map((h) => req.headers[h]).find((v) => v !== undefined);
      let searcher: RpcContext['searcher'];
      try {
        searcher = await verifyBundleSignature(raw, Array.isArray(sigHeader) ? sigHeader[0] : sigHeader);
      } catch (e) {
        if (e instanceof RpcError) return send(res, 200, errorBody(e.toJSON(), singleId));
        throw e;
      }
      if (Array.isArray(body)) {
        if (body.length > bucket.opts.burst) {
          return send(res, 200, errorBody({ code: RPC_ERRORS.INVALID_REQUEST, message: `Batch of ${body.length} calls is over the limit of ${bucket.opts.burst} calls per request.` }));
        }
        if (body.length > 1) {
          const more = await bucket.take(ip, body.length - 1);
          if (!more.allowed) return limited(res, more.retryAfterMs);
        }
      }
      const context: RpcContext = { searcher, ip, log };
      server.call(protectNullIds(body) as never, context, (err, response) => {
        const out = err ?? response;
        if (out === undefined || out === null) return send(res, 204, undefined);
        send(res, 200, restoreNullIds(out));
      });
    })().catch((e) => {
      log.error({ err: (e as Error)?.message?.slice(0, 300) }, 'rpc route failed');
      send(res, 500, errorBody({ code: RPC_ERRORS.INTERNAL_ERROR, message: 'Internal error; it was logged.' }));
    });
  };
}
