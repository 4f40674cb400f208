import type { IncomingMessage } from 'node:http';
import { MIMEType } from 'node:util';
import { JsonNumberError, parseStrictJson } from '@acg/schemas';

/** Largest accepted request body, bytes (docs/decisions.md "Errors": 413 beyond). */
export const MAX_BODY_BYTES = 1_048_576;

/**
 * Deepest accepted JSON nesting (arrays and objects), levels. Checked on the raw text before
 * anything parses or validates it, so no recursive step (JSON.parse, zod, JSON.stringify) can
 * exhaust the stack: deeper input is a 400.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a request body was refused; `status` is the HTTP status to answer with. */
export class BodyRefused extends Error {
  override name = 'BodyRefused';
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
    /** Answer with `Connection: close`: the rest of the body is too large to read and discard. */
    readonly closeAfter = false,
    /** true when the body is JSON but holds a number that does not round-trip (MCP answers it as JSON-RPC -32602) */
    readonly numberRefused = false,
  ) {
    super(message);
  }
}

/** The connection closed before the request body ended (the client left, or the request timed out and was answered 408). */
export class BodyIncomplete extends Error {
  override name = 'BodyIncomplete';
  constructor() {
    super('the connection closed before the request body ended');
  }
}

/**
 * How much of an oversized body is still read (and thrown away) after the 413, bytes: the client
 * keeps sending while the answer goes out, and a connection closed on unread data is reset, which
 * takes the 413 with it (the client sees EPIPE or ECONNRESET instead). Past this the socket is
 * closed; node's `requestTimeout` bounds the time (docs/operating.md: HTTP timeouts).
 */
export const MAX_DISCARDED_BYTES = 8 * 1_048_576;

/**
 * Reads the request body up to `limit` bytes, also when it is sent chunked. Past the limit it
 * stops buffering and rejects with a 413 `BodyRefused` without destroying the socket, so the
 * caller can still answer on a kept-alive connection; the rest of the body is read and discarded
 * up to {@link MAX_DISCARDED_BYTES}, then the socket is closed. A body declared larger than
 * `limit + MAX_DISCARDED_BYTES` is refused at once with `closeAfter` set (answer with
 * `Connection: close`). A connection that closes before the body ends rejects with the socket's error.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = (closeAfter = false) => new BodyRefused(413, `The request body exceeds ${limit} bytes.`, closeAfter);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit + MAX_DISCARDED_BYTES) {
      req.resume();
      return reject(tooLarge(true));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const refuse = () => {
      done = true;
      chunks.length = 0;
      reject(tooLarge());
    };
    if (declared > limit) refuse();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (done) {
        if (size > limit + MAX_DISCARDED_BYTES) req.socket.destroy();
        return;
      }
      if (size > limit) refuse();
      else chunks.push(c);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
      done = true;
    });
    const fail = (e: Error) => {
      if (!done) reject(e);
      done = true;
    };
    req.on('error', fail);
    req.on('close', () => fail(new BodyIncomplete()));
  });
}

/**
 * Checks a request's `Content-Type` for a JSON body: `application/json` (parameters other than
 * `charset=utf-8` refused) or a `+json` structured suffix. Throws a 415 `BodyRefused` otherwise.
 */
export function assertJsonContentType(contentType: string | undefined): void {
  if (!contentType) throw new BodyRefused(415, 'A request body needs Content-Type: application/json.');
  let mime: MIMEType;
  try {
    mime = new MIMEType(contentType);
  } catch {
    throw new BodyRefused(415, 'The Content-Type header is malformed; send application/json.');
  }
  const json = mime.essence === 'application/json' || (mime.type === 'application' && mime.subtype.endsWith('+json'));
  if (!json) throw new BodyRefused(415, `Content-Type ${mime.essence} is not supported; send application/json.`);
  const charset = mime.params.get('charset');
  if (charset !== null && charset.toLowerCase() !== 'utf-8') {
    throw new BodyRefused(415, `charset=${charset} is not supported; send UTF-8 JSON (application/json).`);
  }
}

/** True when `text` nests arrays/objects deeper than `max` levels (strings are skipped). Linear, no recursion. */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Parses a JSON request body with the shared strict parse (`parseStrictJson` of @acg/schemas):
 * 400 `BodyRefused` for nesting deeper than `MAX_JSON_DEPTH`, invalid JSON (also invalid UTF-8),
 * or a number literal that does not round-trip (`1e400`, `-1e400`, `1e-400`, integers beyond
 * 2^53 − 1; `numberRefused: true`), so no such number reaches validation, payment or a provider.
 */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new BodyRefused(400, 'The request body is not valid UTF-8.');
  }
  if (jsonTooDeep(text)) throw new BodyRefused(400, `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  try {
    return parseStrictJson(text);
  } catch (e) {
    if (e instanceof JsonNumberError) throw new BodyRefused(400, e.message, false, true);
    throw new BodyRefused(400, 'The request body is not valid JSON.');
  }
}
