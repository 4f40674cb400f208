import { singleParamsObject } from '@acg/bundles';
import type { BundleIntake } from '@acg/bundles';
import type { Hash } from 'viem';
import type { RpcContext } from './context.js';

/**
 * `mev_sendBundle` (MEV-Share bundle format v0.1, docs/decisions.md "Bundle submission"): params
 * `[{version: "v0.1", inclusion: {block, maxBlock?}, body: [{tx, canRevert}], validity?: {refund?,
 * refundConfig?}, privacy?: {hints?, builders?}, metadata?}]`. Every transaction is decoded and its
 * sender recovered as for `eth_sendBundle`; the bundle joins the same orderflow pool for each block
 * from `inclusion.block` to `inclusion.maxBlock` (at most 30 blocks), under the searcher identity of
 * X-Flashbots-Signature, priced once (0.10 USD). Returns `{bundleHash, receivedTimestampMs}` (keccak256 of the
 * concatenated tx hashes, as for `eth_sendBundle`; the key of `flashbots_getBundleStatsV2`; `receivedTimestampMs`: when the builder received it, UNIX ms, as BuilderNet answers).
 *
 * @throws {RpcError} -32602 naming the bad field; `{hash}` and `{bundle}` body entries (a
 *   matchmaker's transactions and nested bundles) are refused with `data.reason: unsupported_body_entry`.
 */
export async function mev_sendBundle(intake: BundleIntake, params: unknown, ctx: RpcContext): Promise<{ bundleHash: Hash; receivedTimestampMs: number }> {
  const obj = singleParamsObject(params, 'mev_sendBundle');
  const result = await intake.submitMevShare(ctx.searcher, obj, { kind: 'rpc' });
  ctx.log.debug(
    { searcher: ctx.searcher, bundle_hash: result.bundleHash, block: String(result.blockNumber), max_block: String(result.maxBlock), charged: result.charged },
    'mev-share bundle queued',
  );
  return { bundleHash: result.bundleHash, receivedTimestampMs: result.receivedTimestampMs };
}
