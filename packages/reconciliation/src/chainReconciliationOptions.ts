import type { TreasurySender } from '@acg/treasury';
import type { Logger } from 'pino';
import type { PaymentRecoveryOptions } from './recovery.js';

// The chain reconciliation's options and outcome types, apart from its code so that the channel
// reconciliation (channelReconciliation.ts), which the chain reconciliation runs, can name them
// without an import circle.

/** How one payment found on chain compared with the records (docs/decisions.md "Reconciliation from the chain"). */
export type ReconciliationOutcome = 'matched' | 'repaired' | 'deferred' | 'undecided';

/** Counts of one reconciliation run, or cumulated in the stored report. */
export type ReconciliationCounts = Record<ReconciliationOutcome, number>;

/** The stored report (`GET /metrics` `acg_chain_reconciliation_*`, the `/status` page). */
export interface ChainReconciliationReport extends ReconciliationCounts {
  /** the last block whose payments were checked by the scheduled run (the cursor) */
  cursor_block: number | null;
  /** when the scheduled run last finished, RFC 3339 UTC */
  last_run_at: string | null;
}

/** What one scheduled run did: its counts, and the cursor after it (null before any block was checked). */
export type ChainReconciliationRun = ReconciliationCounts & { cursor_block: number | null };

/** Default depth below the head at which a block counts as confirmed (blocks; Base: about 24 s). */
export const DEFAULT_RECONCILE_CONFIRMATIONS = 12;

export interface ChainReconciliationOptions extends PaymentRecoveryOptions {
  /** CAIP-2 network of the payment chain, e.g. `eip155:8453` (the reservation keys' network) */
  network: `${string}:${string}`;
  /** the USDC contract */
  asset: `0x${string}`;
  /** the treasury (PAY_TO_ADDRESS): payments in, refunds out */
  treasury: `0x${string}`;
  /** blocks below the head that count as confirmed (default {@link DEFAULT_RECONCILE_CONFIRMATIONS}) */
  confirmations?: number;
  /** how long reservations are kept, seconds (default 7 days, the paywall's): an older payment without one is undecided, never refunded */
  retentionSeconds?: number;
  /** blocks per `eth_getLogs` request (default 2 000); the cursor moves after each */
  chunkBlocks?: number;
  /** where a run without a cursor starts: this many blocks below the confirmed block (default 0: at it) */
  lookbackBlocks?: number;
  /**
   * The provider credit of a finished operation: `matched` when present (or none is due),
   * `repaired` when it was missing and was restored from the execution record, `undecided` when
   * it cannot be restored. Without it, credits are not checked.
   */
  restoreCredit?(operationId: string): Promise<'matched' | 'repaired' | 'undecided'>;
  /** Re-sends a refund recorded `sent` whose transaction is not on chain; without it such a refund is undecided. */
  sender?: Pick<TreasurySender, 'transferOnce'>;
  /**
   * The payment an operation's execution record names (`payment.amount`, `payment.tx_hash`), or undefined
   * without one: an `upto` settlement's record must name this settlement and its amount. Without it,
   * execution records are not compared (their absence is `restoreCredit`'s to report).
   */
  executionPayment?(operationId: string): Promise<{ amount: string; tx_hash?: string } | undefined>;
  /** the x402 `upto` proxy whose settlements are read (default the canonical `x402UptoPermit2ProxyAddress` of `@x402/evm`) */
  uptoProxy?: `0x${string}`;
  /** the x402 `batch-settlement` contract whose claims and settlements are read (default `BATCH_SETTLEMENT_ADDRESS` of `@x402/evm`) */
  batchSettlement?: `0x${string}`;
  log: Logger;
}
