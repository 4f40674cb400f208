import type { GatewayContext } from '../context.js';
import {
  AcgError,
  GatewayRequestError,
  type GatewayError,
  type PaymentRequiredError,
  type PaymentTermsMismatchError,
  type SpendLimitExceededError,
} from '../errors.js';
import { request } from '../http.js';
import { parseJson } from '../protocol.js';
import { payAndRetry } from '../payAndRetry.js';
import type { LiquidationOpportunity, LiquidationPlan, LiquidationPlanOpportunity, WalletMonitorChain } from '../types.js';
import { throwForStatus } from './internal.js';

/** Capability id of the liquidation plan in /registry. */
export const LIQUIDATION_PLAN_ID = 'mev.liquidation_plan';

/** Parameters of {@link planLiquidation}. */
export interface PlanLiquidationParameters {
  /** An opportunity from the liquidation search (its identifying fields are sent), or those fields alone. */
  opportunity: LiquidationOpportunity | LiquidationPlanOpportunity;
  /** The address that will sign and send the plan's transactions and holds the debt asset (checksummed). */
  searcher: string;
  /** Chain of the opportunity (default `ethereum`). */
  chain?: WalletMonitorChain;
  /** Bearer token (SIWE sign-in): the price is debited from the metered account; no x402. */
  accessToken?: string;
  /** Most one plan may cost with x402, integer USDC base units (default 50000 = 0.05 USDC). */
  maxPriceBaseUnits?: bigint;
  signal?: AbortSignal;
}

/** Errors of {@link planLiquidation}: a 422 {@link GatewayError} carries the refusal in `problem.reason`. */
export type PlanLiquidationErrorType =
  | GatewayError
  | PaymentRequiredError
  | PaymentTermsMismatchError
  | SpendLimitExceededError
  | GatewayRequestError
  | AcgError;

/** The fields of a search opportunity that name the position (`market` is required: the contract the plan calls). */
export function planOpportunityOf(o: LiquidationOpportunity | LiquidationPlanOpportunity): LiquidationPlanOpportunity {
  if (!o.market) throw new AcgError('The opportunity has no `market` (the contract to call): take it from GET /v1/liquidation-search.');
  const { protocol, borrower, market, collateral_token, debt_token } = o;
  const marketId = (o as { market_id?: string }).market_id;
  return { protocol, borrower, market, collateral_token, debt_token, ...(marketId ? { market_id: marketId } : {}) };
}

/**
 * `POST /v1/liquidation-plans` (`mev.liquidation_plan`, docs/liquidation-plans.md): the unsigned
 * transactions that liquidate `opportunity` at the next block, simulated there. Amounts are base
 * units as integer strings; USD amounts are numbers.
 *
 * With `accessToken` the price (0.05 USD) is debited from the metered account; otherwise the 402
 * is paid with x402 by the context's account, at most `maxPriceBaseUnits`, within the spend limits.
 *
 * @throws {GatewayError} 422 refused (`problem.reason`: `not_liquidatable`, `unknown_position`,
 *   `insufficient_balance` before any payment; `would_revert`, `unprofitable` after it, refunded),
 *   400 bad body, 401 bad token, 402 metered account below the price, 503 index not ready.
 * @throws {PaymentRequiredError} {PaymentTermsMismatchError} {SpendLimitExceededError} {GatewayRequestError}
 *
 * @example
 * const plan = await planLiquidation(ctx, { opportunity: search.opportunities[0], searcher: account.address })
 */
export async function planLiquidation(ctx: GatewayContext, params: PlanLiquidationParameters): Promise<LiquidationPlan> {
  const { accessToken, maxPriceBaseUnits = 50_000n, signal } = params;
  const path = '/v1/liquidation-plans';
  const body = JSON.stringify({ chain: params.chain ?? 'ethereum', opportunity: planOpportunityOf(params.opportunity), searcher: params.searcher });
  const headers = { 'content-type': 'application/json' };
  const r = accessToken
    ? await request(ctx, path, { method: 'POST', body, headers: { ...headers, authorization: `Bearer ${accessToken}` }, signal })
    : await payAndRetry(ctx, { path, method: 'POST', body, headers, signal, label: LIQUIDATION_PLAN_ID, terms: { maxAmount: maxPriceBaseUnits } });
  if (!r.response.ok) throwForStatus(r);
  const plan = parseJson(r.text) as LiquidationPlan | undefined;
  if (!plan || !Array.isArray(plan.transactions)) {
    throw new GatewayRequestError(`${ctx.baseUrl}${path}`, 'The gateway answered the liquidation plan with an unexpected body.', { status: r.response.status });
  }
  return plan;
}
