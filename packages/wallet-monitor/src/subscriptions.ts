import type { SubscriptionStatus, WalletEventName, WalletMonitorDeliveryStats, WalletMonitorSubscription } from '@acg/schemas';
import type { SecretBox } from '@acg/secrets';
import type { RedisKeys } from '@acg/redis';
import { cancelSubscription, renewSubscription } from './commands/index.js';
import type { Redis } from 'ioredis';
import { getAddress } from 'viem';
import type { AddressIndex } from './addressIndex.js';
import { RENEWAL_MIN_BALANCE_BASE_UNITS, SUBSCRIPTION_TERM_SECONDS, type ChainName } from './config.js';
import { lastErrorOf } from './deliveryErrors.js';
import { SubscriptionForbiddenError, SubscriptionNotFoundError } from './errors.js';
import { newSubscriptionId, newWebhookSecret } from './ids.js';
import { accountKeys } from '@acg/accounts/commands';
import { walletMonitorKeys } from './commands/keys.js';

export type { SubscriptionStatus, WalletEventName };

/** What `POST /v1/wallet-monitor` asks for, already validated (addresses any valid case). */
export interface SubscriptionRequest {
  addresses: string[];
  chains: ChainName[];
  events: WalletEventName[];
  webhook_url: string;
  /** blocks mined on top of an event's block before it is delivered (0..64; default 0) */
  confirmations?: number;
}

/** A subscription as stored (the secret included: only the delivery worker reads it). Times in UNIX seconds. */
export interface SubscriptionRecord {
  id: string;
  /** checksummed owner (the bearer token's wallet) */
  owner: `0x${string}`;
  status: SubscriptionStatus;
  /** checksummed, deduplicated */
  addresses: `0x${string}`[];
  chains: ChainName[];
  events: WalletEventName[];
  webhook_url: string;
  /** blocks mined on top of an event's block before it is delivered (0 = at the watcher's depth) */
  confirmations: number;
  /** `whsec_...` */
  secret: string;
  created_at: number;
  expires_at: number;
  cancelled_at: number | null;
  renewals: number;
}

/** Delivery statistics: the wire schema `WalletMonitorDeliveryStats` (`billed` in integer USDC base units). */
export type DeliveryStats = WalletMonitorDeliveryStats;

/** `GET /v1/wallet-monitor/{id}`: the subscription without its secret, plus delivery stats (the wire schema `WalletMonitorSubscription`). */
export type SubscriptionView = WalletMonitorSubscription;

/** Options of {@link SubscriptionStore}. */
export interface SubscriptionStoreOptions {
  /** Seconds between creation/renewal and `expires_at` (default 30 days). */
  termSeconds?: number;
  /** Balance (integer USDC base units) the owner's metered account needs for a renewal (default 1000: one event). */
  renewalMinBalance?: bigint;
  /** Clock, UNIX seconds (tests). */
  now?: () => number;
  /** Encrypts signing secrets at rest (WEBHOOK_SECRET_KEY); without it they are stored as they are. */
  secretBox?: SecretBox;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Wallet-monitor subscriptions in Redis (docs/spec-notes.md 2.6, 3; docs/decisions.md "Wallet monitor"): a hash per
 * subscription (`wm:sub:<id>`), its delivery stats (`wm:sub:<id>:stats`), the owner's list
 * (`wm:owner:<address>`), an expiry set (`wm:expiry`) and the {@link AddressIndex}.
 *
 * Lifecycle: `active` from creation until `expires_at`; at expiry it renews by another term when
 * the owner's metered account holds at least `renewalMinBalance` (a renewal costs nothing),
 * otherwise it becomes `expired`; `cancel` by the owner makes it `cancelled` at once. Expired and
 * cancelled subscriptions leave the address index, so watchers stop matching them.
 */
export class SubscriptionStore {
  private readonly redis: Redis;
  private readonly termSeconds: number;
  private readonly renewalMinBalance: bigint;
  private readonly now: () => number;

  private readonly secretBox?: SecretBox;
  constructor(
    redis: Redis,
    private readonly keys: RedisKeys,
    private readonly index: AddressIndex,
    opts: SubscriptionStoreOptions = {},
  ) {
    this.redis = redis;
    this.termSeconds = opts.termSeconds ?? SUBSCRIPTION_TERM_SECONDS;
    this.secretBox = opts.secretBox;
    this.renewalMinBalance = opts.renewalMinBalance ?? RENEWAL_MIN_BALANCE_BASE_UNITS;
    this.now = opts.now ?? nowSeconds;
  }

  private subKey(id: string): string {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', id);
  }
  /** Key of a subscription's delivery stats hash. */
  statsKey(id: string): string {
    return walletMonitorKeys.walletMonitor(this.keys, 'sub', id, 'stats');
  }
  private expiryKey(): string {
    return walletMonitorKeys.walletMonitor(this.keys, 'expiry');
  }

  /**
   * Creates an active subscription for `owner` and indexes its addresses. The `webhook_url` must
   * already have passed `checkWebhookUrl`. Returns the id, `expires_at` (UNIX seconds) and the
   * signing secret, which is shown only here.
   */
  async create(owner: string, req: SubscriptionRequest): Promise<{ subscription_id: string; expires_at: number; secret: string }> {
    const id = newSubscriptionId();
    const secret = newWebhookSecret();
    const now = this.now();
    const expires_at = now + this.termSeconds;
    const addresses = [...new Set(req.addresses.map((a) => getAddress(a.toLowerCase())))];
    const chains = [...new Set(req.chains)];
    const events = [...new Set(req.events)];
    // The hash first, then the index: a watcher that matches the id always finds the record.
    await this.redis
      .multi()
      .hset(this.subKey(id), {
        id,
        owner: getAddress(owner),
        status: 'active',
        addresses: JSON.stringify(addresses),
        chains: chains.join(','),
        events: events.join(','),
        webhook_url: req.webhook_url,
        confirmations: req.confirmations ?? 0,
        secret: this.secretBox ? this.secretBox.seal(secret) : secret,
        created_at: now,
        expires_at,
        renewals: 0,
      })
      .zadd(this.expiryKey(), expires_at, id)
      .rpush(walletMonitorKeys.walletMonitor(this.keys, 'owner', owner.toLowerCase()), id)
      .exec();
    await this.index.add(id, chains, addresses);
    return { subscription_id: id, expires_at, secret };
  }

  /** The stored subscription (secret included), or undefined. */
  async get(id: string): Promise<SubscriptionRecord | undefined> {
    if (!/^sub_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) return undefined;
    const h = await this.redis.hgetall(this.subKey(id));
    if (!h.id) return undefined;
    return {
      id: h.id,
      owner: h.owner as `0x${string}`,
      status: h.status as SubscriptionStatus,
      addresses: JSON.parse(h.addresses) as `0x${string}`[],
      chains: h.chains.split(',').filter(Boolean) as ChainName[],
      events: h.events.split(',').filter(Boolean) as WalletEventName[],
      webhook_url: h.webhook_url,
      confirmations: Number(h.confirmations ?? 0),
      secret: this.openSecret(h.secret),
      created_at: Number(h.created_at),
      expires_at: Number(h.expires_at),
      cancelled_at: h.cancelled_at ? Number(h.cancelled_at) : null,
      renewals: Number(h.renewals ?? 0),
    };
  }

  /**
   * What the delivery worker and the watchers need, without the address list: status, owner,
   * events, chains, confirmations, URL and secret. Undefined when unknown.
   */
  async deliveryInfo(
    id: string,
  ): Promise<Pick<SubscriptionRecord, 'id' | 'owner' | 'status' | 'events' | 'chains' | 'confirmations' | 'webhook_url' | 'secret'> | undefined> {
    const [owner, status, events, chains, confirmations, webhook_url, secret] = await this.redis.hmget(
      this.subKey(id),
      'owner',
      'status',
      'events',
      'chains',
      'confirmations',
      'webhook_url',
      'secret',
    );
    if (!owner || !status) return undefined;
    return {
      id,
      owner: owner as `0x${string}`,
      status: status as SubscriptionStatus,
      events: (events ?? '').split(',').filter(Boolean) as WalletEventName[],
      chains: (chains ?? '').split(',').filter(Boolean) as ChainName[],
      confirmations: Number(confirmations ?? 0),
      webhook_url: webhook_url ?? '',
      secret: this.openSecret(secret ?? ''),
    };
  }

  private openSecret(stored: string): string {
    return this.secretBox && stored ? this.secretBox.open(stored) : stored;
  }

  /**
   * The owner's view of a subscription with its delivery stats and `last_error` (why the most
   * recent attempt failed, with a human message; null after a delivery). Throws
   * SubscriptionNotFoundError / SubscriptionForbiddenError.
   */
  async view(id: string, caller: string): Promise<SubscriptionView> {
    const rec = await this.owned(id, caller);
    const h = await this.redis.hgetall(this.statsKey(id));
    return {
      subscription_id: rec.id,
      status: rec.status,
      addresses: rec.addresses,
      chains: rec.chains,
      events: rec.events,
      webhook_url: rec.webhook_url,
      confirmations: rec.confirmations,
      created_at: rec.created_at,
      expires_at: rec.expires_at,
      cancelled_at: rec.cancelled_at,
      renewals: rec.renewals,
      delivery: statsOf(h),
      last_error: lastErrorOf(h),
    };
  }

  /** The subscription if `caller` owns it. Throws SubscriptionNotFoundError / SubscriptionForbiddenError. */
  async owned(id: string, caller: string): Promise<SubscriptionRecord> {
    const rec = await this.get(id);
    if (!rec) throw new SubscriptionNotFoundError(id);
    if (rec.owner.toLowerCase() !== caller.toLowerCase()) throw new SubscriptionForbiddenError(id);
    return rec;
  }

  /** Delivery statistics of a subscription (zeros when none yet). */
  async stats(id: string): Promise<DeliveryStats> {
    return statsOf(await this.redis.hgetall(this.statsKey(id)));
  }

  /**
   * Cancels a subscription (owner only, idempotent: a second cancel returns the first
   * `cancelled_at`) and removes it from the address index. Events already queued for it are
   * dropped by the delivery worker, not delivered. Throws SubscriptionNotFoundError / SubscriptionForbiddenError.
   */
  async cancel(id: string, caller: string): Promise<{ subscription_id: string; status: 'cancelled'; cancelled_at: number }> {
    if (!/^sub_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw new SubscriptionNotFoundError(id);
    const { result, cancelledAt: at } = await cancelSubscription(this.redis, {
      subscriptionKey: this.subKey(id),
      expiryKey: this.expiryKey(),
      caller,
      nowSeconds: this.now(),
      subscriptionId: id,
    });
    if (result === 'not_found') throw new SubscriptionNotFoundError(id);
    if (result === 'forbidden') throw new SubscriptionForbiddenError(id);
    const rec = await this.get(id);
    if (rec) await this.index.remove(id, rec.chains, rec.addresses);
    return { subscription_id: id, status: 'cancelled', cancelled_at: Number(at) };
  }

  /**
   * Renews or expires every subscription whose `expires_at` is at or before `now` (UNIX seconds,
   * default the clock): renewed by whole terms while the owner's metered account holds at least
   * `renewalMinBalance`, otherwise `expired` and removed from the address index. Atomic per
   * subscription (Lua `wm_renew_subscription`), so replicas may run it concurrently.
   */
  async renewDue(now = this.now(), batch = 500): Promise<{ renewed: string[]; expired: string[] }> {
    const renewed: string[] = [];
    const expired: string[] = [];
    for (;;) {
      const due = await this.redis.zrangebyscore(this.expiryKey(), '-inf', now, 'LIMIT', 0, batch);
      if (due.length === 0) break;
      for (const id of due) {
        const owner = (await this.redis.hget(this.subKey(id), 'owner')) ?? '0x0000000000000000000000000000000000000000';
        const { result } = await renewSubscription(this.redis, {
          subscriptionKey: this.subKey(id),
          accountKey: accountKeys.account(this.keys, owner),
          expiryKey: this.expiryKey(),
          nowSeconds: now,
          termSeconds: this.termSeconds,
          minBalance: this.renewalMinBalance,
          subscriptionId: id,
        });
        if (result === 'renewed') renewed.push(id);
        else if (result === 'expired') {
          expired.push(id);
          const rec = await this.get(id);
          if (rec) await this.index.remove(id, rec.chains, rec.addresses);
        }
      }
      if (due.length < batch) break;
    }
    return { renewed, expired };
  }
}

/** Delivery statistics from a subscription's stats hash (zeros when none yet). */
function statsOf(h: Record<string, string>): DeliveryStats {
  const n = (k: string) => Math.max(0, Number(h[k] ?? 0));
  return {
    events: n('events'),
    delivered: n('delivered'),
    pending: n('pending'),
    failed_attempts: n('failed_attempts'),
    dead_lettered: n('dead_lettered'),
    dropped: n('dropped'),
    removed: n('removed'),
    billed: h.billed ?? '0',
    last_delivery_at: h.last_delivery_at ?? null,
    last_status: h.last_status === undefined ? null : Number(h.last_status),
  };
}
