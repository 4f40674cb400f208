import { randomUUID } from 'node:crypto';
import { releaseLease, takeLease, type RedisKeys } from '@acg/redis';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { BatchSettlementChannelManager, type BatchSettlementEvmScheme, type Channel } from '@x402/evm/batch-settlement/server';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Address } from 'viem';
import type { ChannelChainViews } from './chainViews.js';
import { channelKeys } from './commands/keys.js';
import { unpaidChannels } from './unpaid.js';

/** Defaults of the worker's channel pass (docs/configuration.md, CHANNEL_* variables). */
export const CHANNEL_SETTLEMENT_DEFAULTS = {
  /** Seconds between passes (each checks thresholds and deadlines). */
  checkIntervalSeconds: 5,
  /** Seconds between claims of everything unclaimed, whatever its amount. */
  claimIntervalSeconds: 3_600,
  /** Unclaimed charged amount of one channel that triggers its claim at the next pass: 1 USDC, base units. */
  claimThreshold: 1_000_000n,
  /** A channel whose withdrawal deadline is this close (or past) is claimed at the next pass, seconds. */
  withdrawMarginSeconds: 600,
  /** A channel without a request for this long is refunded cooperatively, seconds (0: never). */
  refundIdleSeconds: 86_400,
  /** Vouchers per claim transaction. */
  maxClaimsPerBatch: 100,
  /** The pass's lease: another worker takes over this long after a holder died mid-pass, ms. */
  leaseMs: 120_000,
  /**
   * How long after its claim a channel's on-chain `totalClaimed` is compared with storage at every pass, seconds
   * (a claim reorged out is claimed again): longer than the chain takes to finalize a block (Base: 13 to 20 min).
   */
  claimWatchSeconds: 3_600,
} as const;

/** Options of {@link ChannelSettlement}. */
export interface ChannelSettlementOptions {
  redis: Redis;
  keys: RedisKeys;
  /** The `batch-settlement` server scheme whose storage holds the channels (`createChannelStorage`) and whose receiver is paid. */
  scheme: BatchSettlementEvmScheme;
  /** The facilitator that sends claims, settlements and refunds (ours: `createInProcessFacilitator` of @acg/payments). */
  facilitator: FacilitatorClient;
  /** CAIP-2 network of the channels, e.g. `eip155:8453`. */
  network: Network;
  /** The channels' token (USDC). */
  token: Address;
  /** On-chain views: with them a pass settles what an earlier pass claimed but did not settle (a crash in between). */
  chain?: ChannelChainViews;
  claimThreshold?: bigint;
  claimIntervalSeconds?: number;
  withdrawMarginSeconds?: number;
  refundIdleSeconds?: number;
  maxClaimsPerBatch?: number;
  leaseMs?: number;
  claimWatchSeconds?: number;
  /** Called after a settlement succeeded (every claim made so far is paid to the receiver): provider credits hang here. */
  onSettled?: (settled: { transaction: string }) => Promise<void>;
  log: Logger;
  /** Clock, unix ms (tests). */
  now?: () => number;
}

/** What one {@link ChannelSettlement.pass} did; `skipped` when another worker held the lease. */
export interface ChannelPassReport {
  skipped: boolean;
  /** Claim transactions sent, and the vouchers in them. */
  claims: { vouchers: number; transaction: string }[];
  /** Channels refunded cooperatively (their outstanding voucher claimed in the same transaction). */
  refunds: { channel: string; transaction: string }[];
  /** The settlement transaction, when one was sent. */
  settle?: string;
  /**
   * Channels whose claim failed on its own (after the batch holding it failed and was split down to that
   * channel: its on-chain state disagrees with storage, e.g. its deposit reorged out), with the
   * facilitator's error; every other channel of the batch was claimed. Also in `errors`.
   */
  failedClaims: { channel: string; error: string }[];
  /** Channels whose recent claim is no longer on chain (reorged out): storage's `totalClaimed` lowered to the chain's, claimed again. */
  reclaimed: string[];
  /** Failures that did not stop the pass (one channel's claim or refund), as messages. */
  errors: string[];
}

/**
 * Marks that this deployment has had a channel (`channels_seen` in the manager state, `channelKeys.managerState`):
 * from then on every pass reads the chain's unsettled claims and settles them, even with no channel left in
 * storage. {@link ChannelSettlement} marks it when it sees a channel; the gateway marks it after a client's
 * cooperative refund, whose claim may be the first and last of its channel (the record then deleted).
 */
export async function markChannelsSeen(redis: Redis, keys: RedisKeys): Promise<void> {
  await redis.hsetnx(channelKeys.managerState(keys), 'channels_seen', '1');
}

/** Unclaimed charged amount of a channel as the storage knows it, base units. */
export const unclaimedOf = (c: Channel): bigint => BigInt(c.chargedCumulativeAmount) - BigInt(c.totalClaimed);

/**
 * When a channel's pending timed withdrawal can be finalized by its payer, unix seconds
 * (`withdrawRequestedAt + withdrawDelay`), or undefined when none is pending. Past it, vouchers not yet
 * claimed may be lost: the gateway stops taking vouchers near it, the worker claims before it.
 */
export function withdrawalDeadline(c: Channel): number | undefined {
  return c.withdrawRequestedAt > 0 ? c.withdrawRequestedAt + c.channelConfig.withdrawDelay : undefined;
}

/** True when `c`'s withdrawal deadline ({@link withdrawalDeadline}) is within `marginSeconds` of `nowMs`, or past. */
export function nearWithdrawalDeadline(c: Channel, nowMs: number, marginSeconds: number): boolean {
  const deadline = withdrawalDeadline(c);
  return deadline !== undefined && nowMs / 1000 + marginSeconds >= deadline;
}

/**
 * Claims, settlement and cooperative refunds of `batch-settlement` channels, run by the worker
 * (packages/channels README "Claims and settlement"; docs/decisions.md "batch-settlement channels"), with
 * the official `BatchSettlementChannelManager` of `@x402/evm` doing each operation. One pass at a time
 * across all workers (a Redis lease, `channelKeys.managerLease`). A pass:
 *
 * 1. claims every channel whose unclaimed charged amount reaches `claimThreshold`, or whose withdrawal
 *    deadline is within `withdrawMarginSeconds` (as the storage mirrors it or, with `chain`, as the chain's
 *    `pendingWithdrawals` says), and, once per `claimIntervalSeconds`, every channel with
 *    anything unclaimed (claims are cumulative: `totalClaimed` is the voucher total, so a claim sent twice,
 *    or after a crash, moves only the difference);
 * 2. refunds cooperatively channels idle for `refundIdleSeconds` (their last voucher claimed in the same
 *    transaction; the rest of the escrow goes back to the payer; the record is deleted);
 * 3. settles (`settle(receiver, token)`: all claimed funds to the receiver in one transfer) when the chain
 *    shows claimed funds not yet settled (`chain`: this pass's claims, a refund's last claim, or those of a pass
 *    that died before settling), or, without `chain`, when it claimed or refunded anything.
 *
 * One channel never blocks the others: a claim batch that fails is split down to single channels, every
 * channel that can be claimed is, and each one that cannot is reported (`failedClaims`, `errors`, an
 * `alert: "channel_claim_failed"` log line); its vouchers stay in storage for the next pass. A failed
 * refund of one channel is reported in `errors` likewise. A failed settlement throws (the next pass retries).
 */
export class ChannelSettlement {
  readonly manager: BatchSettlementChannelManager;
  private readonly o: Required<
    Pick<
      ChannelSettlementOptions,
      'claimThreshold' | 'claimIntervalSeconds' | 'withdrawMarginSeconds' | 'refundIdleSeconds' | 'maxClaimsPerBatch' | 'leaseMs' | 'claimWatchSeconds'
    >
  > &
    ChannelSettlementOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(o: ChannelSettlementOptions) {
    const d = CHANNEL_SETTLEMENT_DEFAULTS;
    this.o = {
      claimThreshold: d.claimThreshold,
      claimIntervalSeconds: d.claimIntervalSeconds,
      withdrawMarginSeconds: d.withdrawMarginSeconds,
      refundIdleSeconds: d.refundIdleSeconds,
      maxClaimsPerBatch: d.maxClaimsPerBatch,
      leaseMs: d.leaseMs,
      claimWatchSeconds: d.claimWatchSeconds,
      ...o,
    };
    this.manager = new BatchSettlementChannelManager({
      scheme: o.scheme,
      facilitator: o.facilitator,
      receiver: o.scheme.getReceiverAddress(),
      token: o.token,
      network: o.network,
    });
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /**
   * One pass under the lease (see the class). `full: true` claims everything unclaimed now, whatever the
   * interval (a shutdown flush, tests). Throws the claim's or settlement's error (lease released).
   */
  async pass(opts: { full?: boolean } = {}): Promise<ChannelPassReport> {
    const report: ChannelPassReport = { skipped: false, claims: [], refunds: [], failedClaims: [], reclaimed: [], errors: [] };
    const { redis, keys } = this.o;
    const leaseKey = channelKeys.managerLease(keys);
    const holder = randomUUID();
    if (!(await takeLease(redis, { leaseKey, holder, leaseMs: this.o.leaseMs }))) return { ...report, skipped: true };
    try {
      const now = this.now();
      const stateKey = channelKeys.managerState(keys);
      // the interval counts from the first pass ever (HSETNX), not from 1970
      await redis.hsetnx(stateKey, 'claimed_ms', String(now));
      const lastFull = Number((await redis.hget(stateKey, 'claimed_ms')) ?? now);
      const full = opts.full === true || now - lastFull >= this.o.claimIntervalSeconds * 1000;
      const channels = await this.o.scheme.getStorage().list();
      if (this.o.chain) await this.repairReorgedClaims(channels, now, report);
      // a channel marked unpaid (its deposit reorged out for good: markChannelUnpaid) is not claimed while
      // its vouchers exceed the escrow the chain holds (the claim could only revert); a later deposit lifts it
      const unpaid = await unpaidChannels(redis, keys);
      const claimable = (c: Channel) => !unpaid.has(c.channelId.toLowerCase()) || BigInt(c.chargedCumulativeAmount) <= BigInt(c.balance);
      const targets = channels.filter(
        (c) =>
          claimable(c) &&
          unclaimedOf(c) > 0n &&
          (full ||
            report.reclaimed.includes(c.channelId.toLowerCase()) ||
            unclaimedOf(c) >= this.o.claimThreshold ||
            nearWithdrawalDeadline(c, now, this.o.withdrawMarginSeconds)),
      );
      // a withdrawal the storage does not know of (its payer sent no voucher since starting it, so the
      // gateway never refreshed its mirror): read from the chain for every channel with anything unclaimed
      const pending = this.o.chain?.pendingWithdrawal?.bind(this.o.chain);
      if (pending && !full) {
        for (const c of channels) {
          if (unclaimedOf(c) === 0n || targets.includes(c) || !claimable(c)) continue;
          const w = await pending(c.channelId as `0x${string}`);
          if (w.initiatedAt > 0 && nearWithdrawalDeadline({ ...c, withdrawRequestedAt: w.initiatedAt }, now, this.o.withdrawMarginSeconds)) targets.push(c);
        }
      }
      for (let i = 0; i < targets.length; i += this.o.maxClaimsPerBatch) {
        await this.claimIsolating(targets.slice(i, i + this.o.maxClaimsPerBatch), report);
      }
      if (full) await redis.hset(stateKey, 'claimed_ms', String(now));
      if (this.o.refundIdleSeconds > 0) {
        const idleMs = this.o.refundIdleSeconds * 1000;
        const idle = (await this.o.scheme.getStorage().list()).filter((c) => BigInt(c.balance) > 0n && now - c.lastRequestTimestamp >= idleMs);
        for (const c of idle) {
          try {
            report.refunds.push(...(await this.manager.refund([c.channelId])));
          } catch (e) {
            report.errors.push(`refund ${c.channelId}: ${(e as Error).message.slice(0, 200)}`);
          }
        }
      }
      // with the chain views: whenever the chain holds claimed funds not yet settled (this pass's claims, a
      // refund's final claim, an earlier pass's that died before settling, or a client's cooperative refund,
      // which claims the channel's charged total and may leave no channel in storage), read once this
      // deployment has had a channel (`channels_seen`: a deployment without vouchers reads nothing);
      // without: after a claim or refund
      if (channels.length > 0) await markChannelsSeen(redis, keys);
      const seen = channels.length > 0 || report.refunds.length > 0 || (await redis.hexists(stateKey, 'channels_seen')) === 1;
      const settleDue = this.o.chain
        ? seen && (await this.o.chain.receiver(this.o.scheme.getReceiverAddress(), this.o.token).then((r) => r.totalClaimed > r.totalSettled))
        : report.claims.length > 0 || report.refunds.length > 0;
      if (settleDue) {
        try {
          report.settle = (await this.manager.settle()).transaction;
        } catch (e) {
          // a refund whose voucher was already claimed leaves nothing to settle: the facilitator says so
          if (!/nothing_to_settle/.test((e as Error).message)) throw e;
        }
      }
      if (report.settle) {
        await redis.hset(stateKey, 'settled_ms', String(now));
        await this.o.onSettled?.({ transaction: report.settle });
      }
      if (report.claims.length || report.refunds.length || report.settle || report.errors.length || report.reclaimed.length)
        this.o.log.info(report, 'channel pass');
      return report;
    } finally {
      await releaseLease(redis, { leaseKey, holder }).catch(() => undefined);
    }
  }

  /**
   * A claim reorged out: the storage's `totalClaimed` says claimed, the chain does not. For every channel
   * claimed within `claimWatchSeconds` (`channelKeys.recentClaims`), `channels(id).totalClaimed` is read; when
   * it is below the storage's or below the total that claim reached (kept with it: the chain reconciliation
   * may have set the storage back to the chain's total already), the storage's is lowered to it
   * (compare-and-set: only while still above), so this pass claims the channel again from its stored voucher
   * (claims are cumulative). A settlement reorged
   * out needs nothing: the pass settles whenever `receivers(...)` shows claimed funds unsettled.
   */
  private async repairReorgedClaims(channels: Channel[], now: number, report: ChannelPassReport): Promise<void> {
    const { redis, keys, chain } = this.o;
    if (!chain) return;
    const key = channelKeys.recentClaims(keys);
    const recent = await redis.hgetall(key);
    for (const [id, value] of Object.entries(recent)) {
      // `<unix ms>:<claimed total>` (a bare `<unix ms>` from before the total was kept: the storage's total)
      const [at, claimedTotal] = value.split(':');
      const c = channels.find((x) => x.channelId.toLowerCase() === id);
      if (!c || now - Number(at) > this.o.claimWatchSeconds * 1000) {
        await redis.hdel(key, id);
        continue;
      }
      const onChain = (await chain.channel(id as `0x${string}`)).totalClaimed;
      const stored = c.totalClaimed;
      // below what this worker claimed, even when the storage already says the chain's total (the chain
      // reconciliation set the record back first): claimed again in this pass
      const claimed = claimedTotal ? BigInt(claimedTotal) : BigInt(stored);
      if (onChain >= BigInt(stored) && onChain >= claimed) continue;
      const { channel } = await this.o.scheme
        .getStorage()
        .updateChannel(id, (cur) => (cur && BigInt(cur.totalClaimed) > onChain ? { ...cur, totalClaimed: onChain.toString() } : cur));
      if (channel) Object.assign(c, channel);
      report.reclaimed.push(id);
      this.o.log.warn({ channel: id, stored, onChain: onChain.toString() }, 'a channel claim was reorged out; claimed again');
    }
  }

  /**
   * Claims `batch` (one channel = one voucher, at most `maxClaimsPerBatch`) in one transaction; when that
   * fails (the facilitator's simulation, or a revert), the batch is halved and each half claimed the same
   * way, down to single channels: one channel the chain refuses (its deposit reorged out, a voucher above
   * its on-chain balance) costs about log2(batch) extra attempts and never holds up the others. A single
   * channel's failure goes to `report.failedClaims` and `errors`, logged with `alert: "channel_claim_failed"`;
   * its vouchers stay in storage and the next pass tries again. A claim whose transaction landed but whose
   * bookkeeping failed is harmless to resend: claims are cumulative.
   */
  private async claimIsolating(batch: Channel[], report: ChannelPassReport): Promise<void> {
    if (batch.length === 0) return;
    try {
      report.claims.push(...(await this.manager.claim({ selectClaimChannels: () => batch, maxClaimsPerBatch: this.o.maxClaimsPerBatch })));
      // watched until final: a claim reorged out is claimed again (repairReorgedClaims)
      // with the total each claim reached (its voucher's cumulative amount): a reorg taking it back is seen even
      // after the chain reconciliation set the record back to the chain's total
      const at = this.now();
      await this.o.redis.hset(
        channelKeys.recentClaims(this.o.keys),
        Object.fromEntries(batch.map((c) => [c.channelId.toLowerCase(), `${at}:${c.chargedCumulativeAmount}`])),
      );
    } catch (e) {
      const error = String((e as Error)?.message ?? e).slice(0, 300);
      if (batch.length === 1) {
        const channel = batch[0].channelId.toLowerCase();
        report.failedClaims.push({ channel, error });
        report.errors.push(`claim ${channel}: ${error}`);
        this.o.log.error(
          { alert: 'channel_claim_failed', channel, unclaimed: unclaimedOf(batch[0]).toString(), err: error },
          'a channel cannot be claimed (its on-chain state disagrees with storage); the other channels were claimed',
        );
        return;
      }
      const mid = Math.ceil(batch.length / 2);
      await this.claimIsolating(batch.slice(0, mid), report);
      await this.claimIsolating(batch.slice(mid), report);
    }
  }

  /** Runs {@link pass} every `checkIntervalSeconds` (never two at once in this process); errors are logged, the next pass retries. */
  start(checkIntervalSeconds: number = CHANNEL_SETTLEMENT_DEFAULTS.checkIntervalSeconds): void {
    if (this.timer) return;
    const tick = () => {
      if (this.running) return;
      this.running = this.pass()
        .catch((e: unknown) => this.o.log.error({ err: (e as Error).message?.slice(0, 300) }, 'channel pass failed; the next pass retries'))
        .finally(() => {
          this.running = undefined;
        });
    };
    this.timer = setInterval(tick, checkIntervalSeconds * 1000);
    this.timer.unref?.();
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
