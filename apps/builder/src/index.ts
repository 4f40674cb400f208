/**
 * @acg/builder: the bundle-submission host ({builder_url}, docs/spec-notes.md 4): jayson JSON-RPC `eth_sendBundle`,
 * `eth_cancelBundle`, `eth_callBundle` on `/rpc`, the orderflow pool in Redis, the bidder and the
 * MEV-Boost relay submitter, live health counters, and the local relays of the embedded defaults.
 */
export { startBuilder, type RunningBuilder, type StartBuilderOptions } from './app.js';
export {
  Bidder,
  DEFAULT_EXTRA_DATA,
  type AttemptResult,
  type Bid,
  type BidderOptions,
  type BidRefund,
  type BuilderSigner,
  type SealerState,
  type SkippedBundle,
} from './bidder.js';
export { blockHash, headerRlpFields, type ExecutionHeader } from './block/header.js';
export { devParentBeaconBlockRoot, devPayloadAttributes, type PayloadAttributes } from './block/payloadAttributes.js';
export { requestsHash, type ExecutionRequestsData } from './block/requests.js';
export { checkSealer, SealError, sealBlock, type SealedBlock, type SealerStatus, type SealParams } from './block/seal.js';
export { planRefund, proposerPayment, type PlannedRefund } from './payment.js';
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
export {
  DEV_PROPOSER_FEE_RECIPIENT,
  DEV_PROPOSER_PUBKEY,
  DEV_PROPOSER_SECRET_KEY,
  startDevRelay,
  startDevRelays,
  type DevRelay,
  type DevRelayOptions,
  type DevRelays,
  type ReceivedSubmission,
} from './relay/devRelay.js';
export { ValidatorRegistrations, VALIDATORS_PATH, type ProposerDuty, type SlotProposer } from './relay/registrations.js';
export {
  bidTraceSigningRoot,
  BidTraceType,
  blsPublicKey,
  computeBuilderDomain,
  DOMAIN_APPLICATION_BUILDER,
  ETH_BLS_DST,
  randomBlsSecretKey,
  signBidTrace,
  signValidatorRegistration,
  verifyBidTrace,
  verifyValidatorRegistration,
  type BidTraceJson,
  type ValidatorRegistrationJson,
} from './relay/signing.js';
export { RelaySubmitter, SUBMISSION_ENCODINGS, SUBMIT_BLOCK_PATH, type RelaySubmission, type SubmissionEncoding } from './relay/submitter.js';
export type { ExecutionPayloadJson, ExecutionRequestsJson, SubmitBlockRequest, ValidatorRegistrationEntry } from './relay/types.js';
export { decodeSubmitBlockRequest, encodeSubmitBlockRequestSsz, SubmitBlockRequestElectra, verifyPayloadBlockHash } from './relay/wire.js';
export { RPC_ERRORS, RpcError, invalidParams, jsonRpcErrorOf, type JsonRpcErrorObject } from '@acg/bundles';
export { RPC_METHODS } from './rpc/server.js';
export { simulateBlock, type BlockSimulation, type SimTx, type SimulatedTx } from './simulate.js';
export { bundleSignatureMessage, SIGNATURE_HEADERS, verifyBundleSignature } from './signature.js';
