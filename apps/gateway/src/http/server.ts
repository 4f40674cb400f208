import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequestObserver, METRICS_PATH, metricsHandler, setRoute, traceRequest } from '@acg/observability';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createOpenApiNodeHttpHandler, generateOpenApiDocument } from 'trpc-to-openapi';
import { documentCapabilities } from '../openapi.js';
import { appRouter } from '../routers/index.js';
import type { Services } from '../services.js';
import { rawBodies, type Context } from '../trpc/context.js';
import { carriesCredentials, mcpOriginRefusal, OriginPolicy } from './origin.js';
import { GatewayRateLimit } from './rateLimit.js';
import { problemOf, redisUnavailableProblem, SERVICE_UNAVAILABLE, statusTitle } from '../trpc/problem.js';
import { assertJsonContentType, BodyIncomplete, BodyRefused, jsonTooDeep, MAX_BODY_BYTES, MAX_JSON_DEPTH, parseJsonBody, readBody } from './body.js';
import { JsonNumberError, unsafeJsonNumber } from '@acg/schemas';
import { McpEndpoint } from '../mcp/handler.js';
import { MCP_PATH } from '../mcp/paidTool.js';
import { RouteTable } from './routes.js';
import { sendDocument } from './sendDocument.js';
import { problemBodyForTrpc } from './trpcProblem.js';
import { prefersHtml } from '../web/negotiate.js';
import { WebSite } from '../web/routes.js';
import type { TRPCError } from '@trpc/server';
import type { ResponseMeta } from '@trpc/server/http';
import type { NodeHTTPCreateContextFnOptions, NodeHTTPRequest, NodeHTTPResponse } from '@trpc/server/adapters/node-http';

/**
 * CORS (Fetch standard): every answer lets any origin read it and names the headers a browser
 * script may read; the request headers and methods a cross-origin caller may use are answered to
 * the preflight (OPTIONS) only, where browsers read them, and cached by the browser for 10 minutes.
 */
const CORS_HEADERS: readonly (readonly [string, string])[] = [
  ['Access-Control-Allow-Origin', '*'],
  [
    'Access-Control-Expose-Headers',
    'PAYMENT-REQUIRED, PAYMENT-RESPONSE, Idempotent-Replayed, Authentication-Info, ETag, Retry-After, Location, X-Request-Id, Allow, Mcp-Session-Id',
  ],
];
const CORS_PREFLIGHT_HEADERS: readonly (readonly [string, string])[] = [
  [
    'Access-Control-Allow-Headers',
    'Content-Type, Accept, Authorization, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Idempotency-Key, If-None-Match, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  ],
  ['Access-Control-Allow-Methods', 'GET, POST, OPTIONS'],
  ['Access-Control-Max-Age', '600'],
];

/**
 * Documents the listener serves itself (GET and HEAD), beside the router's REST paths. `/metrics`
 * (Prometheus text) is one of them for the route table (404/405) but is no capability: the
 * OpenAPI document, built from the router, does not list it.
 */
const DOCUMENTS = [
  '/openapi.json',
  '/registry',
  '/gateway-catalog.json',
  '/status/health',
  '/status/series',
  '/llms.txt',
  '/sitemap.xml',
  METRICS_PATH,
] as const;

/** Other paths the listener serves itself: the MCP endpoint (stateless Streamable HTTP: POST only, GET and DELETE are 405). */
const RAW_ROUTES = [{ path: MCP_PATH, methods: ['POST'] }] as const;

/** Writes an RFC 9457 problem response. */
export function sendProblem(res: ServerResponse, status: number, detail: string, extra: Record<string, unknown> = {}): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/problem+json');
  res.end(JSON.stringify({ type: 'about:blank', title: statusTitle(status), status, detail, ...extra }));
}

/**
 * The gateway's request listener. Every request runs in its OpenTelemetry SERVER span
 * (`traceRequest`, when tracing is on) and first gets its request id (`X-Request-Id`, taken
 * from the request when sane, else made) and, when its answer ends, one log line and its count in
 * the metrics (`createRequestObserver` of @acg/observability, labelled by route template). Then:
 * the route table answers 404/405 (a browser's GET of an unknown path gets the HTML 404 page); the
 * listener serves the web pages (`../web`: HTML to clients that prefer it, the JSON 404 to others),
 * the discovery documents and `/metrics` itself; reads and parses JSON bodies (413 / 400 problem+json), keeping raw bytes aside; sends
 * POST /mcp to the MCP endpoint (`../mcp`), /trpc/* to tRPC's native adapter, and everything else
 * to the trpc-to-openapi REST bridge (spec paths).
 */
export function createRequestListener(services: Services) {
  const createContext =
    (transport: Context['transport']) =>
    ({ req, res }: NodeHTTPCreateContextFnOptions<NodeHTTPRequest, NodeHTTPResponse>): Context => {
      // The listener is a node:http (HTTP/1.1) server, so the adapters hand back its own request and response.
      if (!(req instanceof IncomingMessage) || !(res instanceof ServerResponse)) throw new TypeError('the gateway serves HTTP/1.1 requests only');
      return { req, res, services, transport, response: {}, responseHeaders: {} };
    };
  const responseMeta = ({ ctx, errors }: { ctx?: Context; errors: readonly TRPCError[] }): ResponseMeta => {
    if (errors.length > 0) {
      const { status, headers } = problemOf(errors[0]);
      return { status, headers: { ...headers, 'Content-Type': status === 402 ? 'application/json' : 'application/problem+json' } };
    }
    return { status: ctx?.response.status ?? 200, headers: ctx?.responseHeaders ?? {} };
  };
  // A 5xx's line carries its real cause: the error's class (`err.type`), message and stack, and
  // its causes (the logger redacts URLs and secrets), with the request id of the answer.
  const onError = ({ error, path, req, ctx }: { error: TRPCError; path?: string; req?: IncomingMessage; ctx?: Context }) => {
    const request_id = (req as (IncomingMessage & { id?: string }) | undefined)?.id;
    if (redisUnavailableProblem(error.cause)) {
      services.log.warn({ request_id, path, err: error.cause?.message?.slice(0, 200) }, 'redis unavailable');
      // the REST bridge writes the tRPC code into the problem's `code` (INTERNAL_SERVER_ERROR): a store outage says `service_unavailable`
      if (ctx?.transport === 'rest') Object.defineProperty(error, 'code', { value: SERVICE_UNAVAILABLE });
    } else if (problemOf(error).status >= 500 || error.code === 'INTERNAL_SERVER_ERROR') {
      services.log.error({ request_id, path, err: error.cause ?? error }, 'internal error');
    }
  };
  const rest = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: createContext('rest'),
    responseMeta,
    onError,
    maxBodySize: MAX_BODY_BYTES,
  });
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    createContext: createContext('trpc'),
    responseMeta,
    onError,
  });

  const origins = new OriginPolicy(services.publicBaseUrl, services.config.allowedOrigins ?? []);
  const rateLimit = new GatewayRateLimit(services.redis, services.keys, services.config.rateLimitPerSecond, services.config.trustProxy);

  // rebuilt when the catalog changes (a provider registered or retired)
  let openapiJson: string | undefined;
  services.catalog.onChange(() => {
    openapiJson = undefined;
  });
  const openapi = () =>
    (openapiJson ??= JSON.stringify(
      documentCapabilities(
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
        services.catalog.list(),
      ),
    ));

  // the web pages for people and their files (src/web): GET and HEAD, in the route table like the documents
  const web = new WebSite(services);
  const routes = new RouteTable(appRouter, [...DOCUMENTS, ...web.paths()], RAW_ROUTES);
  const mcp = new McpEndpoint(services);
  const metrics = metricsHandler(services.metrics.registry, services.config.metrics.token);
  const observe = createRequestObserver({
    log: services.log.child({ module: 'http' }),
    metrics: services.metrics.http,
    clientIp: (req) => rateLimit.clientIp(req),
  });

  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const requestId = observe(req, res);
    for (const [k, v] of CORS_HEADERS) res.setHeader(k, v);
    try {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      const method = req.method ?? 'GET';
      // Every method and path gets an answer before any handler runs (docs/decisions.md "Errors").
      const route = routes.match(method, path);
      if (route.kind === 'not_found') {
        req.resume();
        // a browser gets the HTML 404 page; every other client the problem+json
        if ((method === 'GET' || method === 'HEAD') && prefersHtml(req)) return web.notFound(res, path);
        return sendProblem(res, 404, `No resource at ${path.slice(0, 200)}. The documented paths are listed at /openapi.json.`);
      }
      setRoute(req, route.template);
      if (route.kind === 'method_not_allowed') {
        req.resume();
        res.setHeader('Allow', route.allow);
        return sendProblem(res, 405, `${method.slice(0, 20)} is not allowed on ${path.slice(0, 200)}; allowed: ${route.allow}.`);
      }
      // DNS rebinding and cross-site use of a credential (docs/configuration.md → ALLOWED_ORIGINS): a
      // browser request from a foreign Origin may not reach /mcp nor act with a bearer token or a
      // sign-in-with-x proof; the CORS preflight of such a request is refused the same way. A
      // request with a credential is never answered `Access-Control-Allow-Origin: *`: only its own
      // (allowed) Origin may read the answer.
      const credentials = carriesCredentials(req);
      if (credentials) res.removeHeader('Access-Control-Allow-Origin');
      const foreign = origins.foreignOrigin(req);
      if (credentials && req.headers.origin !== undefined && foreign === undefined) {
        res.setHeader('Access-Control-Allow-Origin', req.headers.origin);
        res.setHeader('Vary', 'Origin');
      }
      if (foreign !== undefined && (path === MCP_PATH || credentials)) {
        req.resume();
        if (path === MCP_PATH) {
          res.statusCode = 403;
          res.setHeader('Content-Type', 'application/json');
          res.end(mcpOriginRefusal(foreign));
          return;
        }
        return sendProblem(
          res,
          403,
          `Origin ${foreign.slice(0, 200)} may not act with a bearer token or a sign-in-with-x proof on this gateway; allowed are the origin of its public base URL and ALLOWED_ORIGINS.`,
          { reason: 'origin_not_allowed' },
        );
      }
      if (method === 'OPTIONS') {
        for (const [k, v] of CORS_PREFLIGHT_HEADERS) res.setHeader(k, v);
        res.statusCode = 204;
        res.end();
        return;
      }
      if (q !== -1 && jsonTooDeep(safeDecode(url.slice(q + 1)))) {
        return sendProblem(res, 400, `The query nests deeper than ${MAX_JSON_DEPTH} levels.`);
      }
      // a /trpc query carries its input as JSON: the same strict numbers as a body (@acg/schemas parseStrictJson)
      const unsafeNumber = q !== -1 && path.startsWith('/trpc/') ? unsafeJsonNumber(safeDecode(url.slice(q + 1))) : undefined;
      if (unsafeNumber !== undefined) return sendProblem(res, 400, new JsonNumberError(unsafeNumber, []).message);
      if (method === 'GET' || method === 'HEAD') {
        if (web.kind(route.template) === 'file' && (await web.serve(route.template, req, res, path, q === -1 ? '' : url.slice(q + 1), sendProblem))) return;
        if (path === METRICS_PATH) return await metrics(req, res);
        if (path === '/openapi.json') return sendDocument(res, 'application/json', openapi(), 'public, max-age=300');
        // Server-side document cache (docs/spec-notes.md 4: /registry cached 60 s, health 10 s): the bytes the
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
        if (path === '/status/series') {
          const d = await services.discovery.series();
          return sendDocument(res, 'application/json', d.body, 'no-store');
        }
        if (path === '/llms.txt') {
          const d = await services.discovery.llmsTxt();
          return sendDocument(res, 'text/plain; charset=utf-8', d.body, 'public, max-age=60', d.etag);
        }
        if (path === '/sitemap.xml') {
          const d = await services.discovery.sitemap();
          return sendDocument(res, 'application/xml; charset=utf-8', d.body, 'public, max-age=60', d.etag);
        }
      }
      const wait = await rateLimit.take(req);
      if (wait !== undefined) {
        req.resume();
        res.setHeader('Retry-After', String(wait));
        return sendProblem(res, 429, `Too many requests from this address: at most ${rateLimit.perSecond} per second. Retry after ${wait} s.`);
      }
      // a web page is rendered per request (some read Redis): after the rate limit, unlike the cached documents
      if ((method === 'GET' || method === 'HEAD') && web.kind(route.template) === 'page') {
        if (await web.serve(route.template, req, res, path, q === -1 ? '' : url.slice(q + 1), sendProblem)) return;
      }
      if (method !== 'GET' && method !== 'HEAD') {
        try {
          const raw = await readBody(req, MAX_BODY_BYTES);
          rawBodies.set(req, raw);
          // A bodiless POST (e.g. .../cancel sent by curl -X POST) is an empty JSON object,
          // whatever its Content-Type says; a body needs JSON in UTF-8.
          if (raw.length === 0) {
            req.headers['content-type'] = 'application/json';
            (req as IncomingMessage & { body?: unknown }).body = {};
          } else {
            assertJsonContentType(req.headers['content-type']);
            req.headers['content-type'] = 'application/json';
            (req as IncomingMessage & { body?: unknown }).body = parseJsonBody(raw);
          }
        } catch (e) {
          // nobody is left to answer (a 408 was written by node's request timeout, or the client left)
          if (e instanceof BodyIncomplete) return;
          if (!(e instanceof BodyRefused)) throw e;
          // The rest of an oversized body is read and discarded (up to a bound, readBody) so the
          // client reads this answer; only a body too large even for that closes the connection.
          if (e.closeAfter) res.setHeader('Connection', 'close');
          // MCP speaks JSON-RPC: a number that does not round-trip is its invalid params (-32602)
          if (e.numberRefused && path === MCP_PATH) {
            res.writeHead(400, { 'Content-Type': 'application/json' });
            return void res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32602, message: `Invalid params: ${e.message}` }, id: null }));
          }
          return sendProblem(res, e.status, e.message);
        }
      }
      if (path === MCP_PATH) return void (await mcp.handle(req, res, (req as IncomingMessage & { body?: unknown }).body));
      if (path.startsWith('/trpc/')) {
        problemBodyForTrpc(res);
        return void (await trpc(req, res));
      }
      // HEAD of a REST path answers as GET does; node sends no body for HEAD.
      if (method === 'HEAD') req.method = 'GET';
      (req as IncomingMessage & { query?: unknown }).query = queryOf(q === -1 ? '' : url.slice(q + 1));
      await rest(req, res);
    } catch (e) {
      const unavailable = redisUnavailableProblem(e);
      if (unavailable) {
        services.log.warn({ request_id: requestId, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'redis unavailable');
        if (!res.headersSent) res.setHeader('Retry-After', unavailable.headers['Retry-After']);
        return sendProblem(res, 503, unavailable.body.detail, { reason: SERVICE_UNAVAILABLE, code: SERVICE_UNAVAILABLE });
      }
      services.log.error({ request_id: requestId, err: e }, 'unhandled request error');
      sendProblem(res, 500, 'An internal error occurred; it was logged. Retry later.');
    }
  };
  // each request in its OpenTelemetry SERVER span (a plain call without tracing): docs/operating.md → Traces
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => traceRequest(req, res, () => listener(req, res));
}

/**
 * The query string as the REST bridge reads it (`req.query`: name → values), in a null-prototype
 * object: trpc-to-openapi's own parser looks names up on a plain object, so `?toString=` or
 * `?constructor=` crashed it. Names that could reach a prototype are dropped.
 */
function queryOf(search: string): Record<string, string[]> {
  const query = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of new URLSearchParams(search)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue;
    query[k] ??= [];
    query[k].push(v);
  }
  return query;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export { problemOf };
