import { erc20MetaAbi } from './abis.js';
import type { BlockContext } from './types.js';
import { MULTICALL3_ADDRESS } from '@acg/schemas';
import type { Abi, Address } from 'viem';

/** Multicall3, at the same address on every chain (and on the dev chains); `MULTICALL3_ADDRESS` of @acg/schemas. */
export const MULTICALL3: Address = MULTICALL3_ADDRESS;

/** One read of a multicall. */
export type Read = { address: Address; abi: Abi; functionName: string; args?: readonly unknown[] };

/**
 * Reads `calls` at the context block through Multicall3 (viem `multicall`, chunks of
 * `ctx.batchSize` bytes, sent concurrently). A failed call yields `undefined` in its slot.
 */
export async function readAll(ctx: BlockContext, calls: Read[]): Promise<unknown[]> {
  if (calls.length === 0) return [];
  const results = (await ctx.client.multicall({
    contracts: calls as never,
    allowFailure: true,
    multicallAddress: MULTICALL3,
    blockNumber: ctx.blockNumber,
    batchSize: ctx.batchSize,
  } as never)) as { status: 'success' | 'failure'; result?: unknown }[];
  return results.map((r) => (r.status === 'success' ? r.result : undefined));
}

/**
 * Reads the calls `reads(item)` names for every one of `items`, all in one {@link readAll}, and
 * returns each item's results in the order `reads` named them (`undefined` for a failed call).
 */
export async function readEach<T>(ctx: BlockContext, items: readonly T[], reads: (item: T) => Read[]): Promise<unknown[][]> {
  const calls = items.map(reads);
  const results = await readAll(ctx, calls.flat());
  let start = 0;
  return calls.map((c) => {
    const own = results.slice(start, start + c.length);
    start += c.length;
    return own;
  });
}

/** ERC-20 symbol and decimals, cached per token for the process lifetime. */
export class TokenMeta {
  private readonly meta = new Map<string, { symbol: string; decimals: number }>();

  get(token: Address): { symbol: string; decimals: number } {
    return this.meta.get(token.toLowerCase()) ?? { symbol: '?', decimals: 18 };
  }

  /** Loads the tokens not seen yet (one multicall). */
  async load(ctx: BlockContext, tokens: Address[]): Promise<void> {
    const missing = [...new Set(tokens.map((t) => t.toLowerCase()))].filter((t) => !this.meta.has(t)) as Address[];
    if (missing.length === 0) return;
    const out = await readEach(ctx, missing, (t) => [
      { address: t, abi: erc20MetaAbi, functionName: 'symbol' },
      { address: t, abi: erc20MetaAbi, functionName: 'decimals' },
    ]);
    missing.forEach((t, i) => {
      const [symbol, decimals] = out[i];
      this.meta.set(t, { symbol: typeof symbol === 'string' ? symbol : '?', decimals: typeof decimals === 'number' ? decimals : 18 });
    });
  }
}
