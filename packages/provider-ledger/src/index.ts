/**
 * @acg/provider-ledger: the provider money side (docs/decisions.md "Providers": money and disputes): the
 * ledger of provider shares (held → available → paid), the gateway's fee, disputes, and the
 * payout pass that sends available balances from the treasury exactly once.
 */
export {
  ProviderLedger,
  splitPrice,
  type LedgerEntry,
  type LedgerEntryStatus,
  type LedgerTotals,
  type PayoutRecord,
  type PayoutStatus,
  type ProviderCredit,
  type ProviderLedgerOptions,
  type ProviderTotals,
  type StoredDispute,
} from './ledger.js';
export { DisputeError, type DisputeErrorReason } from './errors.js';
export {
  PAYOUT_PASS_LEASE_MS,
  runPayoutPass,
  startPayouts,
  type PayoutDone,
  type PayoutHooks,
  type PayoutPassOptions,
  type PayoutPassReport,
  type RunningPayouts,
  type StartPayoutsOptions,
} from './payouts.js';
export {
  PAYOUT_CHAIN_LOOKBACK_BLOCKS,
  payoutTagOf,
  payoutTransferData,
  reconcilePayoutsWithChain,
  type PayoutChainOptions,
  type PayoutChainReport,
} from './payoutChain.js';
export { paymentReversals, type DepositAccounts } from './reversal.js';
export { createRefundsAndLedger, type RefundsAndLedgerOptions } from './refundsAndLedger.js';
