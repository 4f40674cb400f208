/**
 * @acg/builder: the bundle-submission host ({builder_url}, SPEC 4): jayson JSON-RPC `eth_sendBundle`,
 * `eth_cancelBundle`, `eth_callBundle` on `/rpc`, the orderflow pool in Redis, the bidder and the
 * MEV-Boost relay submitter, live health counters, and the local relays of the embedded defaults.
 */
export { DEV_PROPOSER_PUBKEY, startBuilder, type RunningBuilder, type StartBuilderOptions } from './app.js';
export { Bidder, type AttemptResult, type Bid, type BidderOptions, type BuilderSigner, type SkippedBundle } from './bidder.js';
export {
  bundleHash,
  decodeBundleTx,
  MAX_BLOCKS_AHEAD,
  MAX_BUNDLE_BYTES,
  MAX_BUNDLE_TXS,
  validateSendBundleParams,
  type BundleTx,
  type ValidBundleParams,
} from '@acg/bundles';
export {
  builderConfigFromEnv,
  BuilderConfigError,
  DEV_FEE_RECIPIENT,
  DEV_RELAY_NAMES,
  parseRelayUrls,
  PRODUCTION_RELAYS,
  type BuilderConfig,
  type BuilderConfigDefaults,
  type RelayTarget,
} from './config.js';
export { BuilderStats, readBuilderHealth, readSearcherCharges, type SearcherCharges } from '@acg/bundles';
export { BundleIntake, bundleIntakeFor, type BundleIntakeOptions, type SubmitBundleResult } from '@acg/bundles';
export { OrderflowPool, POOL_TTL_SECONDS, type BundleVia, type MempoolTx, type StoredBundle } from '@acg/bundles';
export { TokenBucket, type TakeResult } from './ratelimit.js';
export { startDevRelay, startDevRelays, type DevRelay, type DevRelays, type ReceivedSubmission } from './relay/devRelay.js';
export {
  bidTraceSigningRoot,
  BidTraceType,
  blsPublicKey,
  computeBuilderDomain,
  DOMAIN_APPLICATION_BUILDER,
  ETH_BLS_DST,
  randomBlsSecretKey,
  signBidTrace,
  verifyBidTrace,
  type BidTraceJson,
} from './relay/signing.js';
export { RelaySubmitter, SUBMIT_BLOCK_PATH, type RelaySubmission } from './relay/submitter.js';
export type { ExecutionPayloadJson, SubmitBlockRequest } from './relay/types.js';
export { RPC_ERRORS, RpcError, invalidParams, type JsonRpcErrorObject } from '@acg/bundles';
export { RPC_METHODS } from './rpc/server.js';
export { simulateBlock, type BlockSimulation, type SimTx, type SimulatedTx } from './simulate.js';
export { bundleSignatureMessage, SIGNATURE_HEADERS, verifyBundleSignature } from './signature.js';
