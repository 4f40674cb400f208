import { invalidParams } from '@acg/bundles';
import { toHex, type Hex } from 'viem';
import type { RpcContext } from './context.js';
import {
  builderNetRefund,
  bundleHashParam,
  decodeCursor,
  encodeCursor,
  objectParam,
  onlyFields,
  optionalBlock,
  ownRecipient,
  REFUND_PAGE_SIZE,
  settled,
  type BuilderNetRefund,
  type RefundDeps,
} from './refundQuery.js';

/**
 * `buildernet_getDelayedRefunds` params `[{recipient, blockRangeFrom?, blockRangeTo?, cursor?, hash?}]` (BuilderNet's
 * refund API; README "Bundle API of 2026"): the delayed refunds (`delayedRefund: true`) paid to `recipient` (the
 * refund's ETH recipient), oldest block first, within the block range; `hash` (a bundle hash) needs both range ends.
 * `nextCursor` is present when there are more; `indexedUpTo` is the highest block the ledger settled.
 * `recipient` must be the request's signer.
 *
 * @throws {RpcError} -32602 naming the bad field.
 */
export async function buildernet_getDelayedRefunds(
  deps: RefundDeps,
  params: unknown,
  ctx: RpcContext,
): Promise<{ refunds: BuilderNetRefund[]; nextCursor?: Hex; indexedUpTo: Hex }> {
  const obj = objectParam(params, 'buildernet_getDelayedRefunds');
  onlyFields(obj, ['recipient', 'blockRangeFrom', 'blockRangeTo', 'cursor', 'hash']);
  const recipient = ownRecipient(obj.recipient, 'recipient', ctx);
  const from = optionalBlock(obj.blockRangeFrom, 'blockRangeFrom');
  const to = optionalBlock(obj.blockRangeTo, 'blockRangeTo');
  if (from !== undefined && to !== undefined && from > to) throw invalidParams('blockRangeTo', 'is before blockRangeFrom');
  const hash = obj.hash === undefined || obj.hash === null ? undefined : bundleHashParam(obj.hash, 'hash');
  if (hash && (from === undefined || to === undefined)) throw invalidParams('hash', 'needs both blockRangeFrom and blockRangeTo');
  const cursor = decodeCursor(obj.cursor ?? (params as unknown[])[1], 'cursor');
  await settled(deps);
  const page = await deps.refunds.delayedFor(recipient, { from, to, after: cursor, limit: hash ? Number.MAX_SAFE_INTEGER : REFUND_PAGE_SIZE });
  const records = hash ? page.records.filter((r) => r.bundle_hash.toLowerCase() === hash) : page.records;
  const next = hash ? undefined : encodeCursor(page.next);
  return {
    refunds: records.map((r) => builderNetRefund(r, 'payee')),
    ...(next ? { nextCursor: next } : {}),
    indexedUpTo: toHex(await deps.refunds.maxBlock()),
  };
}
