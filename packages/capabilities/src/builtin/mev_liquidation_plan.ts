import {
  LiquidationIndexStore,
  isPlanRefusal,
  liquidationIndexReady,
  planLiquidation,
  prepareLiquidationPlan,
  type LiquidationChain,
  type PlanLiquidationOptions,
} from '@acg/liquidations';
import { LiquidationPlan, LiquidationPlanRequest } from '@acg/schemas';
import type { z } from 'zod';
import { CapabilityFailure, defineCapability, type CapabilityDeps } from '../define.js';

/** `{chain?, opportunity: {protocol, borrower, market, collateral_token, debt_token, market_id?}, searcher}` (addresses checksummed). */
export type LiquidationPlanParameters = z.input<typeof LiquidationPlanRequest>;
/** The unsigned transactions for `target_block` and what their simulation moved (base units as integer strings, USD as numbers). */
export type LiquidationPlanReturnType = z.infer<typeof LiquidationPlan>;
/** A refusal (422: `not_liquidatable`, `unknown_position`, `insufficient_balance` before payment; `would_revert`, `unprofitable` refunded), or `index_not_ready` / `chain_unavailable` (503). */
export type LiquidationPlanErrorType = CapabilityFailure;

/** The price of one plan: 0.05 USDC (docs/liquidation-plans.md "Pricing"). */
export const LIQUIDATION_PLAN_PRICE_BASE_UNITS = 50_000n;

/**
 * `mev.liquidation_plan`, 0.05 USDC (50000 base units) per plan: the unsigned transactions that
 * liquidate one opportunity of `mev.liquidation_search` at the next block, simulated there with
 * `eth_simulateV1` (`@acg/liquidations` `planLiquidation`; docs/liquidation-plans.md).
 * Before payment (REST route `ready`): the index has a block (503) and the protocol's planner reads
 * the position at the latest block: `not_liquidatable`, `unknown_position`, `insufficient_balance`
 * answer 422 and nothing is charged. After payment (`run`): the plan is made again on the then
 * latest block and simulated; `would_revert` and `unprofitable` (and a refusal that appeared
 * meanwhile) are 422 and refunded (bearer) or never settled (x402), like any failed run.
 *
 * @example
 * // POST {base_url}/v1/liquidation-plans
 * { "chain": "ethereum", "searcher": "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
 *   "opportunity": { "protocol": "aave_v3", "borrower": "0x…", "market": "0x…", "collateral_token": "0x…", "debt_token": "0x…" } }
 */
export const liquidationPlan = defineCapability({
  id: 'mev.liquidation_plan',
  product: 'mev',
  name: 'Liquidation plan',
  description:
    'Returns the unsigned transactions that liquidate one opportunity from the liquidation search at the next block (largest amount the protocol allows, approval included), simulated with eth_simulateV1: gas, tokens in and out of the searcher, and profit in USD after gas.',
  surface: 'REST',
  auth: 'bearer',
  method: 'POST',
  endpoint: '{base_url}/v1/liquidation-plans',
  docs: '{base_url}/openapi.json',
  built: true,
  x402: 'accepted',
  price: { base_units: LIQUIDATION_PLAN_PRICE_BASE_UNITS, unit: 'call' },
  input: LiquidationPlanRequest,
  output: LiquidationPlan,
  related_capabilities: ['mev.liquidation_search', 'builder.send_bundle'],
  example: {
    request: {
      capability_id: 'mev.liquidation_plan',
      input: {
        chain: 'ethereum',
        searcher: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720',
        opportunity: {
          protocol: 'aave_v3',
          borrower: '0x486f27d2B5E3d8b5FD9C0a9b6c3D7a4e8f1b2C3D',
          market: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
          collateral_token: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2',
          debt_token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
        },
      },
    },
    response: {
      execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8W',
      status: 'SUCCEEDED',
      payment: { tx_hash: '0x8b3d2f9e4c5b7a808293a41b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f', amount: '50000' },
      result: {
        chain: 'ethereum',
        protocol: 'aave_v3',
        borrower: '0x486f27d2B5E3d8b5FD9C0a9b6c3D7a4e8f1b2C3D',
        searcher: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720',
        market: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
        based_on_block: 24190512,
        target_block: 24190513,
        transactions: [
          {
            from: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720',
            to: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2',
            data: '0x00a718a9',
            value: '0',
            gas: '402125',
            purpose: 'liquidationCall',
          },
        ],
        repay: { token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', amount: '32680475485', usd: 32680.475485 },
        tokens_in: [{ token: '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', symbol: 'WETH', amount: '16811707271779000000', usd: 33623.414544 }],
        tokens_out: [{ token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', amount: '32680475485', usd: 32680.475485 }],
        gas_used: '350400',
        base_fee_per_gas: '1200000000',
        gas_cost_usd: 0.84096,
        profit_usd: 942.098099,
        simulation: { method: 'eth_simulateV1', block: 24190513 },
      },
    },
  },
  notes:
    'Examples show POST {base_url}/api/v1/execute; the same body is POST {base_url}/v1/liquidation-plans, whose answer is the result. ' +
    'Authorization: Bearer <token> debits the metered account, or pay per call with x402 (402 challenge). ' +
    'A position that is healthy, already liquidated or unknown, or a searcher lacking the debt asset, is answered 422 before any payment; ' +
    'a plan that would revert or lose money at the target block is 422 and refunded. Amounts are base units (integer strings), USD amounts JSON numbers.',
  // reads the chain only: may start while the payment settles
  readOnly: true,
  precondition(input, deps) {
    if (!deps.redis || !deps.keys) return 'The liquidation index is not configured on this gateway.';
    return deps.chainClient(input.chain) ? undefined : `The chain ${input.chain} is not configured on this gateway.`;
  },
  /** Before payment on `POST /v1/liquidation-plans`: the index is ready (503) and the planner does not refuse (422); nothing charged either way. */
  async ready(input, deps) {
    if (!(await liquidationIndexReady(deps.redis!, deps.keys!, input.chain as LiquidationChain))) {
      throw new CapabilityFailure('index_not_ready', `The liquidation index of ${input.chain} is not ready; nothing was charged. Retry later.`, 503);
    }
    let prepared: Awaited<ReturnType<typeof prepareLiquidationPlan>>;
    try {
      prepared = await prepareLiquidationPlan(await planOptions(input, deps), input);
    } catch (e) {
      throw unavailable(e);
    }
    if (isPlanRefusal(prepared)) throw new CapabilityFailure(prepared.refused, `${prepared.detail}. Nothing was charged.`, 422);
  },
  async run(input, deps) {
    let plan: Awaited<ReturnType<typeof planLiquidation>>;
    try {
      plan = await planLiquidation(await planOptions(input, deps), input);
    } catch (e) {
      throw unavailable(e);
    }
    if (isPlanRefusal(plan)) throw new CapabilityFailure(plan.refused, `${plan.detail}. Not charged: refunded, or never settled.`, 422);
    return plan;
  },
});

/** The planning options of a deployment: its chain client, the liquidation index's ETH/USD (prices gas) and price book. */
async function planOptions(input: LiquidationPlanRequest, deps: CapabilityDeps): Promise<PlanLiquidationOptions> {
  const client = deps.chainClient(input.chain);
  if (!client) throw new CapabilityFailure('chain_unavailable', `The chain ${input.chain} is not configured on this gateway.`, 503);
  const meta = await new LiquidationIndexStore(deps.redis!, deps.keys!, input.chain as LiquidationChain).meta();
  if (!meta) throw new CapabilityFailure('index_not_ready', `The liquidation index of ${input.chain} is not ready; nothing was charged. Retry later.`, 503);
  // tokens the planner's oracle did not price: the index's price book of its last block
  const book = meta.usd_prices ?? {};
  return { client, chain: input.chain, ethUsd: meta.eth_usd, usdPrice: (token) => book[token.toLowerCase()] };
}

/** A chain read that failed (not a refusal): 503, nothing charged or refunded. */
const unavailable = (e: unknown) =>
  e instanceof CapabilityFailure ? e : new CapabilityFailure('chain_unavailable', 'The chain could not be read to plan this liquidation.', 503, e);
