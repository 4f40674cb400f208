import type { LocalAccount } from 'viem';
import { createGatewayContext } from './context.js';
import { planLiquidation } from './actions/planLiquidation.js';
import { searchLiquidations } from './actions/searchLiquidations.js';
import type { SpendLedger } from './spend.js';
import type {
  LiquidationOpportunity,
  LiquidationPlan,
  LiquidationPlanOpportunity,
  LiquidationSearchParams,
  LiquidationSearchResult,
  WalletMonitorChain,
} from './types.js';

export { liquidationSearchQuery } from './actions/searchLiquidations.js';
export type {
  LendingProtocol,
  LiquidationOpportunity,
  LiquidationPlan,
  LiquidationPlanOpportunity,
  LiquidationPlanRefusalReason,
  LiquidationPlanRequest,
  LiquidationSearchParams,
  LiquidationSearchResult,
  PlannedTransaction,
} from './types.js';

/** Options of `liquidations.plan`: the searcher that will sign (and holds the debt asset), the chain, the price cap. */
export interface PlanOptions {
  /** Address that signs and sends the plan's transactions (default: the client's account). */
  searcher?: string;
  /** Default `ethereum`. */
  chain?: WalletMonitorChain;
  /** Most one plan may cost with x402, USDC base units (default 50000 = 0.05 USDC). */
  maxPriceBaseUnits?: bigint;
  signal?: AbortSignal;
}

/** Options of {@link createLiquidationsClient}. */
export interface LiquidationsClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Bearer access token (SIWE sign-in): queries are debited from the metered account. */
  accessToken?: string;
  /** Or an account that pays each query with x402 (0.02 USDC, EIP-3009 on Base). */
  account?: LocalAccount;
  /** Spend limits shared with the main client (its `SpendLedger`); checked before signing. */
  ledger?: SpendLedger;
  /** Most a single query may cost, USDC base units (default 20000 = 0.02 USDC). */
  maxPriceBaseUnits?: bigint;
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** `client.liquidations`: the liquidation search. */
export interface LiquidationsClient {
  /**
   * `GET /v1/liquidation-search`: opportunities sorted by `estimated_profit_usd` descending.
   * With `accessToken` the price (0.02 USD) is debited from the metered account; otherwise, with
   * an `account`, the 402 challenge is paid with x402 (at most `maxPriceBaseUnits`).
   *
   * Throws {@link GatewayError} (400 bad parameters with `errors`, 401 bad token, 402 account
   * below the price, 503 index not ready), {@link PaymentRequiredError} (402 and no account),
   * {@link PaymentTermsMismatchError} (no requirement it can pay, e.g. above `maxPriceBaseUnits`),
   * {@link SpendLimitExceededError}, {@link GatewayRequestError} (unreachable). See {@link searchLiquidations}.
   *
   * @example
   * const liq = createLiquidationsClient({ baseUrl, accessToken });
   * const { block_number, opportunities } = await liq.search({ min_profit_usd: 100, protocol: ['aave_v3', 'spark'] });
   */
  search(params?: LiquidationSearchParams, opts?: { signal?: AbortSignal }): Promise<LiquidationSearchResult>;
  /**
   * `POST /v1/liquidation-plans` (`mev.liquidation_plan`, 0.05 USD): the unsigned transactions that
   * liquidate `opportunity` (from `search`) at the next block, simulated there (gas, tokens in and
   * out of the searcher in base units, profit in USD after gas). Paid like `search`. A refusal is a
   * {@link GatewayError} 422 with `problem.reason` (`not_liquidatable`, `unknown_position`,
   * `insufficient_balance`: before payment; `would_revert`, `unprofitable`: refunded). See {@link planLiquidation}.
   *
   * @example
   * const plan = await client.liquidations.plan(opportunities[0], { searcher: account.address });
   * await client.bundles.send(plan, account, { ethereumRpcUrl });
   */
  plan(opportunity: LiquidationOpportunity | LiquidationPlanOpportunity, opts?: PlanOptions): Promise<LiquidationPlan>;
}

/**
 * A standalone liquidation-search client (the main client exposes it as `client.liquidations`):
 * {@link searchLiquidations} bound to one gateway. Throws TypeError for a missing `baseUrl`.
 */
export function createLiquidationsClient(options: LiquidationsClientOptions): LiquidationsClient {
  const ctx = createGatewayContext(
    { baseUrl: options?.baseUrl, account: options?.account, ledger: options?.ledger, fetch: options?.fetch, headers: options?.headers },
    'createLiquidationsClient',
  );
  return {
    search: (params = {}, opts = {}) =>
      searchLiquidations(ctx, { ...params, accessToken: options.accessToken, maxPriceBaseUnits: options.maxPriceBaseUnits, signal: opts.signal }),
    plan: (opportunity, opts = {}) => planLiquidation(ctx, { opportunity, ...planParams(opts, options.account?.address), accessToken: options.accessToken }),
  };
}

/** The searcher and payment options of a `plan` call; throws TypeError when no searcher is known. */
export function planParams(opts: PlanOptions, account: string | undefined) {
  const searcher = opts.searcher ?? account;
  if (!searcher) throw new TypeError('liquidations.plan: pass { searcher } (the address that signs the plan), or create the client with an account');
  return { searcher, chain: opts.chain, maxPriceBaseUnits: opts.maxPriceBaseUnits, signal: opts.signal };
}
