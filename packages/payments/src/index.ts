export { createInProcessFacilitator, createRemoteFacilitator, type InProcessFacilitatorOptions } from './facilitator.js';
export { PaymentConflictError, PaymentError, PaymentInProgressError } from './errors.js';
export { canonicalHash, requestHash } from './hashing.js';
export { eip3009Authorization, readPaymentPayload, PAYMENT_HEADERS, type Eip3009Authorization } from './paymentHeader.js';
export {
  Paywall,
  PaymentVerificationUnavailableError,
  type Outcome,
  type PaidRequest,
  type PaidResponse,
  type PaymentChallengeBody,
  type PaymentTerms,
  type PaywallOptions,
  type SettledPayment,
} from './paywall.js';
export { readRefund, RefundQueue, startRefundWorker, REFUND_QUEUE, type RefundRecord, type RefundRequest, type RefundWorkerOptions } from './refunds.js';
export { describePaymentFailure } from './sanitize.js';
export { recoverOrphanedPayments, startPaymentRecovery, type PaymentRecoveryOptions, type RecoveryRound } from './recovery.js';
