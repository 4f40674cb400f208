import { singleParamsObject } from '@acg/bundles';
import type { BundleIntake } from '@acg/bundles';
import type { RpcContext } from './context.js';
import type { SendBundleAnswer } from './eth_sendBundle.js';

/**
 * `eth_sendEndOfBlockBundle` (Titan's bottom-of-block bundles; README "Bundle API of 2026"): params
 * `[{txs, blockNumber?, revertingTxHashes?, targetPools, replacementUuid?, replacementSeqNumber?}]`.
 * The bundle joins the orderflow pool for `blockNumber` (default: the next block) marked bottom-of-block:
 * the bidder places it after every other bundle and mempool transaction, simulated on the state they
 * leave, and only when one of them touched one of `targetPools` (called it, or a log came from it).
 * Priced like `eth_sendBundle` (0.10 USD once per signer and bundle). `replacementSeqNumber` (> 0)
 * orders bundles under one `replacementUuid`: one not above the last accepted is refused.
 *
 * @returns `{bundleHash, receivedTimestampMs}` (UNIX ms).
 * @throws {RpcError} -32602 naming the bad field (`targetPools`, `targetPools[2]`, `replacementSeqNumber`, `txs[0]`, ...).
 */
export async function eth_sendEndOfBlockBundle(intake: BundleIntake, params: unknown, ctx: RpcContext): Promise<SendBundleAnswer> {
  const obj = singleParamsObject(params, 'eth_sendEndOfBlockBundle');
  const result = await intake.submitEndOfBlock(ctx.searcher, obj, { kind: 'rpc' });
  ctx.log.debug({ searcher: ctx.searcher, bundle_hash: result.bundleHash, block: String(result.blockNumber) }, 'end-of-block bundle queued');
  return { bundleHash: result.bundleHash, receivedTimestampMs: result.receivedTimestampMs };
}
