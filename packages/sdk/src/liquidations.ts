import type { LocalAccount } from 'viem';
import { createGatewayContext } from './context.js';
import { searchLiquidations } from './actions/searchLiquidations.js';
import type { SpendLedger } from './spend.js';
import type { LiquidationSearchParams, LiquidationSearchResult } from './types.js';

export { liquidationSearchQuery } from './actions/searchLiquidations.js';
export type { LendingProtocol, LiquidationOpportunity, LiquidationSearchParams, LiquidationSearchResult } from './types.js';

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
  };
}
