import { GatewayRequestError } from './errors.js';
import { parseJson } from './protocol.js';

/** What one HTTP request to the gateway needs of a `GatewayContext` (`context.ts`): base URL, fetch, extra headers and the Idempotency-Key setting. */
export interface HttpContext {
  readonly baseUrl: string;
  readonly fetch: typeof globalThis.fetch;
  readonly headers: Readonly<Record<string, string>>;
  readonly idempotency: boolean;
}

/** An HTTP answer with its body read as text. */
export interface GatewayResponse {
  response: Response;
  text: string;
}

/** Request options of {@link request}. */
export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** JSON text */
  body?: string;
  signal?: AbortSignal;
}

/**
 * One HTTP request to `ctx.baseUrl + path` (no payment): JSON accept header, the context's extra
 * headers, body read as text. Throws {@link GatewayRequestError} when the gateway cannot be reached
 * or the body cannot be read.
 */
export async function request(ctx: HttpContext, path: string, opts: RequestOptions = {}): Promise<GatewayResponse> {
  const url = `${ctx.baseUrl}${path}`;
  let response: Response;
  try {
    response = await ctx.fetch(url, {
      method: opts.method ?? 'GET',
      headers: { accept: 'application/json', ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...ctx.headers, ...opts.headers },
      body: opts.body,
      signal: opts.signal,
    });
  } catch (cause) {
    throw new GatewayRequestError(url, `Could not reach the gateway at ${ctx.baseUrl}.`, { cause });
  }
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    throw new GatewayRequestError(url, `The gateway's answer to ${path} could not be read.`, { cause, status: response.status });
  }
  return { response, text };
}

/** The JSON body of an answer; throws {@link GatewayRequestError} when it is not JSON. */
export function jsonOf<T>(ctx: HttpContext, path: string, r: GatewayResponse): T {
  const body = parseJson(r.text);
  if (body === undefined) {
    throw new GatewayRequestError(`${ctx.baseUrl}${path}`, `The gateway answered ${path} with HTTP ${r.response.status} but no JSON body.`, {
      status: r.response.status,
    });
  }
  return body as T;
}

/** A random `Idempotency-Key` header (or the given key) when the context sends them. */
export function idempotencyHeader(ctx: HttpContext, key: string | undefined): Record<string, string> {
  const k = key ?? (ctx.idempotency ? globalThis.crypto.randomUUID() : undefined);
  return k ? { 'idempotency-key': k } : {};
}
