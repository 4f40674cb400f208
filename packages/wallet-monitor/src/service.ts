import type { SecretBox } from '@acg/secrets';
import { Ledger } from '@acg/accounts';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { AddressIndex } from './addressIndex.js';
import { CHAIN_NAMES, DEFAULT_RETRY_SCHEDULE_MS } from './config.js';
import type { WalletMonitorDeliveryAttempt, WalletMonitorTestEventQueued } from '@acg/schemas';
import { DeliveryQueue, type DeadLetter } from './delivery.js';
import { SubscriptionNotActiveError } from './errors.js';
import { testDelivery } from './testEvent.js';
import { SubscriptionStore, type SubscriptionRequest, type SubscriptionView } from './subscriptions.js';
import { checkWebhookUrl, type HostResolver, type UrlPolicy } from '@acg/net-guard';
import { ChainWatcher, type WatcherState } from './watcher.js';

/** Health of the wallet monitor (the gateway's `/status/health`): delivery latency, backlog, watchers. */
export interface WalletMonitorHealth {
  /** block confirmation (seen by the watcher) → 2xx answer, milliseconds */
  delivery_latency_ms: { p50: number | null; p99: number | null; samples: number };
  /** deliveries not finished: `waiting`, `delayed` (waiting for a retry), `active`; `dead_letters` in total */
  backlog: { waiting: number; delayed: number; active: number; dead_letters: number };
  watchers: WatcherState[];
}

/** Options of {@link WalletMonitorService}. */
export interface WalletMonitorServiceOptions {
  redis: Redis;
  /** BullMQ connection (`maxRetriesPerRequest: null`). */
  bullRedis: Redis;
  keys: RedisKeys;
  policy: UrlPolicy;
  retryScheduleMs?: readonly number[];
  termSeconds?: number;
  renewalMinBalance?: bigint;
  /** Encrypts webhook signing secrets at rest (see SecretBox). */
  secretBox?: SecretBox;
  /** DNS resolver used by the production SSRF check (tests). */
  resolveHost?: HostResolver;
}

/**
 * What the gateway's routes use (no watcher, no worker): create / view / cancel subscriptions,
 * list and replay dead letters, health. The watchers and the delivery worker run in
 * {@link startWalletMonitor}, usually in the worker process; both sides share Redis only.
 */
export class WalletMonitorService {
  readonly subscriptions: SubscriptionStore;
  readonly deliveries: DeliveryQueue;
  readonly index: AddressIndex;
  readonly ledger: Ledger;
  constructor(private readonly o: WalletMonitorServiceOptions) {
    this.index = new AddressIndex(o.redis, o.keys);
    this.subscriptions = new SubscriptionStore(o.redis, o.keys, this.index, {
      termSeconds: o.termSeconds,
      renewalMinBalance: o.renewalMinBalance,
      secretBox: o.secretBox,
    });
    this.deliveries = new DeliveryQueue(o.redis, o.keys, o.bullRedis, o.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS);
    this.ledger = new Ledger(o.redis, o.keys);
  }

  /**
   * `POST /v1/wallet-monitor`: checks the webhook URL (policy and SSRF), then creates the
   * subscription. Throws WebhookUrlError.
   */
  async subscribe(owner: string, req: SubscriptionRequest): Promise<{ subscription_id: string; expires_at: number; secret: string }> {
    const url = await checkWebhookUrl(req.webhook_url, this.o.policy, this.o.resolveHost);
    return this.subscriptions.create(owner, { ...req, webhook_url: url.toString() });
  }

  /** `GET /v1/wallet-monitor/{id}`. Throws SubscriptionNotFoundError / SubscriptionForbiddenError. */
  get(id: string, caller: string): Promise<SubscriptionView> {
    return this.subscriptions.view(id, caller);
  }

  /** `POST /v1/wallet-monitor/{id}/cancel`. */
  cancel(id: string, caller: string) {
    return this.subscriptions.cancel(id, caller);
  }

  /** `GET /v1/wallet-monitor/{id}/dead-letters`. */
  async deadLetters(id: string, caller: string, limit?: number): Promise<DeadLetter[]> {
    await this.subscriptions.owned(id, caller);
    return this.deliveries.deadLetters(id, limit);
  }

  /** `POST /v1/wallet-monitor/{id}/dead-letters/replay`. A cancelled subscription's dead letters are not replayed (its deliveries are dropped). */
  async replay(id: string, caller: string, webhookIds?: string[]): Promise<string[]> {
    await this.subscriptions.owned(id, caller);
    return this.deliveries.replay(id, webhookIds);
  }

  /**
   * `GET /v1/wallet-monitor/{id}/deliveries`: the most recent delivery attempts, newest first.
   * Throws SubscriptionNotFoundError / SubscriptionForbiddenError.
   */
  async deliveryAttempts(id: string, caller: string, limit?: number): Promise<WalletMonitorDeliveryAttempt[]> {
    await this.subscriptions.owned(id, caller);
    return this.deliveries.attempts(id, limit);
  }

  /**
   * `POST /v1/wallet-monitor/{id}/test-event`: queues a test event ({@link testDelivery}) through
   * the normal delivery path: signed with the subscription's secret, retried on the schedule,
   * dead-lettered after the last attempt, and billed 0.001 USDC when delivered (so an empty
   * account shows `insufficient_balance`, as a real event would). Throws
   * SubscriptionNotFoundError / SubscriptionForbiddenError, SubscriptionNotActiveError (cancelled
   * or expired).
   */
  async sendTestEvent(id: string, caller: string): Promise<WalletMonitorTestEventQueued> {
    const rec = await this.subscriptions.owned(id, caller);
    if (rec.status !== 'active') throw new SubscriptionNotActiveError(id, rec.status);
    const job = testDelivery(rec);
    await this.deliveries.enqueue([job]);
    return { subscription_id: id, webhook_id: job.webhookId, status: 'queued', event: job.event };
  }

  /** Delivery latency p50/p99, backlog and each chain watcher's last report. */
  async health(): Promise<WalletMonitorHealth> {
    const [delivery_latency_ms, backlog, watchers] = await Promise.all([
      this.deliveries.latency(),
      this.deliveries.backlog(),
      Promise.all(CHAIN_NAMES.map((c) => ChainWatcher.state(this.o.redis, this.o.keys, c))),
    ]);
    return { delivery_latency_ms, backlog, watchers: watchers.filter((w) => w.updated_at !== null) };
  }

  close(): Promise<void> {
    return this.deliveries.close();
  }
}
