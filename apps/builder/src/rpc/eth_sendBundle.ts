import { singleParamsObject } from '@acg/bundles';
import type { BundleIntake } from '@acg/bundles';
import type { Hash } from 'viem';
import type { RpcContext } from './context.js';

/** BuilderNet's answer to `eth_sendBundle`: the bundle hash and when the builder received it (UNIX ms). */
export interface SendBundleAnswer {
  bundleHash: Hash;
  receivedTimestampMs: number;
}

/**
 * `eth_sendBundle` (docs/spec-notes.md 4, docs/decisions.md "Bundle submission"): params `[{txs, blockNumber, minTimestamp?,
 * maxTimestamp?, revertingTxHashes?, droppingTxHashes?, replacementUuid?, refundPercent?,
 * refundRecipient?, refundTxHashes?, replacementNonce?, refundIdentity?, delayedRefund?, version?,
 * desiredState?, targetAddresses?, targetSlots?}]` (the last seven are BuilderNet's; README "Bundle API of 2026"). Validates every transaction, queues the bundle in the
 * orderflow pool for `blockNumber` under the searcher identity (replacing the searcher's bundle with
 * the same `replacementUuid`), prices it at 0.10 USD (debited from the signer's metered account when it
 * holds that, else recorded as owed; README "Pricing"), once per signer and bundle (a resend of the same
 * transactions and block, or the same `replacementUuid` and block, is answered alike and not charged
 * again), and returns `null`: accepted
 * and queued (docs/spec-notes.md 4; Flashbots returns `{bundleHash}` here, see README). A request in BuilderNet's
 * format (`version` given) gets BuilderNet's answer `{bundleHash, receivedTimestampMs}` instead.
 *
 * @throws {RpcError} -32602 naming the bad field (bad hex, wrong chain id, past block, too many
 *   transactions or bytes, unknown field; `replacementNonce` not above the uuid's last accepted one).
 */
export async function eth_sendBundle(intake: BundleIntake, params: unknown, ctx: RpcContext): Promise<SendBundleAnswer | null> {
  const obj = singleParamsObject(params, 'eth_sendBundle');
  const result = await intake.submit(ctx.searcher, obj, { kind: 'rpc' });
  ctx.log.debug({ searcher: ctx.searcher, bundle_hash: result.bundleHash, block: String(result.blockNumber), replaced: result.replaced }, 'bundle queued');
  return result.version ? { bundleHash: result.bundleHash, receivedTimestampMs: result.receivedTimestampMs } : null;
}
