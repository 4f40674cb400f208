/**
 * @acg/bundles: intake of Ethereum bundles (docs/decisions.md "Bundle submission"): `eth_sendBundle` params
 * validation and decoding, the orderflow pool in Redis, and the intake that stores a bundle for
 * its target block. Shared by the builder's JSON-RPC host (apps/builder) and the
 * `builder.send_bundle` capability (@acg/capabilities), and the builder's live health counters
 * (written by the builder, read by the gateway's health document), so no app imports another.
 */
export {
  bundleHash,
  clearTxSenderCache,
  decodeBundleTx,
  decodeBundleTxSync,
  MAX_BLOCKS_AHEAD,
  TX_SENDER_CACHE_SIZE,
  MAX_BUNDLE_BYTES,
  MAX_BUNDLE_TXS,
  singleParamsObject,
  targetBlock,
  validateSendBundleParams,
  validateBuilderNetFields,
  addressList,
  DESIRED_STATE_BOTTOM_OF_BLOCK,
  MAX_TARGET_ADDRESSES,
  type BundleTx,
  type ValidBundleParams,
} from './bundle.js';
export {
  RPC_ERRORS,
  RPC_PROBLEM_TYPES,
  RpcError,
  internalError,
  invalidParams,
  invalidRequest,
  jsonRpcCodeOf,
  jsonRpcErrorOf,
  limitExceeded,
  parseError,
  type JsonRpcErrorObject,
  type RpcErrorCode,
  type RpcProblemKind,
} from './errors.js';
export { BundleIntake, bundleIntakeFor, type BundleIntakeOptions, type SubmitBundleResult } from './intake.js';
export { OrderflowPool, POOL_TTL_SECONDS, type BundleVia, type Charged, type MempoolTx, type StoredBundle } from './pool.js';
export { MAX_MEV_BLOCK_RANGE, MEV_SHARE_HINTS, MEV_SHARE_VERSION, validateMevSendBundleParams, type ValidMevBundle } from './mevShare.js';
export { BUNDLE_STATS_TTL_SECONDS, BundleStatsStore, type AttemptRecord, type BundleLife, type RelaySent } from './bundleStats.js';
export { BuilderStats, readBuilderHealth, readSearcherCharges, type SearcherCharges } from './health.js';
export { REFUND_CANDIDATE_TTL_SECONDS, RefundLedger, type RefundCandidate, type RefundRecord, type RefundTotals } from './refunds.js';
