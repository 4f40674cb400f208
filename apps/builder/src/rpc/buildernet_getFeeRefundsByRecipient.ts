import type { Hex } from 'viem';
import type { RpcContext } from './context.js';
import {
  builderNetRefund,
  decodeCursor,
  encodeCursor,
  objectParam,
  onlyFields,
  ownRecipient,
  REFUND_PAGE_SIZE,
  settled,
  type BuilderNetRefund,
  type RefundDeps,
} from './refundQuery.js';

/**
 * `buildernet_getFeeRefundsByRecipient` params `[{recipient, cursor?}]` (BuilderNet's refund API; README "Bundle API
 * of 2026"): the refunds credited to `recipient` (a bundle's `refundIdentity`, else its signer), oldest block first,
 * {@link REFUND_PAGE_SIZE} per page; `cursor` is present when there are more. Amounts are wei from the landed block.
 * `recipient` must be the request's signer.
 *
 * @throws {RpcError} -32602 naming `recipient` or `cursor`.
 */
export async function buildernet_getFeeRefundsByRecipient(
  deps: RefundDeps,
  params: unknown,
  ctx: RpcContext,
): Promise<{ refunds: BuilderNetRefund[]; cursor?: Hex }> {
  const obj = objectParam(params, 'buildernet_getFeeRefundsByRecipient');
  onlyFields(obj, ['recipient', 'cursor']);
  const recipient = ownRecipient(obj.recipient, 'recipient', ctx);
  // BuilderNet: "include the cursor as the second argument in the next request"; the field works too
  const cursor = decodeCursor(obj.cursor ?? (params as unknown[])[1], 'cursor');
  await settled(deps);
  const page = await deps.refunds.byIdentity(recipient, { after: cursor, limit: REFUND_PAGE_SIZE });
  const next = encodeCursor(page.next);
  return { refunds: page.records.map((r) => builderNetRefund(r)), ...(next ? { cursor: next } : {}) };
}
