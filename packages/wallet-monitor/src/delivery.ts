import { InsufficientBalanceError, type Ledger } from '@acg/accounts';
import { LatencySeries, type RedisKeys } from '@acg/redis';
import type { WalletEvent, WalletMonitorAttemptOutcome, WalletMonitorDeliveryAttempt } from '@acg/schemas';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createHmac } from 'node:crypto';
import type { UrlPolicy } from '@acg/net-guard';
import { DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_QUEUE, EVENT_PRICE_BASE_UNITS, WALLET_MONITOR_CAPABILITY_ID } from './config.js';
import { deliveryErrorMessage, LAST_ERROR_FIELDS } from './deliveryErrors.js';
import { DeliveryAttemptError } from './errors.js';
import { WebhookPoster } from './http.js';
import type { SubscriptionStore } from './subscriptions.js';
import { walletMonitorKeys } from './commands/keys.js';
import { claimDelivery } from './commands/index.js';

/** The webhook body (docs/decisions.md "Wallet monitor"; schema `WalletEvent`); amounts and block numbers are integer strings. */
export type WalletEventPayload = WalletEvent;

/** One queued delivery. */
export interface DeliveryJobData {
  webhookId: string;
  subscriptionId: string;
  event: WalletEventPayload;
  /** when the watcher saw the block at its confirmation depth, ms since epoch (latency origin) */
  observedAtMs: number;
  /** 0 for the first run; n for the n-th replay of a dead letter */
  generation: number;
  /** a test event (`POST /v1/wallet-monitor/{id}/test-event`): delivered and billed as any event, kept out of the latency samples */
  test?: boolean;
  /**
   * Set on a `removed: true` event: the webhook id of the event it takes back (a reorg removed
   * its transfer). Never billed; the original's price is credited back when it was delivered.
   */
  removes?: string;
  /**
   * Written by earlier versions (the price was debited for this run); now read from the ledger
   * (`Ledger.debited`), so a crash between the debit and this flag cannot lose a refund.
   */
  held?: boolean;
}

/** A dead-lettered event as stored and listed. `dead_lettered_at` in UNIX seconds. */
export interface DeadLetter {
  webhook_id: string;
  event: WalletEventPayload;
  attempts: number;
  last_status: number | null;
  last_error: string;
  dead_lettered_at: number;
}

interface StoredDeadLetter extends DeadLetter {
  observed_at_ms: number;
  generation: number;
}

/** One delivery attempt as stored in a subscription's attempt log (`wm:sub:<id>:attempts`, newest first). */
interface StoredAttempt {
  webhook_id: string;
  type: WalletEventPayload['type'];
  test: boolean;
  /** a `removed: true` event (absent in entries written before removed events existed) */
  removed?: boolean;
  attempt: number;
  replay: number;
  outcome: WalletMonitorAttemptOutcome;
  status: number | null;
  /** the failure's short reason; null when delivered or dropped */
  code: string | null;
  at: string;
}

/** Attempts kept in a subscription's attempt log. */
export const ATTEMPT_LOG_LENGTH = 100;

/** Days a delivered event's "already queued" marker is kept (re-reading a block within it never re-queues). */
const SEEN_TTL_SECONDS = 7 * 24 * 3600;
/** How long an event's `delivered` (billing reference) and `vanished` markers are kept: 30 days, as the ledger's references. */
export const EVENT_FATE_TTL_SECONDS = 30 * 24 * 3600;
/** Delivery latency samples kept for health (newest first). */
const LATENCY_WINDOW = 1000;
/** The `LatencySeries` name of delivery latency (block confirmation → 2xx), per minute. */
export const DELIVERY_LATENCY_SERIES = 'wallet_monitor.delivery';

/** Redis keys of the delivery side. */
export class DeliveryKeys {
  constructor(private readonly keys: RedisKeys) {}
  seen(webhookId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'seen', webhookId);
  }
  deadLetters(subscriptionId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', subscriptionId, 'dead');
  }
  deadLetterOrder(subscriptionId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', subscriptionId, 'dead', 'order');
  }
  deadLetterCount() {
    return walletMonitorKeys.walletMonitor(this.keys, 'dead', 'count');
  }
  latency() {
    return walletMonitorKeys.walletMonitor(this.keys, 'lat');
  }
  stats(subscriptionId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', subscriptionId, 'stats');
  }
  /** Set by the watcher when a reorg removed the event's transfer: no attempt of it may send any more. */
  vanished(webhookId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'vanished', webhookId);
  }
  /** Set while an attempt of the event is in flight (`wm_claim_delivery`). */
  sending(webhookId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'sending', webhookId);
  }
  /** The billing reference of the run that delivered the event (what a `removed` event credits back). */
  delivered(webhookId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'delivered', webhookId);
  }
  /** The subscription's last {@link ATTEMPT_LOG_LENGTH} delivery attempts (list of JSON, newest first). */
  attempts(subscriptionId: string) {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', subscriptionId, 'attempts');
  }
}

const signingKeys = new Map<string, Buffer>();

/**
 * The Standard Webhooks signature of one attempt: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 * keyed with the base64 bytes of the `whsec_` secret (what `standardwebhooks`' `Webhook.sign`
 * computes, with node:crypto's native HMAC instead of its JavaScript SHA-256).
 */
export function signWebhook(secret: string, webhookId: string, at: Date, body: string): string {
  let key = signingKeys.get(secret);
  if (!key) {
    if (signingKeys.size > 10_000) signingKeys.clear();
    key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
    signingKeys.set(secret, key);
  }
  return `v1,${createHmac('sha256', key)
    .update(`${webhookId}.${Math.floor(at.getTime() / 1000)}.${body}`)
    .digest('base64')}`;
}

/** BullMQ job options of a delivery: the retry schedule is a custom backoff, completed jobs are kept for de-duplication. */
function jobOptions(jobId: string, attempts: number) {
  return {
    jobId,
    attempts,
    backoff: { type: 'webhook_schedule' },
    removeOnComplete: { age: 7 * 24 * 3600, count: 200_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

/** BullMQ job id of a delivery run: the webhook id, plus `-r<n>` for the n-th replay (job ids may not contain `:`). */
export const deliveryJobId = (webhookId: string, generation: number) => (generation === 0 ? webhookId : `${webhookId}-r${generation}`);

/**
 * The producer side of deliveries (BullMQ queue `wallet-monitor-deliveries`): the watchers queue
 * matched events, the gateway lists and replays dead letters and reads the backlog.
 */
export class DeliveryQueue {
  readonly queue: Queue<DeliveryJobData>;
  private readonly k: DeliveryKeys;
  constructor(
    private readonly redis: Redis,
    keys: RedisKeys,
    connection: Redis,
    private readonly retryScheduleMs: readonly number[] = DEFAULT_RETRY_SCHEDULE_MS,
  ) {
    this.k = new DeliveryKeys(keys);
    this.queue = new Queue<DeliveryJobData>(DELIVERY_QUEUE, { connection, prefix: keys.bullPrefix() });
    this.queue.on('error', () => undefined); // a Redis outage surfaces as the failing add
  }

  /**
   * Queues events at most once each: events whose webhook id was queued before are skipped; the
   * rest are added with their webhook id as BullMQ job id (so a crash between adding and marking
   * is de-duplicated by BullMQ), then marked and counted in the subscription stats.
   * Returns how many were new.
   */
  async enqueue(jobs: DeliveryJobData[]): Promise<number> {
    if (jobs.length === 0) return 0;
    const seen = await this.redis.pipeline(jobs.map((j) => ['exists', this.k.seen(j.webhookId)])).exec();
    const fresh = jobs.filter((_, i) => seen?.[i]?.[1] === 0);
    if (fresh.length === 0) return 0;
    await this.queue.addBulk(fresh.map((data) => ({ name: 'deliver', data, opts: jobOptions(deliveryJobId(data.webhookId, 0), this.retryScheduleMs.length) })));
    const p = this.redis.pipeline();
    for (const j of fresh) p.set(this.k.seen(j.webhookId), '1', 'EX', SEEN_TTL_SECONDS, 'NX');
    const marked = (await p.exec()) ?? [];
    const counts = this.redis.pipeline();
    fresh.forEach((j, i) => {
      if (marked[i]?.[1] === 'OK') counts.hincrby(this.k.stats(j.subscriptionId), 'events', 1).hincrby(this.k.stats(j.subscriptionId), 'pending', 1);
    });
    await counts.exec();
    return fresh.length;
  }

  /** Dead letters of a subscription, oldest first (at most `limit`). */
  async deadLetters(subscriptionId: string, limit = 1000): Promise<DeadLetter[]> {
    const ids = await this.redis.zrange(this.k.deadLetterOrder(subscriptionId), 0, String(limit - 1));
    if (ids.length === 0) return [];
    const rows = await this.redis.hmget(this.k.deadLetters(subscriptionId), ...ids);
    return rows
      .filter((r): r is string => !!r)
      .map((r) => {
        const { observed_at_ms, generation, ...deadLetter } = JSON.parse(r) as StoredDeadLetter;
        return deadLetter;
      });
  }

  /**
   * Queues dead letters again (all of them, or those in `webhookIds`), each keeping its
   * `webhook-id`; the retry schedule starts over and the event is billed when delivered. A
   * replay job's id names the dead letter's generation, so two concurrent replays of one dead
   * letter queue it once. Returns the webhook ids queued; unknown ids are ignored.
   */
  async replay(subscriptionId: string, webhookIds?: string[]): Promise<string[]> {
    const ids = webhookIds ?? (await this.redis.zrange(this.k.deadLetterOrder(subscriptionId), 0, '-1'));
    if (ids.length === 0) return [];
    const rows = await this.redis.hmget(this.k.deadLetters(subscriptionId), ...ids);
    const replayed: string[] = [];
    for (const row of rows) {
      if (!row) continue;
      const d = JSON.parse(row) as StoredDeadLetter;
      const generation = d.generation + 1;
      await this.queue.add(
        'deliver',
        // a removed event stays one when replayed: not billed, its original credited back once
        {
          webhookId: d.webhook_id,
          subscriptionId,
          event: d.event,
          observedAtMs: d.observed_at_ms,
          generation,
          removes: d.event.removed ? d.event.original_webhook_id : undefined,
        },
        jobOptions(deliveryJobId(d.webhook_id, generation), this.retryScheduleMs.length),
      );
      const [, [, removed]] = (await this.redis
        .multi()
        .zrem(this.k.deadLetterOrder(subscriptionId), d.webhook_id)
        .hdel(this.k.deadLetters(subscriptionId), d.webhook_id)
        .exec()) as [unknown, [unknown, number]];
      if (removed === 1) {
        await this.redis
          .multi()
          .hincrby(this.k.stats(subscriptionId), 'dead_lettered', -1)
          .hincrby(this.k.stats(subscriptionId), 'pending', 1)
          .decr(this.k.deadLetterCount())
          .exec();
        replayed.push(d.webhook_id);
      }
    }
    return replayed;
  }

  /**
   * The subscription's most recent delivery attempts, newest first (at most `limit`, and at most
   * the last {@link ATTEMPT_LOG_LENGTH} are kept), each with its outcome and, when it failed, the
   * reason's code and human message.
   */
  async attempts(subscriptionId: string, limit = ATTEMPT_LOG_LENGTH): Promise<WalletMonitorDeliveryAttempt[]> {
    const rows = await this.redis.lrange(this.k.attempts(subscriptionId), 0, limit - 1);
    return rows.map((r) => {
      const { code, ...attempt } = JSON.parse(r) as StoredAttempt;
      return { ...attempt, removed: attempt.removed === true, error: code ? { code, message: deliveryErrorMessage(code) } : null };
    });
  }

  /** Jobs not yet finished (waiting, delayed for a retry, running) and dead letters in total. */
  async backlog(): Promise<{ waiting: number; delayed: number; active: number; dead_letters: number }> {
    const [counts, dead] = await Promise.all([
      this.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
      this.redis.get(this.k.deadLetterCount()),
    ]);
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      dead_letters: Math.max(0, Number(dead ?? 0)),
    };
  }

  /** Delivery latency (watcher confirmation → 2xx answer), milliseconds, nearest-rank p50/p99 over the newest samples. */
  async latency(): Promise<{ p50: number | null; p99: number | null; samples: number }> {
    const rows = await this.redis.lrange(this.k.latency(), 0, LATENCY_WINDOW - 1);
    if (rows.length === 0) return { p50: null, p99: null, samples: 0 };
    const ms = rows.map(Number).sort((a, b) => a - b);
    const rank = (q: number) => ms[Math.min(ms.length - 1, Math.max(0, Math.ceil(q * ms.length) - 1))];
    return { p50: rank(0.5), p99: rank(0.99), samples: ms.length };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/**
 * Told of each delivery attempt (metrics: `DeliveryMetrics` of @acg/observability): `delivered`
 * (2xx), `failed` (an attempt that is retried), `dead_lettered` (after the last attempt), `dropped`
 * (cancelled or unknown subscription). Called synchronously; must not throw or block.
 */
export interface DeliveryObserver {
  delivery(outcome: 'delivered' | 'failed' | 'dead_lettered' | 'dropped'): void;
}

/** Options of {@link startDeliveryWorker}. */
export interface DeliveryWorkerOptions {
  redis: Redis;
  keys: RedisKeys;
  /** BullMQ connection (`maxRetriesPerRequest: null`). */
  connection: Redis;
  subscriptions: SubscriptionStore;
  ledger: Ledger;
  policy: UrlPolicy;
  /** delay before each attempt, ms (default: the schedule of docs/decisions.md "Wallet monitor"); its length is the number of attempts */
  retryScheduleMs?: readonly number[];
  /** parallel deliveries (default 64) */
  concurrency?: number;
  /** per-attempt timeout, ms (default 10 000) */
  timeoutMs?: number;
  log: Logger;
  /** Told of each attempt's outcome (metrics). */
  observer?: DeliveryObserver;
}

/** A running delivery worker. */
export interface DeliveryWorker {
  worker: Worker<DeliveryJobData>;
  close(): Promise<void>;
}

/**
 * The delivery worker (BullMQ): signs each event with the subscription's secret (Standard
 * Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<HMAC-SHA256>`) and POSTs it.
 *
 * Per attempt: a cancelled or unknown subscription drops the event (its held price is refunded);
 * the event's price (0.001 USDC) is debited from the owner's metered account once per run of the
 * event (Ledger reference = webhook id, or `<webhook id>-r<n>` for a replay) and held while it is
 * retried; a 2xx answer marks it delivered (billed); anything else is a failed attempt retried
 * on the schedule; after the last attempt it is dead-lettered and the held price is credited
 * back. A `removed` event (`removes` set: a reorg took a delivered event's transfer out of the
 * chain) is not billed; it credits the original's price back once (reference of the run that
 * delivered it) and is sent only when the original was delivered; an event marked vanished is
 * dropped at its next attempt (`wm_claim_delivery`). So the account pays exactly 0.001 USDC per
 * delivered event still on chain. An account that cannot pay
 * makes the attempt fail with `insufficient_balance` (nothing is sent), so it is retried too.
 */
export function startDeliveryWorker(o: DeliveryWorkerOptions): DeliveryWorker {
  const schedule = o.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  const k = new DeliveryKeys(o.keys);
  const poster = new WebhookPoster(o.policy, o.timeoutMs ?? 10_000, o.concurrency ?? 64);
  const item = WALLET_MONITOR_CAPABILITY_ID;
  const billingRef = (d: DeliveryJobData) => deliveryJobId(d.webhookId, d.generation);

  /** The attempt-log entry of this attempt (newest first, capped). */
  const logAttempt = (job: Job<DeliveryJobData>, outcome: WalletMonitorAttemptOutcome, failure?: DeliveryAttemptError, status?: number): string => {
    const d = job.data;
    const entry: StoredAttempt = {
      webhook_id: d.webhookId,
      type: d.event.type,
      test: d.test === true,
      removed: d.removes !== undefined,
      attempt: job.attemptsMade + 1,
      replay: d.generation,
      outcome,
      status: failure ? failure.status : (status ?? null),
      code: failure ? failure.reason : null,
      at: new Date().toISOString(),
    };
    return JSON.stringify(entry);
  };

  /** Credits back the price held for this run, if it was debited (idempotent: the credit's reference is the run's). */
  const refundHeld = async (job: Job<DeliveryJobData>, owner: string) => {
    if (!(await o.ledger.debited(owner, billingRef(job.data)))) return;
    await o.ledger.credit(owner, EVENT_PRICE_BASE_UNITS, `refund:${item}`, billingRef(job.data));
  };

  const sendingTtlMs = (o.timeoutMs ?? 10_000) * 2 + 5_000;

  /**
   * A `removed` event's first step: waits for an attempt of the original still in flight, then
   * credits back the original's price when it was delivered (once: the credit's reference is the
   * billing reference of the run that delivered it, the one a dead letter's refund would use).
   * Returns whether the original was delivered (else the removed event is not sent).
   */
  const takeBack = async (d: DeliveryJobData, owner: string | undefined): Promise<boolean> => {
    const original = d.removes!;
    const waitUntil = Date.now() + sendingTtlMs;
    while ((await o.redis.exists(k.sending(original))) === 1 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 100));
    const ref = await o.redis.get(k.delivered(original));
    if (!ref) return false;
    if (owner) {
      const { applied } = await o.ledger.credit(owner, EVENT_PRICE_BASE_UNITS, `refund:${item}`, ref);
      if (applied)
        await o.redis
          .multi()
          .hincrby(k.stats(d.subscriptionId), 'billed', -Number(EVENT_PRICE_BASE_UNITS))
          .hincrby(k.stats(d.subscriptionId), 'removed', 1)
          .exec();
    }
    return true;
  };

  /** Drops the event (not sent; its held price, if any, refunded): a cancelled or unknown subscription, or a reorg removed it. */
  const drop = async (job: Job<DeliveryJobData>, owner: string | undefined) => {
    const d = job.data;
    const stats = k.stats(d.subscriptionId);
    if (owner) await refundHeld(job, owner);
    await o.redis
      .multi()
      .hincrby(stats, 'pending', -1)
      .hincrby(stats, 'dropped', 1)
      .lpush(k.attempts(d.subscriptionId), logAttempt(job, 'dropped'))
      .ltrim(k.attempts(d.subscriptionId), 0, ATTEMPT_LOG_LENGTH - 1)
      .exec();
    o.observer?.delivery('dropped');
  };

  const process = async (job: Job<DeliveryJobData>) => {
    const d = job.data;
    const stats = k.stats(d.subscriptionId);
    const sub = await o.subscriptions.deliveryInfo(d.subscriptionId);
    // a removed event: the vanished original is never charged, whatever becomes of this one
    const originalDelivered = d.removes ? await takeBack(d, sub?.owner) : undefined;
    if (originalDelivered === false) {
      await drop(job, sub?.owner);
      return 'dropped_never_delivered';
    }
    if (!sub || sub.status === 'cancelled') {
      await drop(job, sub?.owner);
      return sub ? 'dropped_cancelled' : 'dropped_unknown';
    }

    // an event of the chain (not a test, not a removed event) is sent only while it is on chain
    const claims = !d.test && !d.removes;
    if (
      claims &&
      (await claimDelivery(o.redis, { vanishedKey: k.vanished(d.webhookId), sendingKey: k.sending(d.webhookId), ttlMs: sendingTtlMs })) === 'vanished'
    ) {
      await drop(job, sub.owner);
      return 'dropped_vanished';
    }

    let failure: DeliveryAttemptError | undefined;
    try {
      // a removed event is not billed
      if (!d.removes) await o.ledger.debit(sub.owner, EVENT_PRICE_BASE_UNITS, item, billingRef(d));
    } catch (e) {
      if (claims) await o.redis.del(k.sending(d.webhookId));
      if (!(e instanceof InsufficientBalanceError)) throw e;
      failure = new DeliveryAttemptError(null, 'insufficient_balance');
    }

    if (!failure) {
      const body = JSON.stringify(d.event);
      const now = new Date();
      const signature = signWebhook(sub.secret, d.webhookId, now, body);
      const res = await poster.post(sub.webhook_url, body, {
        'webhook-id': d.webhookId,
        'webhook-timestamp': Math.floor(now.getTime() / 1000).toString(),
        'webhook-signature': signature,
      });
      if (res.ok) {
        const latencyMs = Date.now() - d.observedAtMs;
        const m = o.redis
          .multi()
          .hincrby(stats, 'delivered', 1)
          .hincrby(stats, 'pending', -1)
          .hincrby(stats, 'billed', d.removes ? 0 : Number(EVENT_PRICE_BASE_UNITS))
          .hset(stats, 'last_delivery_at', new Date().toISOString(), 'last_status', res.status)
          .hdel(stats, ...LAST_ERROR_FIELDS)
          .lpush(k.attempts(d.subscriptionId), logAttempt(job, 'delivered', undefined, res.status))
          .ltrim(k.attempts(d.subscriptionId), 0, ATTEMPT_LOG_LENGTH - 1);
        // the run that delivered it: what a later `removed` event credits back (same MULTI, so it is never lost)
        if (claims) m.set(k.delivered(d.webhookId), billingRef(d), 'EX', EVENT_FATE_TTL_SECONDS).del(k.sending(d.webhookId));
        // a test or removed event measures no watcher → receiver path: kept out of the latency samples
        if (!d.test && !d.removes) {
          m.lpush(k.latency(), latencyMs.toFixed(1)).ltrim(k.latency(), 0, LATENCY_WINDOW - 1);
          // the same sample per minute, for the /status charts (the health document's wallet-monitor latency is this one)
          LatencySeries.append(m, o.keys, DELIVERY_LATENCY_SERIES, latencyMs, true);
        }
        await m.exec();
        o.observer?.delivery('delivered');
        return 'delivered';
      }
      failure = new DeliveryAttemptError(res.status, res.reason ?? 'network_error');
      if (claims) await o.redis.del(k.sending(d.webhookId));
    }

    const attempts = job.opts.attempts ?? 1;
    const final = job.attemptsMade + 1 >= attempts;
    const m = o.redis
      .multi()
      .hincrby(stats, 'failed_attempts', 1)
      .hset(stats, 'last_error_code', failure.reason, 'last_error_status', failure.status ?? '', 'last_error_at', new Date().toISOString())
      .lpush(k.attempts(d.subscriptionId), logAttempt(job, final ? 'dead_lettered' : 'failed', failure))
      .ltrim(k.attempts(d.subscriptionId), 0, ATTEMPT_LOG_LENGTH - 1);
    // `last_status` is the receiver's answer: an attempt that sent nothing (insufficient balance) leaves it alone
    if (failure.status !== null) m.hset(stats, 'last_status', failure.status);
    await m.exec();
    if (!final) {
      o.observer?.delivery('failed');
      throw failure; // BullMQ retries after schedule[attemptsMade + 1]
    }
    await deadLetter(job, sub.owner, job.attemptsMade + 1, failure);
    o.observer?.delivery('dead_lettered');
    return 'dead_lettered';
  };

  /** Stores the dead letter (once), updates the stats and refunds the held price. */
  const deadLetter = async (job: Job<DeliveryJobData>, owner: string, attemptsMade: number, failure: DeliveryAttemptError) => {
    const d = job.data;
    const stats = k.stats(d.subscriptionId);
    const dead: StoredDeadLetter = {
      webhook_id: d.webhookId,
      event: d.event,
      attempts: attemptsMade,
      last_status: failure.status,
      last_error: failure.reason,
      dead_lettered_at: Math.floor(Date.now() / 1000),
      observed_at_ms: d.observedAtMs,
      generation: d.generation,
    };
    const [, [, added]] = (await o.redis
      .multi()
      .hset(k.deadLetters(d.subscriptionId), d.webhookId, JSON.stringify(dead))
      .zadd(k.deadLetterOrder(d.subscriptionId), 'NX', Date.now(), d.webhookId)
      .exec()) as [unknown, [unknown, number]];
    if (added === 1) {
      await o.redis.multi().hincrby(stats, 'dead_lettered', 1).hincrby(stats, 'pending', -1).incr(k.deadLetterCount()).exec();
    }
    await refundHeld(job, owner);
    o.log.warn({ webhook_id: d.webhookId, subscription_id: d.subscriptionId, reason: failure.reason }, 'webhook dead-lettered');
  };

  const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE, process, {
    connection: o.connection,
    prefix: o.keys.bullPrefix(),
    concurrency: o.concurrency ?? 64,
    settings: { backoffStrategy: (attemptsMade: number) => schedule[Math.min(attemptsMade, schedule.length - 1)] ?? 0 },
  });
  worker.on('failed', (job, err) => {
    if (err instanceof DeliveryAttemptError || !job) return;
    o.log.error({ jobId: job.id, err: String(err.message).slice(0, 200) }, 'delivery job error');
    // An unexpected error (e.g. Redis) on the last attempt: keep the event as a dead letter, never lose it.
    if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
      void o.subscriptions
        .deliveryInfo(job.data.subscriptionId)
        .then(async (sub) => {
          if (!sub) return;
          const failure = new DeliveryAttemptError(null, 'internal_error');
          await o.redis
            .multi()
            .hset(k.stats(job.data.subscriptionId), 'last_error_code', failure.reason, 'last_error_status', '', 'last_error_at', new Date().toISOString())
            .exec();
          await deadLetter(job, sub.owner, job.attemptsMade, failure);
        })
        .catch((e) => o.log.error({ jobId: job.id, err: String(e.message).slice(0, 200) }, 'could not dead-letter'));
    }
  });
  worker.on('error', (err) => o.log.error({ err: String(err.message).slice(0, 200) }, 'delivery worker error'));
  return {
    worker,
    async close() {
      await worker.close();
      await poster.close();
    },
  };
}
