import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { ChainName } from './config.js';
import { walletMonitorKeys } from './commands/keys.js';

/** How many index changes the change stream keeps; a reader further behind than this rebuilds its cache. */
const CHANGE_STREAM_MAXLEN = 10_000;

/**
 * The address index (writer side): one Redis set per chain and address holding the ids of the
 * active subscriptions that watch it (`wm:idx:<chain>:<address>`), so a watcher finds the
 * subscribers of an address with one lookup instead of scanning subscriptions. Every change is
 * also appended to a change stream (`wm:changes`, with a sequence number) that readers use to
 * invalidate their in-memory caches.
 */
export class AddressIndex {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** Key of the set of subscription ids watching `address` (any case) on `chain`. */
  key(chain: ChainName, address: string): string {
    return walletMonitorKeys.walletMonitor(this.keys, 'idx', chain, address.toLowerCase());
  }

  /** Adds `subscriptionId` under every chain × address (atomic with its change record). */
  add(subscriptionId: string, chains: readonly ChainName[], addresses: readonly string[]): Promise<void> {
    return this.change('add', subscriptionId, chains, addresses);
  }

  /** Removes `subscriptionId` from every chain × address (atomic with its change record). */
  remove(subscriptionId: string, chains: readonly ChainName[], addresses: readonly string[]): Promise<void> {
    return this.change('remove', subscriptionId, chains, addresses);
  }

  private async change(op: 'add' | 'remove', subscriptionId: string, chains: readonly ChainName[], addresses: readonly string[]): Promise<void> {
    const lower = [...new Set(addresses.map((a) => a.toLowerCase()))];
    const seq = await this.redis.incr(walletMonitorKeys.walletMonitor(this.keys, 'changes', 'seq'));
    const m = this.redis.multi();
    for (const chain of chains) {
      for (const a of lower) {
        if (op === 'add') m.sadd(this.key(chain, a), subscriptionId);
        else m.srem(this.key(chain, a), subscriptionId);
      }
    }
    m.xadd(
      walletMonitorKeys.walletMonitor(this.keys, 'changes'),
      'MAXLEN',
      '~',
      CHANGE_STREAM_MAXLEN,
      '*',
      'seq',
      seq,
      'op',
      op,
      'sub',
      subscriptionId,
      'chains',
      chains.join(','),
      'addrs',
      lower.join(','),
    );
    await m.exec();
  }
}

/**
 * The address index (reader side, one per watcher process): an in-memory cache of address →
 * subscription ids (misses read in one pipeline and are cached too, including "nobody watches
 * this"), invalidated from the change stream before every block. A reader that finds a gap in the
 * sequence numbers (it fell behind the stream's length) drops its whole cache.
 */
export class AddressMatcher {
  private readonly cache = new Map<string, string[]>();
  private lastId = '0-0';
  private lastSeq = -1;
  private readonly listeners: ((subscriptionIds: string[]) => void)[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly index: AddressIndex,
    /** cache entries kept before the cache is cleared (bounded memory) */
    private readonly maxEntries = 500_000,
  ) {}

  /** Called with the subscription ids named by new change records (e.g. to drop cached subscription data). */
  onChange(listener: (subscriptionIds: string[]) => void): void {
    this.listeners.push(listener);
  }

  /** Reads change records since the last call and invalidates what they name. */
  async sync(): Promise<void> {
    const streamKey = walletMonitorKeys.walletMonitor(this.keys, 'changes');
    if (this.lastSeq < 0) {
      // First sync: start after the newest record; the (empty) cache needs no invalidation.
      const [last, seq] = await Promise.all([
        this.redis.xrevrange(streamKey, '+', '-', 'COUNT', 1),
        this.redis.get(walletMonitorKeys.walletMonitor(this.keys, 'changes', 'seq')),
      ]);
      this.lastId = last[0]?.[0] ?? '0-0';
      this.lastSeq = Number(last[0] ? fieldOf(last[0][1], 'seq') : (seq ?? 0));
      return;
    }
    for (;;) {
      const res = (await this.redis.xread('COUNT', 1000, 'STREAMS', streamKey, this.lastId)) as [string, [string, string[]][]][] | null;
      const entries = res?.[0]?.[1] ?? [];
      if (entries.length === 0) return;
      const touched = new Set<string>();
      for (const [id, fields] of entries) {
        const seq = Number(fieldOf(fields, 'seq'));
        if (seq > this.lastSeq + 1) this.cache.clear(); // a gap: records we never saw were trimmed or raced
        this.lastSeq = Math.max(this.lastSeq, seq);
        this.lastId = id;
        const chains = fieldOf(fields, 'chains').split(',').filter(Boolean);
        for (const a of fieldOf(fields, 'addrs').split(',').filter(Boolean)) for (const c of chains) this.cache.delete(`${c}:${a}`);
        touched.add(fieldOf(fields, 'sub'));
      }
      for (const l of this.listeners) l([...touched]);
      if (entries.length < 1000) return;
    }
  }

  /** Subscription ids watching each of `addresses` (lowercase) on `chain`; addresses nobody watches are absent. */
  async match(chain: ChainName, addresses: Iterable<string>): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const misses: string[] = [];
    for (const a of new Set(addresses)) {
      const hit = this.cache.get(`${chain}:${a}`);
      if (hit === undefined) misses.push(a);
      else if (hit.length > 0) out.set(a, hit);
    }
    if (misses.length > 0) {
      if (this.cache.size + misses.length > this.maxEntries) this.cache.clear();
      const p = this.redis.pipeline();
      for (const a of misses) p.smembers(this.index.key(chain, a));
      const res = (await p.exec()) ?? [];
      misses.forEach((a, i) => {
        const [err, ids] = res[i] as [Error | null, string[]];
        if (err) throw err;
        this.cache.set(`${chain}:${a}`, ids);
        if (ids.length > 0) out.set(a, ids);
      });
    }
    return out;
  }

  /** Number of cached entries (tests, metrics). */
  get size(): number {
    return this.cache.size;
  }
}

function fieldOf(fields: string[], name: string): string {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return '';
}
