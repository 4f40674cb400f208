import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { walletMonitorKeys } from './keys.js';

/**
 * The wallet-monitor subscriptions of @acg/wallet-monitor (packages/wallet-monitor README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  wm_cancel_subscription: 2,
  wm_renew_subscription: 3,
  wm_claim_delivery: 2,
});

export interface CancelSubscriptionParameters {
  subscriptionKey: string;
  expiryKey: string;
  /** caller address, any case (compared lowercase) */
  caller: string;
  /** unix seconds */
  nowSeconds: number;
  subscriptionId: string;
}

/** `wm_cancel_subscription.lua`: cancels a wallet-monitor subscription, owner only, idempotent. `cancelledAt` is unix seconds ('' unless cancelled/already). */
export async function cancelSubscription(
  redis: Redis,
  p: CancelSubscriptionParameters,
): Promise<{ result: 'not_found' | 'forbidden' | 'cancelled' | 'already'; cancelledAt: string }> {
  const [result, at] = (await withScripts(redis, SCRIPTS).wm_cancel_subscription(
    p.subscriptionKey,
    p.expiryKey,
    p.caller.toLowerCase(),
    p.nowSeconds,
    p.subscriptionId,
  )) as [string, string];
  return { result: result as 'not_found', cancelledAt: at };
}

export interface RenewSubscriptionParameters {
  subscriptionKey: string;
  /** the owner's metered account hash */
  accountKey: string;
  expiryKey: string;
  nowSeconds: number;
  termSeconds: number;
  /** balance needed to renew, integer base units */
  minBalance: bigint | string;
  subscriptionId: string;
}

/** `wm_renew_subscription.lua`: renews (by whole terms) or expires one due subscription. `expiresAt` is unix seconds. */
export async function renewSubscription(
  redis: Redis,
  p: RenewSubscriptionParameters,
): Promise<{ result: 'missing' | 'inactive' | 'not_due' | 'renewed' | 'expired'; expiresAt: string }> {
  const [result, at] = (await withScripts(redis, SCRIPTS).wm_renew_subscription(
    p.subscriptionKey,
    p.accountKey,
    p.expiryKey,
    p.nowSeconds,
    p.termSeconds,
    p.minBalance.toString(),
    p.subscriptionId,
  )) as [string, string];
  return { result: result as 'missing', expiresAt: at };
}

export interface ClaimDeliveryParameters {
  /** `wm:vanished:<webhook id>` */
  vanishedKey: string;
  /** `wm:sending:<webhook id>` */
  sendingKey: string;
  /** sending marker lifetime, ms */
  ttlMs: number;
}

/** `wm_claim_delivery.lua`: claims one delivery attempt of an event, or answers `vanished` when a reorg removed it (nothing may be sent). */
export async function claimDelivery(redis: Redis, p: ClaimDeliveryParameters): Promise<'claimed' | 'vanished'> {
  return (await withScripts(redis, SCRIPTS).wm_claim_delivery(p.vanishedKey, p.sendingKey, p.ttlMs)) as 'claimed' | 'vanished';
}
