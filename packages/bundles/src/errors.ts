/**
 * JSON-RPC error codes of the builder (docs/decisions.md "Errors"; EIP-1474 for -32005).
 * `message` is human-readable; `data` holds details (e.g. the bad field). Never a stack trace or
 * an upstream error string verbatim.
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

/** The body of a JSON-RPC 2.0 error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** A JSON-RPC error a method or the HTTP route answers with; `shortMessage` is the message sent. */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: RpcErrorCode,
    readonly shortMessage: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(shortMessage);
  }
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.shortMessage } : { code: this.code, message: this.shortMessage, data: this.data };
  }
}

/**
 * -32602 naming the bad field, e.g. `invalidParams('txs[2]', 'not a signed transaction (bad RLP)')`
 * → message `Invalid params: txs[2]: not a signed transaction (bad RLP)`, data `{field, reason}`.
 */
export function invalidParams(field: string, reason: string, extra: Record<string, unknown> = {}): RpcError {
  return new RpcError(RPC_ERRORS.INVALID_PARAMS, `Invalid params: ${field}: ${reason}`, { field, reason, ...extra });
}
