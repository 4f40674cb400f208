import { RefundLedger } from '@acg/bundles';
import { toHex, type Hex } from 'viem';
import type { RpcContext } from './context.js';
import { ownRecipient, settled, stringParam, type RefundDeps } from './refundQuery.js';

/**
 * `buildernet_getFeeRefundTotalsByRecipient` params `[recipient]` (BuilderNet's refund API; README "Bundle API of
 * 2026"): the wei totals of the refunds credited to `recipient` (hex quantities): `pending` (delayed, not paid out),
 * `received` (paid in the landed block), and `maxBlockNumber`, the highest block the ledger settled.
 * `recipient` must be the request's signer.
 *
 * @throws {RpcError} -32602 naming `recipient`.
 */
export async function buildernet_getFeeRefundTotalsByRecipient(
  deps: RefundDeps,
  params: unknown,
  ctx: RpcContext,
): Promise<{ pending: Hex; received: Hex; maxBlockNumber: Hex }> {
  const raw = stringParam(params, 'buildernet_getFeeRefundTotalsByRecipient', 'recipient');
  const recipient = ownRecipient(raw, 'recipient', ctx);
  await settled(deps);
  const { records } = await deps.refunds.byIdentity(recipient, { limit: Number.MAX_SAFE_INTEGER });
  const t = RefundLedger.totals(records, await deps.refunds.maxBlock());
  return { pending: toHex(t.pending), received: toHex(t.received), maxBlockNumber: toHex(t.maxBlockNumber) };
}
