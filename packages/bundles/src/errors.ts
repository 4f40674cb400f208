import { ProblemError } from '@acg/schemas';
import { jsonRpcErrorOf, RPC_PROBLEM_TYPES, type RpcErrorCode } from './problemToJsonRpc.js';

export { RPC_ERRORS, RPC_PROBLEM_TYPES, jsonRpcCodeOf, jsonRpcErrorOf, type JsonRpcErrorObject, type RpcErrorCode } from './problemToJsonRpc.js';

/** The kinds of builder failure, each an RFC 9457 problem `type` of {@link RPC_PROBLEM_TYPES}. */
export type RpcProblemKind = keyof typeof RPC_PROBLEM_TYPES;

/**
 * A failure of a bundle or of a JSON-RPC request, as the one problem type of `@acg/schemas`
 * (`ProblemError`, RFC 9457; docs/architecture.md "Errors"): created where the failure is known
 * with its `kind` (a problem `type` of {@link RPC_PROBLEM_TYPES}), HTTP `status`, `detail` (a
 * sentence for people, never upstream text verbatim) and extension members (`field`, `reason`,
 * ...). The builder's JSON-RPC edge maps it once with `jsonRpcErrorOf`; `code` and `data` read
 * that mapping, `shortMessage` is the detail (as `CodedFailure`'s).
 */
export class RpcError extends ProblemError {
  override name = 'RpcError';
  readonly shortMessage: string;
  constructor(kind: RpcProblemKind, status: number, detail: string, members: Record<string, unknown> = {}) {
    super(status, detail, { ...members, type: RPC_PROBLEM_TYPES[kind] });
    this.shortMessage = detail;
  }

  /** The JSON-RPC code the edge answers (`jsonRpcErrorOf`). */
  get code(): RpcErrorCode {
    return jsonRpcErrorOf(this).code as RpcErrorCode;
  }

  /** The JSON-RPC `data`: the problem's extension members. */
  get data(): Record<string, unknown> | undefined {
    return jsonRpcErrorOf(this).data;
  }
}

/**
 * Invalid params (JSON-RPC -32602, HTTP status 400) naming the bad field, e.g.
 * `invalidParams('txs[2]', 'not a signed transaction (bad RLP)')` → detail
 * `Invalid params: txs[2]: not a signed transaction (bad RLP)`, members `{field, reason, ...extra}`.
 */
export function invalidParams(field: string, reason: string, extra: Record<string, unknown> = {}): RpcError {
  return new RpcError('invalidParams', 400, `Invalid params: ${field}: ${reason}`, { field, reason, ...extra });
}

/**
 * Invalid request (JSON-RPC -32600): a request the builder refuses as a whole (a missing or bad
 * signature: status 401; a batch or body over a limit, a body that is not a request: 400 or 413).
 */
export function invalidRequest(detail: string, members: Record<string, unknown> = {}, status = 400): RpcError {
  return new RpcError('invalidRequest', status, detail, members);
}

/** Parse error (JSON-RPC -32700, HTTP status 400): the body is not JSON. */
export function parseError(detail: string): RpcError {
  return new RpcError('parseError', 400, detail);
}

/** Limit exceeded (JSON-RPC -32005, EIP-1474; HTTP status 429): the caller's rate limit. */
export function limitExceeded(detail: string, members: Record<string, unknown> = {}): RpcError {
  return new RpcError('limitExceeded', 429, detail, members);
}

/**
 * Internal error (JSON-RPC -32603): `status` 500 (a bug, logged; the detail says only that), 502
 * (the node refused a call) or 503 (a store briefly unavailable).
 */
export function internalError(detail: string, members: Record<string, unknown> = {}, status = 500): RpcError {
  return new RpcError('internal', status, detail, members);
}
