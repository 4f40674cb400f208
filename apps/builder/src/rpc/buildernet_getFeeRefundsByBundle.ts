import { getAddress } from 'viem';
import type { RpcContext } from './context.js';
import { builderNetRefund, bundleHashParam, settled, stringParam, type BuilderNetRefund, type RefundDeps } from './refundQuery.js';

/**
 * `buildernet_getFeeRefundsByBundle` params `[bundle_hash]` (BuilderNet's refund API; README "Bundle API of 2026"):
 * the refunds of that bundle, as `buildernet_getFeeRefundsByRecipient` answers them. Only the bundle's signer and the
 * identity credited see them; anyone else (or an unknown hash) gets `{refunds: []}`.
 *
 * @throws {RpcError} -32602 naming `bundle_hash`.
 */
export async function buildernet_getFeeRefundsByBundle(deps: RefundDeps, params: unknown, ctx: RpcContext): Promise<{ refunds: BuilderNetRefund[] }> {
  const hash = bundleHashParam(stringParam(params, 'buildernet_getFeeRefundsByBundle', 'bundle_hash'), 'bundle_hash');
  await settled(deps);
  const me = getAddress(ctx.searcher);
  const records = await deps.refunds.byBundle(hash);
  return { refunds: records.filter((r) => getAddress(r.searcher) === me || getAddress(r.identity) === me).map((r) => builderNetRefund(r)) };
}
