import type { ChainName, LendingProtocol, LiquidationPlan, LiquidationPlanRequest, PlanTokenFlow } from '@acg/schemas';
import { erc20Abi, getAddress, type Address, type PublicClient } from 'viem';
import { toNumber } from '../math/fixed.js';
import { readAll } from '../multicall.js';
import { aavePlanner } from './aave.js';
import { cometPlanner } from './comet.js';
import { morphoPlanner } from './morpho.js';
import { nextBaseFee, simulatePlanCalls, type PlanSimulation } from './simulate.js';
import type { PlanContext, PlanRefusal, ProtocolPlan, ProtocolPlanner } from './types.js';

export { aavePlanner, aavePlannerWith, type AavePlannerOptions } from './aave.js';
export {
  nextBaseFee,
  simulatePlanCalls,
  type PlanSimulation,
  type PlanSimulationTarget,
  type SimulatedCall,
  type SimulatedCallResult,
  type SimulatedTransfer,
} from './simulate.js';
export type { PlanContext, PlannedCall, PlanRefusal, ProtocolPlan, ProtocolPlanner } from './types.js';

/**
 * The planner of each protocol (one signature, `ProtocolPlanner` of ./types.ts): Aave v3 and Spark
 * (./aave.ts), Compound v3 (./comet.ts), Morpho Blue (./morpho.ts); docs/liquidation-plans.md.
 */
export const PLANNERS: Record<LendingProtocol, ProtocolPlanner> = {
  aave_v3: aavePlanner,
  spark: aavePlanner,
  compound_v3: cometPlanner,
  morpho_blue: morphoPlanner,
};

/** True when `x` is a planner's or the simulation's refusal. */
export function isPlanRefusal(x: unknown): x is PlanRefusal {
  return typeof x === 'object' && x !== null && 'refused' in x;
}

/** Options of {@link prepareLiquidationPlan} and {@link planLiquidation}. */
export interface PlanLiquidationOptions {
  client: PublicClient;
  chain: ChainName;
  /** USD per ETH, prices gas (the liquidation index's `eth_usd`). */
  ethUsd: number;
  /** USD per whole token for a token the planner's oracle did not price (e.g. the index's price book). */
  usdPrice?: (token: Address) => number | undefined;
  /** Planners by protocol (default {@link PLANNERS}). */
  planners?: Partial<Record<LendingProtocol, ProtocolPlanner>>;
  /** Plan on this block instead of the latest one (the target is the block after it). */
  blockNumber?: bigint;
  /**
   * Timestamp of the target block from its parent's (seconds). Default: the parent's + 1 or now,
   * whichever is later: the earliest the next block can carry (what the dev builder seals; a
   * mainnet slot is at most 12 s later).
   */
  targetTimestamp?: (parentTimestamp: bigint) => bigint;
}

/** The planner's outcome at the latest block, before simulation. */
export interface PreparedPlan {
  ctx: PlanContext;
  parent: { number: bigint; timestamp: bigint; baseFeePerGas: bigint | null; gasUsed: bigint; gasLimit: bigint };
  plan: ProtocolPlan;
}

/**
 * Runs the protocol's planner on the latest block (or `opts.blockNumber`): reads the position with
 * the protocol's math and builds the calls, without simulating them. Cheap (a few multicalls), so
 * the gateway runs it before payment: a refusal here (`not_liquidatable`, `unknown_position`,
 * `insufficient_balance`) is answered 422 and never charged (docs/liquidation-plans.md "Refusals").
 */
export async function prepareLiquidationPlan(opts: PlanLiquidationOptions, request: LiquidationPlanRequest): Promise<PreparedPlan | PlanRefusal> {
  const planner = (opts.planners ?? PLANNERS)[request.opportunity.protocol];
  if (!planner) return { refused: 'unknown_position', detail: `no planner for ${request.opportunity.protocol} yet` };
  const block = await opts.client.getBlock(opts.blockNumber === undefined ? { blockTag: 'latest' } : { blockNumber: opts.blockNumber });
  const now = BigInt(Math.floor(Date.now() / 1000));
  const timestamp = opts.targetTimestamp ? opts.targetTimestamp(block.timestamp) : block.timestamp + 1n > now ? block.timestamp + 1n : now;
  const ctx: PlanContext = { client: opts.client, blockNumber: block.number, timestamp, searcher: getAddress(request.searcher) };
  const plan = await planner(ctx, request.opportunity);
  if (isPlanRefusal(plan)) return plan;
  return {
    ctx,
    parent: { number: block.number, timestamp: block.timestamp, baseFeePerGas: block.baseFeePerGas, gasUsed: block.gasUsed, gasLimit: block.gasLimit },
    plan,
  };
}

/** Gas limit given to each planned transaction: the simulated gas plus 25% (units). */
export const planGasLimit = (gasUsed: bigint): bigint => gasUsed + gasUsed / 4n + 21_000n;

/**
 * A liquidation plan (docs/liquidation-plans.md): runs the protocol's planner on the latest block,
 * simulates its calls from the searcher as the next block (`eth_simulateV1` with `traceTransfers`,
 * simulate.ts), and prices what the simulation moved: `tokens_in` / `tokens_out` are the searcher's
 * ERC-20 transfers summed per token (base units), priced with the planner's oracle prices (then
 * `opts.usdPrice`); `gas_cost_usd` = simulated gas × the target block's EIP-1559 base fee × `ethUsd`;
 * `profit_usd` = Σ tokens_in USD − Σ tokens_out USD − gas_cost_usd.
 *
 * @returns The {@link LiquidationPlan}, or a {@link PlanRefusal}: the planner's, `would_revert`
 *   (a call reverted in the simulation; `detail` names it and the reason) or `unprofitable`
 *   (profit after gas ≤ 0).
 */
export async function planLiquidation(opts: PlanLiquidationOptions, request: LiquidationPlanRequest): Promise<LiquidationPlan | PlanRefusal> {
  const prepared = await prepareLiquidationPlan(opts, request);
  if (isPlanRefusal(prepared)) return prepared;
  return simulatePreparedPlan(opts, request, prepared);
}

/** The simulation and pricing half of {@link planLiquidation}, for a plan {@link prepareLiquidationPlan} made. */
export async function simulatePreparedPlan(
  opts: PlanLiquidationOptions,
  request: LiquidationPlanRequest,
  prepared: PreparedPlan,
): Promise<LiquidationPlan | PlanRefusal> {
  const { ctx, plan, parent } = prepared;
  const searcher = ctx.searcher;
  let sim: PlanSimulation;
  try {
    sim = await simulatePlanCalls(opts.client, searcher, plan.calls, { parent: parent.number, timestamp: ctx.timestamp });
  } catch (e) {
    const msg = (e as { details?: string }).details ?? (e as Error).message ?? 'simulation failed';
    return { refused: 'would_revert', detail: `the node refused the simulation: ${String(msg).split('\n')[0].slice(0, 160)}` };
  }
  const reverted = sim.calls.findIndex((c) => c.status === 'reverted');
  if (reverted >= 0 || sim.calls.length !== plan.calls.length) {
    const i = reverted >= 0 ? reverted : sim.calls.length;
    return {
      refused: 'would_revert',
      detail: `transactions[${i}] (${plan.calls[i]?.purpose ?? '?'}) reverts at block ${parent.number + 1n}: ${sim.calls[i]?.reason ?? 'not simulated'}`,
    };
  }

  const inflow = new Map<string, bigint>();
  const outflow = new Map<string, bigint>();
  const add = (m: Map<string, bigint>, token: Address, amount: bigint) => m.set(token, (m.get(token) ?? 0n) + amount);
  for (const t of sim.transfers) {
    if (t.from === t.to) continue;
    if (t.to === searcher) add(inflow, t.token, t.amount);
    if (t.from === searcher) add(outflow, t.token, t.amount);
  }
  const tokens = [...new Set([...inflow.keys(), ...outflow.keys(), plan.repay.token])] as Address[];
  const meta = await readAll(
    { client: opts.client, blockNumber: parent.number, timestamp: ctx.timestamp, prices: new Map(), batchSize: 24_576 },
    tokens.flatMap((token) => [
      { address: token, abi: erc20Abi, functionName: 'symbol' },
      { address: token, abi: erc20Abi, functionName: 'decimals' },
    ]),
  );
  const info = new Map(
    tokens.map((t, i) => [t, { symbol: typeof meta[2 * i] === 'string' ? (meta[2 * i] as string) : '?', decimals: Number(meta[2 * i + 1] ?? 18) }]),
  );
  const priceOf = (token: Address) => plan.usdPrices?.[token.toLowerCase()] ?? opts.usdPrice?.(token) ?? 0;
  const flow = (token: Address, amount: bigint): PlanTokenFlow => {
    const m = info.get(token)!;
    return { token, symbol: m.symbol, amount: amount.toString(), usd: round6(toNumber(amount, m.decimals) * priceOf(token)) };
  };
  const tokensIn = [...inflow].map(([t, a]) => flow(t as Address, a));
  const tokensOut = [...outflow].map(([t, a]) => flow(t as Address, a));

  const baseFee = nextBaseFee(parent);
  const gasCostUsd = round6(toNumber(sim.gasUsed * baseFee, 18) * opts.ethUsd || 0);
  const profit = round6(tokensIn.reduce((s, f) => s + f.usd, 0) - tokensOut.reduce((s, f) => s + f.usd, 0) - gasCostUsd);
  if (!(profit > 0))
    return { refused: 'unprofitable', detail: `profit after gas is ${profit} USD (gas ${sim.gasUsed} units at ${baseFee} wei, ${gasCostUsd} USD)` };

  return {
    chain: opts.chain,
    protocol: plan.protocol,
    borrower: getAddress(request.opportunity.borrower),
    searcher,
    market: getAddress(request.opportunity.market),
    ...(request.opportunity.market_id ? { market_id: request.opportunity.market_id } : {}),
    based_on_block: Number(parent.number),
    target_block: Number(parent.number + 1n),
    transactions: plan.calls.map((c, i) => ({
      from: searcher,
      to: getAddress(c.to),
      data: c.data,
      value: c.value.toString(),
      gas: planGasLimit(sim.calls[i].gasUsed).toString(),
      purpose: c.purpose,
    })),
    repay: flow(getAddress(plan.repay.token), plan.repay.amount),
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    gas_used: sim.gasUsed.toString(),
    base_fee_per_gas: baseFee.toString(),
    gas_cost_usd: gasCostUsd,
    profit_usd: profit,
    simulation: { method: 'eth_simulateV1', block: Number(parent.number + 1n) },
  };
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
