/**
 * `agent-capability-gateway-sdk` (npm; the workspace packages/sdk): JavaScript client of the agent capability gateway. It discovers capabilities from
 * `GET /registry` and runs them with `execute(capability_id, input)`, paying x402 challenges
 * (USDC on Base, `eip155:8453`) with a viem account within the spend limits the caller sets.
 *
 * Units: `price` strings are decimal USDC (`"0.001"`); `amount`, `price_base_units` and every
 * bigint are integer USDC base units (6 decimals: `1000n` = 0.001 USDC).
 */
export { createGatewayClient } from './client.js';
export type { ExecuteOptions, GatewayClient, GatewayClientOptions, RegistryReadOptions, WaitJobOptions } from './client.js';
export {
  AcgError,
  GatewayError,
  GatewayRequestError,
  InvalidAmountError,
  PaymentRequiredError,
  PaymentTermsMismatchError,
  SDK_VERSION,
  SpendLimitExceededError,
  UnknownCapabilityError,
} from './errors.js';
export type { AcgErrorOptions } from './errors.js';
export { PAYMENT_NETWORK, advertisedPrice, parseProblem, readPaymentRequired, selectRequirement } from './protocol.js';
export { SpendLedger } from './spend.js';
export { ProofVerificationError, verifyExecutionProof, type ExecutionProofPayload, type VerifyExecutionProofParameters } from './verifyProof.js';
export { KNOWN_USDC, createGatewayContext, type GatewayContext, type GatewayContextOptions } from './context.js';
export { request, jsonOf, type GatewayResponse, type RequestOptions } from './http.js';
export { RegistryCache, fetchRegistry } from './registryCache.js';
export {
  DEFAULT_SCHEMES,
  PAYMENT_SCHEMES,
  chooseRequirement,
  registryTerms,
  type PaymentScheme,
  type ChooseRequirementErrorType,
  type ChooseRequirementParameters,
  type ChooseRequirementReturnType,
  type PaymentTerms,
} from './chooseRequirement.js';
export {
  payAndRetry,
  signPaymentPayload,
  type PaymentMade,
  type PayAndRetryErrorType,
  type PayAndRetryParameters,
  type PayAndRetryReturnType,
} from './payAndRetry.js';
export type { SpendLimits, SpendReservation } from './spend.js';
export { USDC_DECIMALS, formatUsdc, parseBaseUnits, parseUsdc } from './units.js';
export type {
  AccountView,
  DepositResponse,
  Availability,
  Capability,
  CapabilityAuth,
  CapabilityStatus,
  Execution,
  ExecutionPayment,
  ExecutionRecord,
  JobCreated,
  JobRecord,
  JobRequest,
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  ProblemDetails,
  ProblemIssue,
  RefundInfo,
  Registry,
  RegistryX402Terms,
  PaymentChallenge,
  ProviderChallenge,
  ProviderOffer,
  ProviderRegistered,
  SettleResponse,
  SpendTotals,
} from './types.js';
export {
  BundleRpcError,
  bundleSignatureHeader,
  bundleSignatureMessage,
  callBundle,
  cancelBundle,
  computeBundleHash,
  createBuilderClient,
  getBundleStats,
  mevSendBundle,
  sendBundle,
  type BuilderClient,
  type BuilderTimestamp,
  type BundleStats,
  type BundleTransportOptions,
  type MevSendBundleParameters,
  type MevShareBodyTx,
  type MevShareBundle,
  type MevShareHint,
  type SendBundleOptions,
  type SendBundleParameters,
  type SendBundleReturnType,
} from './builder.js';
export {
  PLAN_CHAIN_IDS,
  sendPlanBundle,
  signPlanTransactions,
  type PlanSigner,
  type SendPlanOptions,
  type SignPlanOptions,
} from './bundles.js';
export {
  createLiquidationsClient,
  liquidationSearchQuery,
  type LiquidationPlan,
  type LiquidationPlanOpportunity,
  type LiquidationPlanRefusalReason,
  type LiquidationPlanRequest,
  type PlannedTransaction,
  type PlanOptions,
  type LendingProtocol,
  type LiquidationOpportunity,
  type LiquidationsClient,
  type LiquidationsClientOptions,
  type LiquidationSearchParams,
  type LiquidationSearchResult,
} from './liquidations.js';
export { createAuthClient, type AuthClient, type AuthClientOptions, type BearerToken } from './auth.js';
export {
  createWalletMonitorClient,
  type DeadLetter,
  type DeliveryAttempt,
  type TestEventQueued,
  type SubscribeRequest,
  type Subscription,
  type SubscriptionCreated,
  type WalletEvent,
  type WalletEventType,
  type WalletMonitorChain,
  type WalletMonitorClient,
  type WalletMonitorClientOptions,
} from './walletMonitor.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders } from './webhooks.js';
export * from './actions/index.js';
