export {
  paymentsToTreasury,
  readChainReconciliationReport,
  reconcileBlocks,
  reconciledOperationId,
  reconcilePayment,
  reconcileUptoRecords,
  runChainReconciliation,
  uptoSettlementsToTreasury,
  type ChainPayment,
} from './chainReconciliation.js';
export {
  DEFAULT_RECONCILE_CONFIRMATIONS,
  type ChainReconciliationOptions,
  type ChainReconciliationReport,
  type ChainReconciliationRun,
  type ReconciliationCounts,
  type ReconciliationOutcome,
} from './chainReconciliationOptions.js';
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
export {
  reconcileChannelClaim,
  reconcileChannels,
  reconcileChannelSettlement,
  type ChainChannelClaim,
  type ChainChannelSettlement,
} from './channelReconciliation.js';
