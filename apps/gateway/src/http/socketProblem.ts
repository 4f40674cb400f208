import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { statusTitle } from '../trpc/problem.js';

/** Writes a complete problem+json HTTP/1.1 response on a raw socket and closes it. */
export function endSocketWithProblem(socket: Duplex, status: number, detail: string): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify({ type: 'about:blank', title: statusTitle(status), status, detail });
  socket.end(
    `HTTP/1.1 ${status} ${statusTitle(status)}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** HTTP status for a request node's parser refused (llhttp error codes). */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

const CLIENT_ERROR_DETAIL: Record<number, string> = {
  431: 'The request headers are too large.',
  408: 'The request did not arrive in time (its headers, or the whole request with its body); send it again without pausing.',
};

/** Route label of answers written on the raw socket (CONNECT, requests node's parser refused): no route was matched, nor a request read. */
export const UNPARSED_ROUTE = 'unparsed';

/** Told of each answer written on the raw socket: its method (`CONNECT`, or undefined when the head was not parsed), status and client IP. */
export type OutsideAnswerObserver = (e: { method: string | undefined; status: number; ip: string }) => void;

/** Longest wait for a request's head (request line and headers), ms: node's `server.headersTimeout`. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Longest wait for a whole request (head and body), ms: node's `server.requestTimeout`. */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * How often node checks the two bounds above, ms (`connectionsCheckingInterval`, default 30 s, which
 * would let a 30 s bound run to 60 s): a late request is answered 408 within this much of its bound.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * Answers what never reaches the request listener, so no connection is dropped unanswered:
 * CONNECT (the gateway is no proxy: 405) and requests node's parser refuses (unknown method,
 * malformed head, oversized headers: 400/431) or that did not arrive within the HTTP timeouts
 * (408: {@link HEADERS_TIMEOUT_MS}, {@link REQUEST_TIMEOUT_MS}, also while the body is still coming), each as problem+json; `observe` logs and counts
 * each (a reset connection is neither answered nor observed).
 */
export function answerOutsideRequests(server: Server, observe?: OutsideAnswerObserver): void {
  const ip = (socket: Duplex) => (socket as Duplex & { remoteAddress?: string }).remoteAddress ?? 'unknown';
  server.on('connect', (_req, socket: Duplex) => {
    socket.on('error', () => undefined);
    observe?.({ method: 'CONNECT', status: 405, ip: ip(socket) });
    endSocketWithProblem(socket, 405, 'CONNECT is not supported: the gateway is not a proxy.');
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    socket.on('error', () => undefined);
    if (err.code === 'ECONNRESET') return void socket.destroy();
    // an answer already under way (its headers sent) cannot be replaced: close the connection
    if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) return void socket.destroy();
    const status = clientErrorStatus(err.code);
    observe?.({ method: undefined, status, ip: ip(socket) });
    endSocketWithProblem(socket, status, CLIENT_ERROR_DETAIL[status] ?? 'The request is not valid HTTP/1.1.');
  });
}
