import type { GatewayContext } from '../context.js';
import { GatewayRequestError, type GatewayError, type PaymentRequiredError, type PaymentTermsMismatchError, type SpendLimitExceededError } from '../errors.js';
import { request, type GatewayResponse } from '../http.js';
import { parseJson } from '../protocol.js';
import { payAndRetry } from '../payAndRetry.js';
import type { LiquidationSearchParams, LiquidationSearchResult } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link searchLiquidations}: the query (every field optional) plus how to pay. */
export interface SearchLiquidationsParameters extends LiquidationSearchParams {
  /** Bearer token (SIWE sign-in): the price is debited from the metered account; no x402. */
  accessToken?: string;
  /** Most one query may cost with x402, integer USDC base units (default 20000 = 0.02 USDC). */
  maxPriceBaseUnits?: bigint;
  signal?: AbortSignal;
}

/** `{chain, block_number, opportunities}`, opportunities sorted by `estimated_profit_usd` descending. */
export type SearchLiquidationsReturnType = LiquidationSearchResult;

/** Errors of {@link searchLiquidations}. */
export type SearchLiquidationsErrorType = GatewayError | PaymentRequiredError | PaymentTermsMismatchError | SpendLimitExceededError | GatewayRequestError;

/** Capability id of the liquidation search in /registry. */
export const LIQUIDATION_SEARCH_ID = 'mev.liquidation_search';

/** Builds the query string of `GET /v1/liquidation-search` (`protocol` repeated). */
export function liquidationSearchQuery(params: LiquidationSearchParams = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * `GET /v1/liquidation-search` (docs/spec-notes.md 2.5): imminent liquidations on Aave v3, Spark, Compound v3
 * and Morpho Blue. USD amounts are numbers, `max_repay_amount` is an integer string of debt-token
 * base units, `health_factor` is unitless (< 1: liquidatable now).
 *
 * With `accessToken` the price (0.02 USD) is debited from the metered account. Otherwise the 402
 * is paid with x402 through {@link payAndRetry} by the context's account: scheme `exact`, the
 * client's network and USDC, at most `maxPriceBaseUnits`, within the spend limits.
 *
 * @throws {GatewayError} 400 bad parameters (`errors`), 401 bad token, 402 metered account below the price, 503 index not ready.
 * @throws {PaymentRequiredError} 402 and no account. {PaymentTermsMismatchError} no requirement this client can pay (e.g. above `maxPriceBaseUnits`).
 * @throws {SpendLimitExceededError} {GatewayRequestError}
 *
 * @example
 * const { block_number, opportunities } = await searchLiquidations(ctx, { min_profit_usd: 100, protocol: ['aave_v3', 'spark'] })
 */
export async function searchLiquidations(ctx: GatewayContext, params: SearchLiquidationsParameters = {}): Promise<SearchLiquidationsReturnType> {
  const { accessToken, maxPriceBaseUnits = 20_000n, signal, ...query } = params;
  const path = `/v1/liquidation-search${liquidationSearchQuery(query)}`;
  const r = accessToken
    ? await request(ctx, path, { headers: { authorization: `Bearer ${accessToken}` }, signal })
    : await payAndRetry(ctx, { path, method: 'GET', signal, label: LIQUIDATION_SEARCH_ID, terms: { maxAmount: maxPriceBaseUnits } });
  if (!r.response.ok) throwForStatus(r);
  return resultOf(ctx, path, r);
}

function resultOf(ctx: GatewayContext, path: string, r: GatewayResponse): LiquidationSearchResult {
  const body = parseJson(r.text) as LiquidationSearchResult | undefined;
  if (!body || !Array.isArray(body.opportunities)) {
    throw new GatewayRequestError(`${ctx.baseUrl}${path}`, 'The gateway answered the liquidation search with an unexpected body.', {
      status: r.response.status,
    });
  }
  return body;
}
