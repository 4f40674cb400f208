import { invalidParams, RefundLedger } from '@acg/bundles';
import { toHex, type Hex } from 'viem';
import type { RpcContext } from './context.js';
import { objectParam, onlyFields, optionalBlock, ownRecipient, settled, type RefundDeps } from './refundQuery.js';

/**
 * `buildernet_getDelayedRefundTotalsByRecipient` params `[{recipient, blockRangeFrom?, blockRangeTo?}]` (BuilderNet's
 * refund API; README "Bundle API of 2026"): wei totals (hex) of the delayed refunds paid to `recipient` in the block
 * range: `pending`, `received`, and `indexedUpTo`, the highest block the ledger settled. `recipient` must be the
 * request's signer.
 *
 * @throws {RpcError} -32602 naming the bad field.
 */
export async function buildernet_getDelayedRefundTotalsByRecipient(
  deps: RefundDeps,
  params: unknown,
  ctx: RpcContext,
): Promise<{ indexedUpTo: Hex; pending: Hex; received: Hex }> {
  const obj = objectParam(params, 'buildernet_getDelayedRefundTotalsByRecipient');
  onlyFields(obj, ['recipient', 'blockRangeFrom', 'blockRangeTo']);
  const recipient = ownRecipient(obj.recipient, 'recipient', ctx);
  const from = optionalBlock(obj.blockRangeFrom, 'blockRangeFrom');
  const to = optionalBlock(obj.blockRangeTo, 'blockRangeTo');
  if (from !== undefined && to !== undefined && from > to) throw invalidParams('blockRangeTo', 'is before blockRangeFrom');
  await settled(deps);
  const { records } = await deps.refunds.delayedFor(recipient, { from, to, limit: Number.MAX_SAFE_INTEGER });
  const t = RefundLedger.totals(records, await deps.refunds.maxBlock());
  return { indexedUpTo: toHex(t.maxBlockNumber), pending: toHex(t.pending), received: toHex(t.received) };
}
