import type { ProblemError } from '@acg/schemas';

/**
 * JSON-RPC error codes of the builder (docs/decisions.md "Errors"): JSON-RPC 2.0's standard codes
 * and EIP-1474's -32005 (limit exceeded, in the -32000..-32099 server-error range).
 */
export const RPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  LIMIT_EXCEEDED: -32005,
} as const;

export type RpcErrorCode = (typeof RPC_ERRORS)[keyof typeof RPC_ERRORS];

/** The body of a JSON-RPC 2.0 error object: `code`, `message` (a sentence for people), optional `data` (details). */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * RFC 9457 problem `type`s of the failures a JSON-RPC answer tells apart and HTTP statuses do not
 * (a body that is not JSON and a bad param are both 400). A problem with another `type` is mapped
 * by its status ({@link jsonRpcCodeOf}).
 */
export const RPC_PROBLEM_TYPES = {
  parseError: 'urn:acg:problem:json-rpc:parse-error',
  invalidRequest: 'urn:acg:problem:json-rpc:invalid-request',
  methodNotFound: 'urn:acg:problem:json-rpc:method-not-found',
  invalidParams: 'urn:acg:problem:json-rpc:invalid-params',
  limitExceeded: 'urn:acg:problem:json-rpc:limit-exceeded',
  internal: 'urn:acg:problem:json-rpc:internal-error',
} as const;

const CODE_OF_TYPE: Record<string, RpcErrorCode> = {
  [RPC_PROBLEM_TYPES.parseError]: RPC_ERRORS.PARSE_ERROR,
  [RPC_PROBLEM_TYPES.invalidRequest]: RPC_ERRORS.INVALID_REQUEST,
  [RPC_PROBLEM_TYPES.methodNotFound]: RPC_ERRORS.METHOD_NOT_FOUND,
  [RPC_PROBLEM_TYPES.invalidParams]: RPC_ERRORS.INVALID_PARAMS,
  [RPC_PROBLEM_TYPES.limitExceeded]: RPC_ERRORS.LIMIT_EXCEEDED,
  [RPC_PROBLEM_TYPES.internal]: RPC_ERRORS.INTERNAL_ERROR,
};

/**
 * The JSON-RPC code of a problem: its `type` when it is one of {@link RPC_PROBLEM_TYPES}, else by
 * HTTP status: 429 → -32005 (limit exceeded), 400 and 422 → -32602 (invalid params), 404 → -32601
 * (method not found), any other 4xx → -32600 (invalid request), 5xx → -32603 (internal).
 */
export function jsonRpcCodeOf(problem: ProblemError): RpcErrorCode {
  const byType = CODE_OF_TYPE[String(problem.body.type)];
  if (byType !== undefined) return byType;
  const { status } = problem;
  if (status === 429) return RPC_ERRORS.LIMIT_EXCEEDED;
  if (status === 400 || status === 422) return RPC_ERRORS.INVALID_PARAMS;
  if (status === 404) return RPC_ERRORS.METHOD_NOT_FOUND;
  if (status >= 400 && status < 500) return RPC_ERRORS.INVALID_REQUEST;
  return RPC_ERRORS.INTERNAL_ERROR;
}

/**
 * The one mapping of a {@link ProblemError} to a JSON-RPC error object (docs/architecture.md
 * "Errors"; apps/builder README "Errors"): `code` from {@link jsonRpcCodeOf}, `message` the
 * problem's `detail`, `data` its extension members (every member but `type`, `title`, `status`,
 * `detail` and `instance`; absent when there are none). Called once, at the builder's JSON-RPC edge.
 */
export function jsonRpcErrorOf(problem: ProblemError): JsonRpcErrorObject {
  const { type: _type, title: _title, status: _status, detail: _detail, instance: _instance, ...data } = problem.body;
  const code = jsonRpcCodeOf(problem);
  return Object.keys(data).length === 0 ? { code, message: problem.message } : { code, message: problem.message, data };
}
