/**
 * The builder's JSON-RPC error codes and `RpcError` (docs/decisions.md "Errors"; EIP-1474 for -32005) live in
 * @acg/bundles, whose bundle validation throws them; re-exported here for the RPC host's modules.
 */
export { RPC_ERRORS, RpcError, invalidParams, type JsonRpcErrorObject, type RpcErrorCode } from '@acg/bundles';
