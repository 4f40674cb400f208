/**
 * The builder's failures and their one mapping to JSON-RPC (docs/architecture.md "Errors"; apps/builder
 * README "Errors"): `RpcError` is a `ProblemError` (@acg/schemas) made where the failure is known
 * (`invalidParams`, `invalidRequest`, `parseError`, `limitExceeded`, `internalError`), and
 * `jsonRpcErrorOf` turns a `ProblemError` into a JSON-RPC error object at the edge (the jayson
 * methods' wrapper in `server.ts` and the HTTP route). They live in @acg/bundles, whose bundle
 * validation throws them; re-exported here for the RPC host's modules.
 */
export {
  RPC_ERRORS,
  RpcError,
  internalError,
  invalidParams,
  invalidRequest,
  jsonRpcErrorOf,
  limitExceeded,
  parseError,
  type JsonRpcErrorObject,
  type RpcErrorCode,
} from '@acg/bundles';
