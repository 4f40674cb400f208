import { singleParamsObject } from '@acg/bundles';
import type { BundleIntake } from '@acg/bundles';
import type { RpcContext } from './context.js';

/**
 * `eth_cancelBundle` params `[{replacementUuid}]`: removes the calling searcher's bundle sent with
 * that `replacementUuid` (another searcher's bundle with the same uuid is never touched). Returns
 * `null` like `eth_sendBundle`, whether or not a bundle was still queued (cancellation is
 * idempotent; a bundle already built into a submitted block cannot be recalled).
 *
 * @throws {RpcError} -32602 when `replacementUuid` is missing.
 */
export async function eth_cancelBundle(intake: BundleIntake, params: unknown, ctx: RpcContext): Promise<null> {
  const obj = singleParamsObject(params, 'eth_cancelBundle');
  const cancelled = await intake.cancel(ctx.searcher, obj);
  ctx.log.debug({ searcher: ctx.searcher, cancelled }, 'bundle cancel');
  return null;
}
