import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { HttpMetrics } from './metrics.js';

/** The request id header, read from the request and sent back on every answer. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** A request id a client may choose: 1 to 128 characters of `[A-Za-z0-9._:-]`. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id of `req`: its `X-Request-Id` header when that is a sane token (1-128 characters
 * of `[A-Za-z0-9._:-]`), else a new UUID v4 (`crypto.randomUUID`). A header sent twice is not sane.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Header of this process's own self-check requests (the gateway's prober): a request carrying
 * {@link selfCheckToken} in it is logged at `debug` instead of `info`, so the request log shows
 * what clients do, not the service checking itself. The token is random per process, so a client
 * cannot hide its requests from the log by sending the header.
 */
export const SELF_CHECK_HEADER = 'x-acg-self-check';
const SELF_CHECK_TOKEN = randomBytes(16).toString('hex');
/** The value of {@link SELF_CHECK_HEADER} this process's request observers recognise (random per process). */
export function selfCheckToken(): string {
  return SELF_CHECK_TOKEN;
}

/** Route template of a request no route serves (404, or refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

const ROUTE = Symbol('acg.route');
const STARTED = Symbol('acg.started');
type Observed = IncomingMessage & { [ROUTE]?: string; [STARTED]?: number };

/** Names the route template `req` matched (`/api/v1/jobs/{job_id}`): the `route` of its log line and metrics. */
export function setRoute(req: IncomingMessage, template: string): void {
  (req as Observed)[ROUTE] = template;
}

/** The route template set by {@link setRoute}, else {@link UNMATCHED_ROUTE}. */
export function routeOf(req: IncomingMessage): string {
  return (req as Observed)[ROUTE] ?? UNMATCHED_ROUTE;
}

/** Status of an answer: its status code, or 499 (nginx's "client closed request") when the client left before the response ended. */
function statusOf(res: ServerResponse): number {
  return res.writableEnded ? res.statusCode : 499;
}

/** Options of {@link createRequestObserver}. */
export interface RequestObserverOptions {
  /** Where the request lines go (`info`; 5xx at `error`). */
  log: Logger;
  /** Counts every answer in `acg_http_requests_total` and its latency. */
  metrics?: HttpMetrics;
  /** The client IP of the line (the server's own rule, e.g. the last X-Forwarded-For hop behind a proxy). */
  clientIp(req: IncomingMessage): string;
}

/** The request log line: one per answered request. */
export interface RequestLine {
  request_id: string;
  method: string;
  /** path template, or `unmatched` */
  route: string;
  status: number;
  /** from the request head to the end of the response, milliseconds (0.1 ms precision) */
  ms: number;
  ip: string;
}

/**
 * Observes each request of a node:http server (call it first thing in the request listener):
 * sets its request id ({@link requestIdOf}) on `req.id` and the `X-Request-Id` response header,
 * and when the answer ends (or the client leaves) writes one log line ({@link RequestLine}:
 * `request_id`, `method`, `route`, `status`, `ms`, `ip`; message `request` at `info`, or `request
 * failed` at `error` for 5xx) and counts it in `metrics`. So every answer is logged and counted, 404, 405 and refusals
 * before any handler included. A request of this process's own self-checks ({@link SELF_CHECK_HEADER}
 * with {@link selfCheckToken}) is logged at `debug` (5xx still at `error`). Returns the request id.
 *
 * The line has pino-http's shape without pino-http's per-request machinery: pino-http makes a
 * child logger and three listeners for every request, which on `GET /registry` at 10 connections
 * measured p99 2.6-3.1x bare node:http (0.96x without it, same run; even with the line itself
 * off). Here one `close` listener does it all and the line is logged on the parent logger.
 */
export function createRequestObserver(o: RequestObserverOptions): (req: IncomingMessage, res: ServerResponse) => string {
  const { metrics, log } = o;
  return (req, res) => {
    const started = performance.now();
    (req as Observed)[STARTED] = started;
    const id = requestIdOf(req);
    (req as IncomingMessage & { id?: string }).id = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    // `close` follows `finish` on a completed answer, and also comes when the client leaves early
    res.once('close', () => {
      const status = statusOf(res);
      const ms = performance.now() - started;
      const route = routeOf(req);
      metrics?.observe(route, req.method ?? 'GET', status, ms / 1000);
      if (status >= 500) {
        if (log.isLevelEnabled('error')) log.error(line(req, id, route, status, ms, o), 'request failed');
      } else if (req.headers[SELF_CHECK_HEADER] === SELF_CHECK_TOKEN) {
        if (log.isLevelEnabled('debug')) log.debug(line(req, id, route, status, ms, o), 'self-check request');
      } else if (log.isLevelEnabled('info')) {
        log.info(line(req, id, route, status, ms, o), 'request');
      }
    });
    return id;
  };
}

function line(req: IncomingMessage, id: string, route: string, status: number, ms: number, o: RequestObserverOptions): RequestLine {
  return { request_id: id, method: req.method ?? 'GET', route, status, ms: Math.round(ms * 10) / 10, ip: o.clientIp(req) };
}
