import type { RedisKeys } from '@acg/redis';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Hex } from 'viem';
import type { ChannelChainViews } from './chainViews.js';
import { channelKeys } from './commands/keys.js';

/**
 * A channel marked unpaid (docs/decisions.md "batch-settlement channels", "Confirmations and reorgs"): its
 * deposit was reorged out and its authorization expired before it could be put back. Amounts are integer
 * strings in token base units, as of the moment it was marked.
 */
export interface UnpaidChannel {
  channelId: Hex;
  payer: Hex;
  /** the operation (paid call) whose payment carried the lost deposit */
  operationId: string;
  /** the deposit that is not on chain */
  deposit: string;
  /** what the gateway accepted in vouchers on the channel (`chargedCumulativeAmount`) */
  charged: string;
  /** `channels(id)` on chain: escrow left, and what was claimed of it */
  balanceOnChain: string;
  claimedOnChain: string;
  /** accepted and not claimed (`charged - claimedOnChain`): these calls were delivered and cannot all be collected */
  unclaimed: string;
  /** accepted and not covered by the escrow the chain holds (`charged - balanceOnChain`, at least 0): lost */
  uncovered: string;
  /** ISO 8601 */
  markedAt: string;
}

/**
 * Marks a channel unpaid once its deposit can no longer be put back on chain (the worker's finality round,
 * `onChannelUnpaid` of `@acg/treasury`'s `TransferFinality`):
 *
 * - the channel record's mirrored on-chain state is set to what the chain says (`balance`, `totalClaimed`,
 *   `onchainSyncedAt` now), so the official scheme refuses its next vouchers with x402's
 *   `invalid_batch_settlement_evm_cumulative_exceeds_balance` (a voucher above the escrow); a later deposit
 *   of the payer raises the balance again and the channel works again;
 * - the accepted-but-unclaimed charges are recorded ({@link UnpaidChannel}, in the hash
 *   `channelKeys.unpaid`, field = channel id) and logged with `alert: "channel_unpaid"`: never lost silently.
 *
 * Idempotent (the record keeps the first report). Returns the report, or undefined when the channel is not
 * in storage (already refunded and deleted: nothing accepted is waiting). Errors are Redis's or the RPC's.
 */
export async function markChannelUnpaid(o: {
  redis: Redis;
  keys: RedisKeys;
  storage: ChannelStorage;
  chain: ChannelChainViews;
  channelId: Hex;
  payer: Hex;
  operationId: string;
  deposit: string;
  log: Logger;
}): Promise<UnpaidChannel | undefined> {
  const id = o.channelId.toLowerCase() as Hex;
  const onChain = await o.chain.channel(id);
  const { channel: updated } = await o.storage.updateChannel(id, (c) =>
    c ? { ...c, balance: onChain.balance.toString(), totalClaimed: onChain.totalClaimed.toString(), onchainSyncedAt: Date.now() } : undefined,
  );
  if (!updated) return undefined;
  const charged = BigInt(updated.chargedCumulativeAmount);
  const report: UnpaidChannel = {
    channelId: id,
    payer: o.payer,
    operationId: o.operationId,
    deposit: o.deposit,
    charged: charged.toString(),
    balanceOnChain: onChain.balance.toString(),
    claimedOnChain: onChain.totalClaimed.toString(),
    unclaimed: (charged - onChain.totalClaimed).toString(),
    uncovered: (charged > onChain.balance ? charged - onChain.balance : 0n).toString(),
    markedAt: new Date().toISOString(),
  };
  const first = await o.redis.hsetnx(channelKeys.unpaid(o.keys), id, JSON.stringify(report));
  if (first === 1) {
    o.log.error(
      { alert: 'channel_unpaid', ...report },
      'a channel deposit was reorged out and can no longer be put back: its vouchers are refused, its accepted calls are unpaid',
    );
  }
  return report;
}

/** The channels marked unpaid ({@link markChannelUnpaid}), by channel id. */
export async function unpaidChannels(redis: Redis, keys: RedisKeys): Promise<Map<string, UnpaidChannel>> {
  const all = await redis.hgetall(channelKeys.unpaid(keys));
  return new Map(Object.entries(all).map(([k, v]) => [k, JSON.parse(v) as UnpaidChannel]));
}
