import { decodeFunctionResult, encodeFunctionData, multicall3Abi, type Abi, type Hex } from 'viem';
import { MULTICALL3, type Read } from '../multicall.js';
import type { PlanContext } from './types.js';

/**
 * Reads `calls` as the plan's target block sees them before any of its transactions: the state of
 * `ctx.blockNumber`, with the block number and timestamp of the target block (`blockNumber + 1`,
 * `ctx.timestamp`) as `eth_call` block overrides. Views that accrue interest to `block.timestamp`
 * (Comet `getReserves` / `borrowBalanceOf`, a Morpho IRM's `borrowRateView`) then answer for the
 * target block. One `eth_call` of Multicall3 `aggregate3`; a failed call yields `undefined` in its slot.
 * Needs a node that takes block overrides on `eth_call` (geth, reth, erigon, anvil).
 * `ctx.timestamp` must not be before the timestamp of `ctx.blockNumber`.
 */
export async function readAtTarget(ctx: PlanContext, calls: readonly Read[]): Promise<unknown[]> {
  if (calls.length === 0) return [];
  const data = encodeFunctionData({
    abi: multicall3Abi,
    functionName: 'aggregate3',
    args: [
      calls.map((c) => ({
        target: c.address,
        allowFailure: true,
        callData: encodeFunctionData({ abi: c.abi, functionName: c.functionName, args: c.args } as never),
      })),
    ],
  });
  const { data: out } = await ctx.client.call({
    to: MULTICALL3,
    data,
    blockNumber: ctx.blockNumber,
    blockOverrides: { number: ctx.blockNumber + 1n, time: ctx.timestamp },
    batch: false,
  });
  if (!out) throw new Error('readAtTarget: Multicall3 returned no data (is it deployed at the canonical address?)');
  const results = decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: out }) as readonly { success: boolean; returnData: Hex }[];
  return results.map((r, i) => {
    if (!r.success) return undefined;
    const c = calls[i];
    try {
      return decodeFunctionResult({ abi: c.abi as Abi, functionName: c.functionName, data: r.returnData } as never);
    } catch {
      return undefined;
    }
  });
}
