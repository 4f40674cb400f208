export {
  AUTHORIZATION_STATE_ABI,
  AUTHORIZATION_USED,
  authorizationTx,
  authorizationUsed,
  PERMIT2,
  PERMIT2_NONCE_BITMAP_ABI,
  permit2NonceUsed,
  type Eip3009Authorization,
} from './authorization.js';
export {
  ChainSender,
  REPLACEMENT_FEE_BUMP_PERCENT,
  receiptOf,
  TransactionNotMinedError,
  type ChainSenderOptions,
  type SentTransaction,
  type TransactionCall,
} from './chainSender.js';
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
  type Permit2Settlement,
  type ChannelDepositSettlement,
  type TrackedSettlement,
  type TrackedTransfer,
  type TrackedTreasuryTransfer,
  type TransferFinalityOptions,
} from './finality.js';
export { treasuryKeys } from './commands/keys.js';
export type { RefundObserver } from './observer.js';
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
} from './refunds.js';
export { readRefundTag, refundsOnChain, refundTransferData, type RefundOnChain, type RefundTag } from './refundTag.js';
export { startRefundsFromConfig, type RefundsFromConfigOptions } from './refundsFromConfig.js';
export { reversalsByPrefix, type CreditReversal } from './reversals.js';
export { SerialQueue } from './serialQueue.js';
export { conflictAnswer, type StoredResponse } from './storedAnswer.js';
export { storedTransferRecord } from './transferRecord.js';
export {
  bumpedFees,
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
