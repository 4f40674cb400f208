export { createInProcessFacilitator, createRemoteFacilitator, type InProcessFacilitatorOptions } from './facilitator.js';
export { PaymentChainUnavailableError, PaymentConflictError, PaymentError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
export { authorizationWindowProblem, DEFAULT_CLOCK_SKEW_SECONDS } from './authorizationWindow.js';
export { chainFailedDuring, DEFAULT_PAYMENT_RPC_TIMEOUT_MS, isTransportError, PaymentChainMonitor, type PaymentChainSnapshot } from './chainHealth.js';
export { canonicalHash, requestHash } from './hashing.js';
export { REQUIREMENTS_CACHE_MAX } from './challenge.js';
export { eip3009Authorization, parsePaymentPayload, readPaymentPayload, PAYMENT_HEADERS, type Eip3009Authorization } from './paymentHeader.js';
export { settlementInPool } from './reconcile.js';
export { PAYMENT_IDENTIFIER, PAYMENT_IDENTIFIER_DECLARATION, readPaymentIdentifier } from './paymentIdentifier.js';
export {
  Paywall,
  PaymentVerificationUnavailableError,
  type Decision,
  type Outcome,
  type PaidAnswer,
  type PaidRequest,
  type Refused,
  type SettlementPlan,
  type ChallengedResource,
  type PaidResponse,
  type PaymentChallengeBody,
  type PaymentTerms,
  type PaywallOptions,
  type Settled,
  type SettledPayment,
} from './paywall.js';
export { describePaymentFailure } from './sanitize.js';
export { ExactScheme } from './schemes/exact.js';
export { UptoScheme, uptoScheme, uptoPermit2Authorization, permit2NonceHex, type UptoPermit2Authorization } from './schemes/upto.js';
export { payloadAuthorization } from './schemes/authorizationOf.js';
export {
  BATCH_SETTLEMENT,
  BatchSettlementReasons,
  BatchSettlementScheme,
  batchSettlementScheme,
  channelVoucher,
  DEFAULT_VOUCHER_TIMEOUT_SECONDS,
  DEFAULT_WITHDRAW_DELAY_SECONDS,
  DEFAULT_WITHDRAWAL_MARGIN_SECONDS,
  type BatchSettlementSchemeOptions,
} from './schemes/batchSettlement.js';
export type {
  AuthorizeResult,
  PaymentScheme,
  PaymentSchemeFactory,
  SchemeAuthorization,
  SchemeContext,
  SettledOnChain,
} from './schemes/strategy.js';
export type { PaymentObserver } from './observer.js';
export { OFFER_VALIDITY_SECONDS, OfferReceipts } from './offerReceipt.js';
