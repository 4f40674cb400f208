export { createInProcessFacilitator, createRemoteFacilitator, type InProcessFacilitatorOptions } from './facilitator.js';
export { PaymentChainUnavailableError, PaymentConflictError, PaymentError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
export {
  ChainSender,
  REPLACEMENT_FEE_BUMP_PERCENT,
  TransactionNotMinedError,
  type ChainSenderOptions,
  type SentTransaction,
  type TransactionCall,
} from './chainSender.js';
export { authorizationWindowProblem, DEFAULT_CLOCK_SKEW_SECONDS } from './authorizationWindow.js';
export { chainFailedDuring, DEFAULT_PAYMENT_RPC_TIMEOUT_MS, isTransportError, PaymentChainMonitor, type PaymentChainSnapshot } from './chainHealth.js';
export { canonicalHash, requestHash } from './hashing.js';
export { REQUIREMENTS_CACHE_MAX } from './challenge.js';
export { eip3009Authorization, parsePaymentPayload, readPaymentPayload, PAYMENT_HEADERS, type Eip3009Authorization } from './paymentHeader.js';
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
export {
  readRefund,
  refundTransferRecord,
  withRefundState,
  RefundQueue,
  startRefunds,
  startRefundWorker,
  REFUND_QUEUE,
  type RefundRecord,
  type RefundRequest,
  type RefundWorkerOptions,
  type StartRefundsOptions,
  type CreditReversal,
} from './refunds.js';
export { startRefundsFromConfig, type RefundsFromConfigOptions } from './refundsFromConfig.js';
export { reversalsByPrefix } from './reversals.js';
export { describePaymentFailure } from './sanitize.js';
export type { PaymentObserver } from './observer.js';
export {
  DEFAULT_RECONCILE_CONFIRMATIONS,
  paymentsToTreasury,
  readChainReconciliationReport,
  reconcileBlocks,
  reconciledOperationId,
  reconcilePayment,
  runChainReconciliation,
  type ChainPayment,
  type ChainReconciliationOptions,
  type ChainReconciliationReport,
  type ChainReconciliationRun,
  type ReconciliationCounts,
  type ReconciliationOutcome,
} from './chainReconciliation.js';
export {
  CHAIN_RECONCILIATION_QUEUE,
  DEFAULT_RECONCILE_INTERVAL_MS,
  startChainReconciliation,
  type RunningChainReconciliation,
} from './chainReconciliationSchedule.js';
export {
  operationIdFields,
  recoverOrphanedPayments,
  recoverPayment,
  type RecoveryOutcome,
  startPaymentRecovery,
  type PaymentRecoveryOptions,
  type RecoveredAnswer,
  type RecoveryRound,
} from './recovery.js';
export { AUTHORIZATION_STATE_ABI, authorizationUsed } from './eip3009.js';
export {
  settlementState,
  startTransferFinality,
  trackedTransfer,
  trackSettlement,
  trackTreasuryTransfer,
  TransferFinality,
  transferWithAuthorizationData,
  type FinalityRound,
  type FinalityRule,
  type RunningFinality,
  type TrackedKind,
  type TrackedSettlement,
  type TrackedTransfer,
  type TrackedTreasuryTransfer,
  type TransferFinalityOptions,
} from './finality.js';
export { storedTransferRecord } from './transferRecord.js';
export { OFFER_VALIDITY_SECONDS, OfferReceipts } from './offerReceipt.js';
export { SIGN_IN_WITH_X_STATEMENT, SIGN_IN_WITH_X_VALIDITY_SECONDS, SignInWithXChallenges } from './signInWithX.js';
export {
  TransferWouldRevertError,
  TreasuryReadError,
  TreasurySender,
  type SignedTransfer,
  type TransferHooks,
  type TransferOnceParams,
  type TransferOutcome,
  type TransferRecord,
  type TreasurySenderOptions,
} from './treasury.js';
