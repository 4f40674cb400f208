import type jayson from 'jayson';
import type { Logger } from 'pino';
import type { RpcContext } from '../rpc/context.js';
import type { ProblemError } from '@acg/schemas';
import { internalError, invalidRequest, jsonRpcErrorOf, type JsonRpcErrorObject } from '../rpc/errors.js';

/** A JSON-RPC 2.0 id as this route answers it. */
export type JsonRpcId = string | number | null;

/** One JSON-RPC 2.0 response object. */
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

/**
 * A response object carrying the JSON-RPC error of `problem` (id null unless given): the route's
 * own failures go through the same `jsonRpcErrorOf` as the methods' (docs/architecture.md "Errors").
 */
export const errorResponse = (problem: ProblemError, id: JsonRpcId = null): JsonRpcResponse => ({ jsonrpc: '2.0', id, error: jsonRpcErrorOf(problem) });

/**
 * Deepest array/object nesting accepted in a body (a batch of `eth_sendBundle` calls needs 4).
 * Deeper bodies are refused with -32600 before anything walks them.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Deepest `[`/`{` nesting of a JSON text, read in one pass without recursion (brackets inside
 * strings are skipped). Stops counting once `limit` is passed and returns `limit + 1`.
 */
export function jsonNestingDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return max;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The JSON-RPC 2.0 "Invalid Request" answer for a body or batch element that is not a request
 * object (a number, string, boolean, null or array): -32600 with id null.
 */
const notARequest = (): JsonRpcResponse =>
  errorResponse(invalidRequest('Invalid Request: a JSON-RPC 2.0 request is an object {jsonrpc: "2.0", method, params?, id?}.'));

/**
 * Runs one parsed request object through jayson and resolves with its response, or `undefined`
 * for a notification (a valid request without `id`).
 *
 * Only plain objects reach jayson: given a string it would parse it as JSON a second time, and
 * given an array it would dispatch it as a batch. `"id": null` is a call answered with id null
 * (JSON-RPC 2.0 §4), while jayson takes it for a notification: such a request is sent with id 0
 * and its answer gets id null back.
 */
function callOne(server: jayson.Server, request: unknown, context: RpcContext, log: Logger): Promise<JsonRpcResponse | undefined> {
  if (!isPlainObject(request)) return Promise.resolve(notARequest());
  const nullId = 'id' in request && request.id === null;
  return new Promise((resolve) => {
    try {
      server.call((nullId ? { ...request, id: 0 } : request) as never, context, (err: unknown, response: unknown) => {
        const out = (err ?? response) as JsonRpcResponse | undefined | null;
        if (out === undefined || out === null) return resolve(undefined);
        resolve(nullId ? { ...out, id: null } : out);
      });
    } catch (e) {
      log.error({ err: e }, 'JSON-RPC dispatch failed');
      resolve(
        errorResponse(internalError('Internal error; it was logged.'), typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null),
      );
    }
  });
}

/**
 * Dispatches a parsed JSON-RPC 2.0 body (JSON-RPC 2.0 §5, §6) and resolves with what to send:
 * - a request object → its response, or `undefined` for a notification;
 * - anything else that is not an array (number, string, boolean, null) → one -32600 error;
 * - `[]` → one -32600 error (not an array);
 * - a batch → one response per element that is not a notification, in element order; an element
 *   that is not a request object (a number, an array, ...) gets -32600 with id null; `undefined`
 *   when every element is a notification.
 *
 * The route does the batch itself instead of jayson's `Server#call` on the array: jayson 5 skips
 * array elements of a batch without answering them, so `[[]]` never completes its callback.
 * Elements run concurrently, as jayson runs them.
 */
export async function dispatchJsonRpc(
  server: jayson.Server,
  body: unknown,
  context: RpcContext,
  log: Logger,
): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
  if (!Array.isArray(body)) return callOne(server, body, context, log);
  if (body.length === 0) return errorResponse(invalidRequest('Invalid Request: an empty batch.'));
  const responses = await Promise.all(body.map((element) => callOne(server, element, context, log)));
  const answered = responses.filter((r): r is JsonRpcResponse => r !== undefined);
  return answered.length > 0 ? answered : undefined;
}
