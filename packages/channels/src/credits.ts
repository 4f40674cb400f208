import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Hex } from 'viem';
import type { ChannelChainViews } from './chainViews.js';
import { channelKeys } from './commands/keys.js';

/**
 * A provider's credit for one call paid by voucher (the shape of the provider ledger's `credit`, price as a
 * string): `price` integer USDC base units (6 decimals), the answering offer's price.
 */
export interface ChannelCredit {
  execution_id: string;
  provider_id: string;
  provider_address: `0x${string}`;
  capability_id: string;
  payer: `0x${string}`;
  price: string;
}

/**
 * The hook voucher acceptance calls (the gateway's `batch-settlement` paywall strategy), once per accepted
 * voucher of a provider capability, after the call succeeded: records `credit` until the channel's claimed
 * total on chain reaches `cumulative` (the channel's `chargedCumulativeAmount` after this call, base units).
 * Nothing is credited now: {@link releaseClaimedCredits} credits it once claimed and settled
 * (docs/decisions.md "batch-settlement channels"). Idempotent (the same credit at the same amount is one
 * member). One MULTI (both keys under the deployment prefix: one slot on a Cluster).
 */
export async function recordChannelCredit(redis: Redis, keys: RedisKeys, p: { channelId: Hex; cumulative: bigint; credit: ChannelCredit }): Promise<void> {
  await redis
    .multi()
    .zadd(channelKeys.credits(keys, p.channelId), p.cumulative.toString(), JSON.stringify(p.credit))
    .sadd(channelKeys.creditChannels(keys), p.channelId.toLowerCase())
    .exec();
}

/**
 * Credits every recorded {@link ChannelCredit} whose channel's claimed total on chain
 * (`channels(id).totalClaimed`) has reached its cumulative amount, through `credit` (the provider ledger's,
 * idempotent per `execution_id`, so a crash between crediting and removing credits nothing twice), with
 * `payment_tx_hash` the settlement that paid it to the treasury; then forgets them. Call it only after a
 * settlement that followed the claims (`ChannelSettlement`'s `onSettled`). Returns how many were credited.
 */
export async function releaseClaimedCredits(o: {
  redis: Redis;
  keys: RedisKeys;
  chain: ChannelChainViews;
  settlement: Hex;
  credit: (c: Omit<ChannelCredit, 'price'> & { price: bigint; payment_tx_hash: Hex }) => Promise<unknown>;
}): Promise<number> {
  let released = 0;
  for (const channelId of await o.redis.smembers(channelKeys.creditChannels(o.keys))) {
    const key = channelKeys.credits(o.keys, channelId);
    const { totalClaimed } = await o.chain.channel(channelId as Hex);
    const due = await o.redis.zrangebyscore(key, '-inf', totalClaimed.toString());
    for (const raw of due) {
      const c = JSON.parse(raw) as ChannelCredit;
      await o.credit({ ...c, price: BigInt(c.price), payment_tx_hash: o.settlement });
      await o.redis.zrem(key, raw);
      released++;
    }
    // forget the channel unless credits remain (SREM first: a credit recorded meanwhile is seen by ZCARD, or re-adds itself)
    await o.redis.srem(channelKeys.creditChannels(o.keys), channelId);
    if ((await o.redis.zcard(key)) > 0) await o.redis.sadd(channelKeys.creditChannels(o.keys), channelId);
  }
  return released;
}
