import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createOpenApiNodeHttpHandler, generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from '../routers/index.js';
import type { Services } from '../services.js';
import { rawBodies, type Context } from '../trpc/context.js';
import { GatewayRateLimit } from './rateLimit.js';
import { problemOf, redisUnavailableProblem, statusTitle } from '../trpc/problem.js';
import type { TRPCError } from '@trpc/server';

/** Largest accepted request body, bytes (DESIGN "Errors": 413 beyond). */
export const MAX_BODY_BYTES = 1_048_576;

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization, PAYMENT-SIGNATURE, X-PAYMENT, Idempotency-Key, If-None-Match',
  'Access-Control-Expose-Headers': 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, ETag, Retry-After, Location, X-Request-Id',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
};

/** Writes an RFC 9457 problem response. */
export function sendProblem(res: ServerResponse, status: number, detail: string, extra: Record<string, unknown> = {}): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/problem+json');
  res.end(JSON.stringify({ type: 'about:blank', title: statusTitle(status), status, detail, ...extra }));
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.destroy();
        reject(new BodyTooLarge());
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
class BodyTooLarge extends Error {}

/**
 * The gateway's request listener. Reads and parses JSON bodies itself (413 / 400 problem+json),
 * keeping raw bytes aside; serves /openapi.json, /llms.txt and /sitemap.xml; sends /trpc/* to
 * tRPC's native adapter; everything else to the trpc-to-openapi REST bridge (SPEC paths).
 */
export function createRequestListener(services: Services) {
  const createContext = (transport: Context['transport']) => ({ req, res }: { req: IncomingMessage; res: ServerResponse }): Context => ({
    req,
    res,
    services,
    transport,
    response: {},
    responseHeaders: {},
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const responseMeta = ({ ctx, errors }: { ctx?: Context; errors: readonly TRPCError[] }): any => {
    if (errors.length > 0) {
      const { status, headers } = problemOf(errors[0]);
      return { status, headers: { ...headers, 'Content-Type': status === 402 ? 'application/json' : 'application/problem+json' } };
    }
    return { status: ctx?.response.status ?? 200, headers: ctx?.responseHeaders ?? {} };
  };
  const onError = ({ error, path }: { error: TRPCError; path?: string }) => {
    if (redisUnavailableProblem(error.cause)) {
      services.log.warn({ path, err: error.cause?.message?.slice(0, 200) }, 'redis unavailable');
    } else if (problemOf(error).status >= 500 || error.code === 'INTERNAL_SERVER_ERROR') {
      services.log.error({ path, err: error.cause?.message?.slice(0, 300) ?? error.message.slice(0, 300) }, 'internal error');
    }
  };
  const rest = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: createContext('rest') as never,
    responseMeta: responseMeta as never,
    onError: onError as never,
    maxBodySize: MAX_BODY_BYTES,
  });
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    createContext: createContext('trpc') as never,
    responseMeta: responseMeta as never,
    onError: onError as never,
  });

  const rateLimit = new GatewayRateLimit(services.redis, services.keys, services.config.rateLimitPerSecond, services.config.trustProxy);

  let openapiJson: string | undefined;
  const openapi = () =>
    (openapiJson ??= JSON.stringify(
      generateOpenApiDocument(appRouter, {
        title: 'Agent Capability Gateway',
        description:
          'Discover paid capabilities and execute them per call with x402 (USDC on Base). Errors are RFC 9457 problem details; 402 carries the x402 challenge.',
        version: '0.1.0',
        openApiVersion: '3.0.3',
        baseUrl: services.publicBaseUrl(),
        securitySchemes: {
          x402: { type: 'apiKey', in: 'header', name: 'PAYMENT-SIGNATURE', description: 'x402 v2 PaymentPayload, base64 JSON' },
        },
      }),
    ));

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const requestId = (req.headers['x-request-id'] as string | undefined)?.slice(0, 64) ?? randomUUID();
    res.setHeader('X-Request-Id', requestId);
    for (const [k, v] of Object.entries(CORS)) res.setHeader(k, v);
    res.on('finish', () => {
      services.log.debug({ requestId, method: req.method, url: req.url, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'request');
    });
    try {
      const url = req.url ?? '/';
      const path = url.split('?')[0];
      if (req.method === 'OPTIONS') {
        res.statusCode = 204;
        res.end();
        return;
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        if (path === '/openapi.json') return sendDocument(res, 'application/json', openapi(), 'public, max-age=300');
        // Server-side document cache (SPEC 4: /registry cached 60 s, health 10 s): the bytes the
        // discovery procedures return, rendered once per cache period, served without re-serializing.
        // The procedures stay the definition (OpenAPI, /trpc); this only skips per-request stringify.
        if (path === '/registry' || path === '/gateway-catalog.json') {
          const d = path === '/registry' ? await services.discovery.registry() : await services.discovery.catalog();
          return sendDocument(res, 'application/json', d.body, 'public, max-age=60', d.etag);
        }
        if (path === '/status/health') {
          const d = await services.discovery.health();
          return sendDocument(res, 'application/json', d.body, 'no-store');
        }
        if (path === '/llms.txt') {
          const d = await services.discovery.llmsTxt();
          return sendDocument(res, 'text/plain; charset=utf-8', d.body, 'public, max-age=60', d.etag);
        }
        if (path === '/sitemap.xml') {
          const d = await services.discovery.sitemap();
          return sendDocument(res, 'application/xml; charset=utf-8', d.body, 'public, max-age=3600', d.etag);
        }
      }
      const wait = await rateLimit.take(req);
      if (wait !== undefined) {
        res.setHeader('Retry-After', String(wait));
        return sendProblem(res, 429, `Too many requests from this address: at most ${rateLimit.perSecond} per second. Retry after ${wait} s.`);
      }
      if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH' || req.method === 'DELETE') {
        let raw: Buffer;
        try {
          raw = await readBody(req, MAX_BODY_BYTES);
        } catch (e) {
          if (e instanceof BodyTooLarge) return sendProblem(res, 413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`);
          throw e;
        }
        rawBodies.set(req, raw);
        const ct = String(req.headers['content-type'] ?? '');
        if (raw.length > 0 && ct.startsWith('application/json')) {
          try {
            (req as IncomingMessage & { body?: unknown }).body = JSON.parse(raw.toString('utf8'));
          } catch {
            return sendProblem(res, 400, 'The request body is not valid JSON.');
          }
        } else if (raw.length === 0 && ct.startsWith('application/json')) {
          (req as IncomingMessage & { body?: unknown }).body = {};
        }
      }
      if (path.startsWith('/trpc/')) return void (await trpc(req, res));
      await rest(req, res);
    } catch (e) {
      const unavailable = redisUnavailableProblem(e);
      if (unavailable) {
        services.log.warn({ requestId, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'redis unavailable');
        if (!res.headersSent) res.setHeader('Retry-After', unavailable.headers['Retry-After']);
        return sendProblem(res, 503, unavailable.body.detail);
      }
      services.log.error({ requestId, err: String((e as Error)?.message ?? e).slice(0, 300) }, 'unhandled request error');
      sendProblem(res, 500, 'An internal error occurred; it was logged. Retry later.');
    }
  };
}

function sendDocument(res: ServerResponse, type: string, body: string | Buffer, cacheControl: string, etag?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Cache-Control', cacheControl);
  if (etag) {
    res.setHeader('ETag', etag);
    const inm = res.req.headers['if-none-match'];
    if (inm && inm.split(',').some((t) => t.trim() === etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
  }
  res.end(body);
}

export { problemOf };
