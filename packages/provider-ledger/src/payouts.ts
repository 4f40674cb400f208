import { randomUUID } from 'node:crypto';
import { trackTreasuryTransfer, TransferWouldRevertError, type SignedTransfer, type TreasurySender } from '@acg/treasury';
import { releaseLease, takeLease, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PayoutRecord, ProviderLedger } from './ledger.js';
import { providerLedgerKeys } from './commands/keys.js';
import { payoutTransferData, reconcilePayoutsWithChain, type PayoutChainReport } from './payoutChain.js';

/** Test hooks of a payout pass: a throw stops that payout where it is, as a crash there would. */
export interface PayoutHooks {
  /** After the payout is reserved in Redis, before anything is signed. */
  afterReserve?(payout: PayoutRecord): void | Promise<void>;
  /** After the signed transfer is stored in the payout record, before it is broadcast. */
  afterSign?(payout: PayoutRecord, signed: SignedTransfer): void | Promise<void>;
}

/** What a payout pass needs. */
export interface PayoutPassOptions {
  ledger: ProviderLedger;
  redis: Redis;
  keys: RedisKeys;
  /** Sends the USDC transfers from the treasury (TREASURY_PRIVATE_KEY); without it nothing is reserved or sent (disputes and maturity still run). */
  sender?: TreasurySender;
  /** Smallest payout, integer USDC base units (PROVIDER_PAYOUT_MIN_USDC, default 1.00 = 1 000 000). */
  minimum: bigint;
  /** Open disputes older than this are resolved automatically, seconds (PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS, default 604800). */
  disputeAutoResolveSeconds: number;
  log: Logger;
  hooks?: PayoutHooks;
  /** Run only when the last completed pass is at least this old, seconds (the schedule); an on-demand pass leaves it unset. */
  dueEverySeconds?: number;
  /** Clock, unix ms (default `Date.now`). */
  now?: () => number;
}

/** One payout a pass finished. `amount` integer USDC base units. */
export interface PayoutDone {
  payout_id: string;
  provider_id: string;
  amount: bigint;
  tx_hash: `0x${string}` | null;
}

/** What one pass did. `ran` false: another process holds the pass lock, or the pass was not due. */
export interface PayoutPassReport {
  ran: boolean;
  /** disputes auto-resolved */
  disputes: { released: string[]; refunded: string[] };
  /** dispute refunds enqueued now (crash recovery of a resolution) */
  refundsEnqueued: string[];
  /** held entries that became available */
  matured: number;
  /** payouts mined (`sent`) */
  sent: PayoutDone[];
  /** payouts that reverted or would revert (`failed`, amount back to available) */
  failed: PayoutDone[];
  /** payouts left `reserved` for the next pass (RPC error, receipt timeout, a hook) */
  pending: string[];
  /** the reconciliation of payouts with the chain run before any payout (`reconcilePayoutsWithChain`), when a sender is configured and it ran */
  chain?: PayoutChainReport;
}

/**
 * Lease of the payout pass lock, ms: 30 s, renewed every 10 s while the pass runs (and checked
 * before each payout). A process that dies mid-pass stops renewing it, so the next tick after it
 * expires (at most 30 s + `tickSeconds`) runs the pass: a dead process delays payouts by at most
 * one interval (issue 33; it was a 10-minute lease, so no pass ran for 10 minutes).
 */
export const PAYOUT_PASS_LEASE_MS = 30_000;

/**
 * One payout pass (docs/decisions.md "Providers": money), under a Redis lease so one process of a deployment
 * runs at a time:
 * 1. open disputes older than `disputeAutoResolveSeconds` are resolved: `release` when the provider
 *    answered, `refund` when not; refunds of resolved disputes not yet enqueued are enqueued;
 * 2. held entries past their dispute window (undisputed) become available;
 * 3. payouts are reconciled with the chain (`reconcilePayoutsWithChain`: a tagged payout transfer
 *    Redis does not know as sent is recorded, so it is never paid twice; a `sent` one that is not
 *    on chain is sent again, once; each is tracked until final); a provider whose payout on chain
 *    cannot be recorded gets no new payout; if the chain cannot be read, nothing is sent this pass;
 * 4. payouts left `reserved` by an earlier pass are reconciled (see `TreasurySender.transferOnce`:
 *    receipt, else rebroadcast of the stored transaction, else re-signed only when its nonce went
 *    to another transaction);
 * 5. each provider's available balance of at least `minimum` is reserved (available → reserved,
 *    `pay_<ULID>`), signed (a USDC transfer tagged with the payout: `payoutTransferData`) and stored, broadcast, and on its receipt marked `sent` (reserved →
 *    paid); a reverted transfer is `failed` and its amount available again.
 *
 * @returns a {@link PayoutPassReport}; `ran: false` when another pass holds the lock or it is not due.
 * @throws {Error} Redis unavailable (nothing half-done: every step is atomic or reconciled next pass).
 */
export async function runPayoutPass(o: PayoutPassOptions): Promise<PayoutPassReport> {
  const report: PayoutPassReport = { ran: false, disputes: { released: [], refunded: [] }, refundsEnqueued: [], matured: 0, sent: [], failed: [], pending: [] };
  const now = o.now ?? Date.now;
  const leaseKey = providerLedgerKeys.providerPayoutPass(o.keys, 'lock');
  const holder = randomUUID();
  const lease = { leaseKey, holder, leaseMs: PAYOUT_PASS_LEASE_MS };
  if (!(await takeLease(o.redis, lease))) return report;
  // renewed on a timer, so a long step (a receipt wait, the send lock) never outlives it while this process lives
  let lost = false;
  const renew = setInterval(() => {
    takeLease(o.redis, lease).then(
      (held) => {
        if (!held) lost = true;
      },
      () => undefined,
    );
  }, PAYOUT_PASS_LEASE_MS / 3);
  renew.unref();
  try {
    const stateKey = providerLedgerKeys.providerPayoutPass(o.keys, 'state');
    if (o.dueEverySeconds !== undefined) {
      const last = Number((await o.redis.hget(stateKey, 'last_run_ms')) ?? 0);
      if (last + o.dueEverySeconds * 1000 > now()) return report;
    }
    report.ran = true;
    report.disputes = await o.ledger.autoResolveDisputes(o.disputeAutoResolveSeconds);
    report.refundsEnqueued = await o.ledger.enqueueDueRefunds();
    report.matured = await o.ledger.matureAll();
    if (o.sender) {
      // before each payout the lease is extended; a pass that lost it (this process stalled past the
      // lease and another pass took over) stops sending at once
      const stillHolding = async () => !lost && (await takeLease(o.redis, lease));
      // the chain first: a payout on chain that Redis lost is recorded (never paid twice), one that
      // left the chain is sent again; without that check this pass sends nothing
      try {
        report.chain = await reconcilePayoutsWithChain({ ledger: o.ledger, redis: o.redis, keys: o.keys, sender: o.sender, log: o.log });
      } catch (e) {
        o.log.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'payouts not reconciled with the chain; no payout is sent until they are');
        return report;
      }
      const blocked = new Set(report.chain.blocked);
      for (const payout of await o.ledger.reservedPayouts()) {
        if (!(await stillHolding())) return report;
        await sendPayout(o, o.sender, payout, report);
      }
      for (const providerId of await o.ledger.providers()) {
        if (!(await stillHolding())) return report;
        if (blocked.has(providerId)) continue;
        const payout = await o.ledger.reservePayout(providerId, o.minimum);
        if (!payout) continue;
        o.log.info({ payout_id: payout.payout_id, provider_id: providerId, amount: payout.amount.toString() }, 'payout reserved');
        try {
          await o.hooks?.afterReserve?.(payout);
        } catch (e) {
          report.pending.push(payout.payout_id);
          o.log.warn({ payout_id: payout.payout_id, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'payout interrupted after reservation');
          continue;
        }
        await sendPayout(o, o.sender, payout, report);
      }
    }
    await o.redis.hset(stateKey, 'last_run_ms', String(now()));
    return report;
  } finally {
    clearInterval(renew);
    await releaseLease(o.redis, { leaseKey, holder }).catch(() => undefined);
  }
}

async function sendPayout(o: PayoutPassOptions, sender: TreasurySender, payout: PayoutRecord, report: PayoutPassReport): Promise<void> {
  const done = (tx_hash: `0x${string}` | null): PayoutDone => ({
    payout_id: payout.payout_id,
    provider_id: payout.provider_id,
    amount: payout.amount,
    tx_hash,
  });
  try {
    const { hash, status } = await sender.transferOnce({
      to: payout.address,
      amount: payout.amount,
      record: o.ledger.payoutTransferRecord(payout.payout_id),
      // tagged with the payout: the chain itself says which payout a transfer is (payoutChain.ts)
      data: payoutTransferData(payout.address, payout.amount, payout.payout_id, payout.provider_id),
      hooks: { afterSign: (signed) => o.hooks?.afterSign?.(payout, signed) },
    });
    if (status === 'success') {
      await o.ledger.settlePayout(payout.payout_id, 'sent', hash);
      // watched until final: re-sent if its block is reorged out (@acg/payments finality.ts)
      await trackTreasuryTransfer(o.redis, o.keys, {
        kind: 'payout',
        id: payout.payout_id,
        txHash: hash,
        to: payout.address,
        amount: payout.amount.toString(),
        recordKey: o.ledger.payoutKey(payout.payout_id),
        data: payoutTransferData(payout.address, payout.amount, payout.payout_id, payout.provider_id),
      });
      report.sent.push(done(hash));
      o.log.info({ payout_id: payout.payout_id, provider_id: payout.provider_id, amount: payout.amount.toString(), tx_hash: hash }, 'payout sent');
    } else {
      await o.ledger.settlePayout(payout.payout_id, 'failed', hash);
      report.failed.push(done(hash));
      o.log.error({ payout_id: payout.payout_id, tx_hash: hash }, 'payout transfer reverted; amount available again');
    }
  } catch (e) {
    if (e instanceof TransferWouldRevertError) {
      await o.ledger.settlePayout(payout.payout_id, 'failed');
      report.failed.push(done(null));
      o.log.error({ payout_id: payout.payout_id, amount: payout.amount.toString() }, 'payout would revert (treasury balance too low?); amount available again');
      return;
    }
    report.pending.push(payout.payout_id);
    o.log.warn({ payout_id: payout.payout_id, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'payout not finished; reconciled by the next pass');
  }
}

/** What {@link startPayouts} needs: a pass's options and the schedule. */
export interface StartPayoutsOptions extends Omit<PayoutPassOptions, 'dueEverySeconds'> {
  /** Seconds between passes across all processes (PROVIDER_PAYOUT_INTERVAL_SECONDS, default 3600). */
  intervalSeconds: number;
  /** How often a process checks whether a pass is due, seconds (default min(intervalSeconds, 60)). */
  tickSeconds?: number;
}

/** The running schedule: `runNow()` runs one pass at once (under the same lock), `stop()` ends the schedule and waits for a running pass. */
export interface RunningPayouts {
  runNow(): Promise<PayoutPassReport>;
  stop(): Promise<void>;
}

/**
 * Schedules payout passes ({@link runPayoutPass}) every `intervalSeconds` across all processes that
 * call it: each process checks every `tickSeconds` (first at once) and runs a pass only if it wins
 * the pass lease and the last completed pass (`last_run_ms` in Redis) is at least
 * `intervalSeconds` old. So a deployment with many workers still pays out once per interval, and a
 * pass that failed (Redis or chain down) is retried at the next tick.
 *
 * @example
 * const payouts = startPayouts({ ledger, redis, keys, sender, minimum: 1_000_000n, disputeAutoResolveSeconds: 604_800, intervalSeconds: 3600, log })
 * await payouts.stop()
 */
export function startPayouts(o: StartPayoutsOptions): RunningPayouts {
  const tickMs = Math.max(1, o.tickSeconds ?? Math.min(o.intervalSeconds, 60)) * 1000;
  // passes of this process run one after another (the lease orders them across processes)
  let chain: Promise<unknown> = Promise.resolve();
  const serial = (dueEverySeconds?: number): Promise<PayoutPassReport> => {
    const p = chain.then(() => runPayoutPass({ ...o, dueEverySeconds }));
    chain = p.catch(() => undefined);
    return p;
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stopped) return;
    await serial(o.intervalSeconds).catch((e) =>
      o.log.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'payout pass failed; retried at the next tick'),
    );
    if (stopped) return;
    timer = setTimeout(() => void tick(), tickMs);
    timer.unref();
  };
  timer = setTimeout(() => void tick(), 0);
  timer.unref();
  return {
    runNow: () => serial(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await chain;
    },
  };
}
