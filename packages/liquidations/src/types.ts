import type { ChainName, LendingProtocol, LiquidationOpportunity } from '@acg/schemas';
import type { Address, Hex, PublicClient } from 'viem';
import type { AaveCloseFactorRules } from './math/aave.js';

/** Chains the search covers (docs/decisions.md "Liquidation search"; schema `ChainName`). */
export type LiquidationChain = ChainName;

/** Health factor at or below which a position is returned by queries (the query's max, docs/decisions.md). */
export const MAX_QUERY_HEALTH_FACTOR = 1.1;

/** One protocol deployment the indexer follows. `startBlock`: first block whose events are read. */
export type ProtocolDeployment =
  | {
      protocol: 'aave_v3' | 'spark';
      /** The Pool (proxy) address. */
      pool: Address;
      startBlock: bigint;
      /**
       * Close-factor rules of the deployed Pool code: `v3.3` (Aave v3.3+, the default for
       * `aave_v3`) or `v3.0` (SparkLend and aave-v3-core 3.0.x, the default for `spark`).
       */
      closeFactorRules?: AaveCloseFactorRules;
    }
  | { protocol: 'compound_v3'; comet: Address; startBlock: bigint }
  | {
      protocol: 'morpho_blue';
      morpho: Address;
      startBlock: bigint;
      /** Only these market ids (default: every market created since `startBlock`). */
      markets?: Hex[];
    };

/** A position the indexer tracks: one borrower in one deployment (and market for Morpho). */
export interface PositionRef {
  /** Stable id, e.g. `aave_v3:0xPool:0xBorrower` or `morpho_blue:0xMorpho:0xId:0xBorrower` (lowercase). */
  key: string;
  borrower: Address;
  /** Morpho Blue market id. */
  marketId?: Hex;
}

/** What a block's logs said about one deployment. */
export interface LogScan {
  /** Borrowers seen borrowing or supplying collateral (tracked from now on). */
  discovered: PositionRef[];
  /** Positions changed by an event (repay, withdraw, liquidation...): refreshed this block. */
  touched: PositionRef[];
}

/** USD prices by lowercase token address (USD per whole token), filled per block. */
export type PriceBook = Map<string, number>;

/** Context of one refresh: the block, its timestamp, and the price book. */
export interface BlockContext {
  client: PublicClient;
  blockNumber: bigint;
  timestamp: bigint;
  prices: PriceBook;
  /** Multicall chunk size, bytes of calldata (viem `batchSize`). */
  batchSize: number;
}

/**
 * One position as evaluated by its adapter at a block: the exact health factor, totals, the best
 * (collateral, debt) pair to liquidate and its gross profit before gas.
 */
export interface EvaluatedPosition {
  ref: PositionRef;
  protocol: LendingProtocol;
  /** Contract a liquidator calls (Pool, Comet, Morpho). */
  market: Address;
  /** Unitless; +Infinity when there is no debt. */
  health_factor: number;
  /** Exact liquidatable flag from the protocol's integer rule (health_factor < 1 agrees). */
  liquidatable: boolean;
  /** False when the position has no debt any more (stop tracking it as a borrower). */
  has_debt: boolean;
  collateral_usd: number;
  debt_usd: number;
  collateral_token: Address;
  collateral_symbol: string;
  debt_token: Address;
  debt_symbol: string;
  /** Debt repaid (or base paid, for Comet) by the best liquidation, debt token base units; 0 when none. */
  max_repay_amount: bigint;
  max_repay_usd: number;
  /** Liquidator's gain before gas, USD: bonus on the repaid debt net of protocol fees (Comet: store-front discount). */
  gross_profit_usd: number;
  /** Gas one liquidation takes (units). */
  gas_units: number;
}

/**
 * A protocol adapter (one module per protocol, same interface). `prepare` reads the deployment's
 * market state (reserves, prices, markets) once per block and returns a fingerprint of everything
 * that moves health factors without an event on the protocol (prices, indices): when it changes,
 * the indexer refreshes every tracked position of the deployment.
 */
export interface ProtocolAdapter {
  readonly protocol: LendingProtocol;
  /** `<protocol>:<address>` (lowercase). */
  readonly id: string;
  readonly startBlock: bigint;
  /** Reads the deployment's events in [fromBlock, toBlock]. */
  scanLogs(client: PublicClient, fromBlock: bigint, toBlock: bigint): Promise<LogScan>;
  /** Reads market state at the context block, adds USD prices to `ctx.prices`, returns a price fingerprint. */
  prepare(ctx: BlockContext): Promise<string>;
  /** Reads and evaluates `refs` at the context block (after `prepare`). */
  evaluate(ctx: BlockContext, refs: PositionRef[]): Promise<EvaluatedPosition[]>;
}

/** An opportunity as stored in the index and returned by the query. */
export type StoredOpportunity = LiquidationOpportunity;
