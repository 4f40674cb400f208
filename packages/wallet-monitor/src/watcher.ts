import type { RedisKeys } from '@acg/redis';
import { takeLease } from '@acg/redis';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { getAddress, webSocket, type PublicClient } from 'viem';
import type { AddressMatcher } from './addressIndex.js';
import { DEFAULT_CONFIRMATIONS, type ChainName } from './config.js';
import { DeliveryKeys, EVENT_FATE_TTL_SECONDS, type DeliveryJobData, type DeliveryQueue, type WalletEventPayload } from './delivery.js';
import {
  erc20TransfersFromLogs,
  nativeTransfersFromParityTraces,
  nativeTransfersFromTraces,
  nativeTransfersFromTransactions,
  TRANSFER_TOPIC,
  type LogEntry,
  type ParityTrace,
  type RawTransfer,
  type TxTrace,
} from './detect.js';
import { reissuedWebhookId, removedWebhookId, webhookId } from './ids.js';
import type { SubscriptionStore, WalletEventName } from './subscriptions.js';
import { NATIVE_ASSET, TokenMetadata } from './tokens.js';
import { walletMonitorKeys } from './commands/keys.js';

/**
 * Where native ETH transfers come from, best first (tried in this order under `traces: 'auto'`):
 * - `trace_block`: OpenEthereum-style traces (anvil, Erigon, Reth, Nethermind): top-level and
 *   internal value transfers, failed frames skipped; checked against the block hash;
 * - `debug_trace`: `debug_traceBlockByHash` with the callTracer (geth): the same transfers, but a
 *   node re-executes the block for it (on anvil about 4 s for 200 transactions);
 * - `transactions`: the block's transactions with a value whose receipt succeeded; internal
 *   transfers are not seen.
 */
export type NativeSource = 'trace_block' | 'debug_trace' | 'transactions';

/** Options of {@link ChainWatcher}. */
export interface ChainWatcherOptions {
  chain: ChainName;
  client: PublicClient;
  redis: Redis;
  keys: RedisKeys;
  matcher: AddressMatcher;
  subscriptions: SubscriptionStore;
  queue: DeliveryQueue;
  log: Logger;
  /** Blocks deep a block must be before its events go out (1 = the head). Default: 1 on anvil, else DEFAULT_CONFIRMATIONS. */
  confirmations?: number;
  /** ms between head polls when idle (default 200); with a live head subscription polling is only the safety net. */
  pollIntervalMs?: number;
  /**
   * WebSocket JSON-RPC URL for an `eth_subscribe` `newHeads` subscription: each new head wakes the
   * watcher at once instead of at the next poll. Without it, or while the socket is down, the
   * watcher polls every `pollIntervalMs`.
   */
  wsUrl?: string;
  /** `auto` (default): `trace_block`, else `debug_traceBlockByHash`, else transactions; `off`: transactions only; or a source to force. */
  traces?: 'auto' | 'off' | NativeSource;
  /** Blocks kept for reorg detection (default 256). */
  historyBlocks?: number;
  /** Lease time, ms, of the per-chain lease that keeps one active watcher per chain across replicas (default 15 000). */
  leaseMs?: number;
}

/** The persisted position of a watcher: the last block whose events were queued. */
export interface WatcherCursor {
  number: bigint;
  hash: `0x${string}`;
}

/** A block header as a `newHeads` notification carries it. */
interface HeadHint {
  number: bigint;
  hash: `0x${string}`;
  parentHash: `0x${string}`;
}

/** Where a watcher learns of new heads: `subscription` while its `newHeads` subscription is live, else `polling`. */
export type HeadSource = 'subscription' | 'polling';

/** What a watcher last reported (`wm:watcher:<chain>`), shown in health. */
export interface WatcherState {
  chain: ChainName;
  head: string | null;
  last_processed_block: string | null;
  confirmations: number | null;
  native_source: NativeSource | null;
  reorgs: number;
  updated_at: string | null;
}

interface SubMeta {
  status: string;
  events: WalletEventName[];
  chains: ChainName[];
  confirmations: number;
  at: number;
}

/** A matched event and the depth its subscription asks for before delivery. */
interface MatchedEvent {
  job: DeliveryJobData;
  confirmations: number;
}

/** An event queued from a block a reorg dropped, waiting for the re-scan to find it again (`wm:reorged:<chain>`). */
interface ReorgedEvent {
  job: DeliveryJobData;
  /** the dropped chain's last processed height: decided once the re-scan reaches it */
  until: string;
}

/** Days a block's record of queued events (`wm:emitted:<chain>:<block hash>`) is kept for reorgs. */
const EMITTED_TTL_SECONDS = 7 * 24 * 3600;

const SUB_META_TTL_MS = 60_000;

interface TxLite {
  hash: `0x${string}`;
  from: `0x${string}`;
  to: `0x${string}` | null;
  value: bigint;
}

/**
 * Follows one chain (docs/decisions.md "Wallet monitor"): polls the head, and for every block that reached
 * the confirmation depth, in order, checks that its parent hash is the hash it processed last
 * (else a reorg: it walks back to the last common block and goes on from there, so a dropped
 * block produces nothing and the replacement blocks are read instead), reads ERC-20 `Transfer`
 * logs by block hash and native transfers (traces by block hash, or transactions), matches
 * `from`/`to` through the {@link AddressMatcher}, queues one delivery per (event, subscription),
 * and only then moves its cursor (`wm:cursor:<chain>`, number + hash). A restart resumes after
 * the cursor: no gap, and a block read twice queues nothing new (webhook ids are deterministic).
 * Events of a subscription with `confirmations` wait in `wm:held:<chain>` until that many blocks
 * are on top of theirs; events queued from a block a reorg dropped and not found again by the
 * re-scan get a `removed: true` event (packages/wallet-monitor README "Reorgs and confirmations").
 */
export class ChainWatcher {
  readonly chain: ChainName;
  private readonly redis: Redis;
  private readonly tokens: TokenMetadata;
  private readonly deliveryKeys: DeliveryKeys;
  private readonly subMeta = new Map<string, SubMeta>();
  private readonly leaseToken = randomUUID();
  private nativeSource: NativeSource | undefined;
  private confirmations: number | undefined;
  private stopped = true;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** a head arrived since the last tick began (so the loop ticks again instead of sleeping) */
  private woken = false;
  /** the newest head notified by the subscription and not yet used by a tick */
  private hint: HeadHint | undefined;
  private unsubscribe?: () => void;
  private socketTransport?: NonNullable<ReturnType<ReturnType<typeof webSocket>>['value']>;
  private subscriptionLive = false;
  private resubscribeTimer?: NodeJS.Timeout;
  private reorgs = 0;
  /** `o.log` with `component: watcher` and `chain` bound once (lines never repeat them). */
  private readonly log: Logger;

  constructor(private readonly o: ChainWatcherOptions) {
    this.chain = o.chain;
    this.log = o.log.child({ component: 'watcher', chain: o.chain });
    this.redis = o.redis;
    this.tokens = new TokenMetadata(o.redis, o.keys, o.chain, o.client);
    this.deliveryKeys = new DeliveryKeys(o.keys);
    this.confirmations = o.confirmations;
    if (o.traces === 'off') this.nativeSource = 'transactions';
    else if (o.traces && o.traces !== 'auto') this.nativeSource = o.traces;
    o.matcher.onChange((ids) => {
      for (const id of ids) this.subMeta.delete(id);
    });
  }

  private cursorKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'cursor', this.chain);
  }
  private historyKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'blocks', this.chain);
  }
  private stateKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'watcher', this.chain);
  }
  /** Sorted set of held webhook ids (score: the height at which they are deep enough). */
  private heldKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'held', this.chain);
  }
  /** Hash of held events: webhook id → delivery job (JSON). */
  private heldJobsKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'held', this.chain, 'jobs');
  }
  /** Hash of the events queued from one block: webhook id → delivery job (JSON). */
  private emittedKey(blockHash: string) {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'emitted', this.chain, blockHash.toLowerCase());
  }
  /** Hash of events from dropped blocks not yet found again: webhook id → {@link ReorgedEvent} (JSON). */
  private reorgedKey() {
    return walletMonitorKeys.walletMonitor(this.o.keys, 'reorged', this.chain);
  }

  /** Starts following the chain (resolves once the loop runs). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    if (this.confirmations === undefined) {
      const version = String(await this.o.client.request({ method: 'web3_clientVersion' }).catch(() => ''));
      this.confirmations = /anvil/i.test(version) ? 1 : DEFAULT_CONFIRMATIONS[this.chain];
    }
    this.subscribe();
    this.loop = this.run();
  }

  /** Where new heads come from right now (`subscription` while the `newHeads` subscription is live). */
  get headSource(): HeadSource {
    return this.subscriptionLive ? 'subscription' : 'polling';
  }

  /**
   * Subscribes to `newHeads` over WebSocket (when a `wsUrl` is configured). Each notification
   * keeps its header as a hint and wakes the loop. If the socket fails, the watcher goes on
   * polling and tries to subscribe again after a few seconds.
   */
  private subscribe(): void {
    if (!this.o.wsUrl || this.stopped) return;
    const retry = (e: unknown) => {
      if (this.stopped) return;
      this.log.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'newHeads subscription failed; polling until it is back');
      this.subscriptionLive = false;
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      void this.closeSocket();
      if (!this.stopped && !this.resubscribeTimer) {
        this.resubscribeTimer = setTimeout(() => {
          this.resubscribeTimer = undefined;
          this.subscribe();
        }, 5_000);
        this.resubscribeTimer.unref();
      }
    };
    const transport = webSocket(this.o.wsUrl, { reconnect: false, keepAlive: { interval: 15_000 }, timeout: 5_000, retryCount: 0 })({});
    const value = transport.value!;
    this.socketTransport = value;
    value
      .subscribe({
        params: ['newHeads'],
        onData: (msg: { result?: { number?: string; hash?: string; parentHash?: string } }) => {
          const h = msg.result;
          if (h?.number && h.hash && h.parentHash)
            this.notifyHead({ number: BigInt(h.number), hash: h.hash as `0x${string}`, parentHash: h.parentHash as `0x${string}` });
        },
        onError: retry,
      })
      .then(({ unsubscribe }) => {
        if (this.stopped) return void unsubscribe().catch(() => undefined);
        this.unsubscribe = () => void unsubscribe().catch(() => undefined);
        this.subscriptionLive = true;
        this.log.info('following new heads by newHeads subscription');
        this.woken = true; // a head may have arrived while subscribing
        this.wake?.();
      }, retry);
  }

  private async closeSocket(): Promise<void> {
    const t = this.socketTransport;
    this.socketTransport = undefined;
    if (!t) return;
    try {
      (await t.getRpcClient()).close();
    } catch {
      // the socket never opened
    }
  }

  /** A new head from the subscription: remember it and wake the loop. */
  private notifyHead(h: HeadHint): void {
    if (!this.hint || h.number >= this.hint.number) this.hint = h;
    this.woken = true;
    this.wake?.();
  }

  /** Stops after the block in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resubscribeTimer) clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.subscriptionLive = false;
    await this.closeSocket();
    this.wake?.();
    await this.loop;
    await this.redis.del(walletMonitorKeys.walletMonitor(this.o.keys, 'lease', this.chain)).catch(() => undefined);
  }

  /** The persisted cursor, or undefined before the first run. */
  async cursor(): Promise<WatcherCursor | undefined> {
    const [n, h] = await this.redis.hmget(this.cursorKey(), 'number', 'hash');
    return n && h ? { number: BigInt(n), hash: h as `0x${string}` } : undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let busy = false;
      this.woken = false;
      try {
        busy = await this.tick();
      } catch (e) {
        this.log.warn({ err: String((e as Error).message).slice(0, 200) }, 'watcher tick failed; retrying');
      }
      if (!busy && !this.stopped && !this.woken) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, this.o.pollIntervalMs ?? 200);
          this.wake = () => {
            clearTimeout(t);
            this.wake = undefined;
            resolve();
          };
        });
      }
    }
  }

  /**
   * One step: if this process holds the chain's lease, processes confirmed blocks after the
   * cursor (up to 50). Returns true when it processed a block (more may be waiting).
   */
  async tick(): Promise<boolean> {
    const hint = this.hint;
    this.hint = undefined;
    // the lease and the cursor in one round trip (ioredis pipelines commands sent together)
    const [held, stored] = await Promise.all([
      takeLease(this.redis, {
        leaseKey: walletMonitorKeys.walletMonitor(this.o.keys, 'lease', this.chain),
        holder: this.leaseToken,
        leaseMs: this.o.leaseMs ?? 15_000,
      }),
      this.cursor(),
    ]);
    if (!held) return false;
    // a notified head saves the eth_blockNumber round trip
    const head = hint ? hint.number : BigInt(await this.o.client.request({ method: 'eth_blockNumber' }));
    const target = head - BigInt((this.confirmations ?? 1) - 1);
    let cursor = stored;
    if (!cursor) {
      // First run on this chain: start at the current confirmed block (no history replay).
      const b = await this.o.client.getBlock({ blockNumber: target < 0n ? 0n : target });
      cursor = { number: b.number!, hash: b.hash! };
      await this.saveCursor(cursor);
      await this.report(head, cursor);
      return false;
    }
    let processed = 0;
    while (cursor.number < target && processed < 50 && !this.stopped) {
      const n = cursor.number + 1n;
      const next = await this.processBlock(n, cursor, head, hint?.number === n ? hint : undefined);
      cursor = next ?? (await this.rewind(cursor));
      processed++;
    }
    await this.releaseHeld(head, cursor);
    await this.settleRemovals(cursor);
    await this.report(head, cursor);
    return processed > 0;
  }

  private async report(head: bigint, cursor: WatcherCursor): Promise<void> {
    await this.redis.hset(this.stateKey(), {
      head: head.toString(),
      last_processed_block: cursor.number.toString(),
      confirmations: this.confirmations ?? 1,
      native_source: this.nativeSource ?? '',
      reorgs: this.reorgs,
      updated_at: new Date().toISOString(),
    });
  }

  private async saveCursor(c: WatcherCursor): Promise<void> {
    const history = BigInt(this.o.historyBlocks ?? 256);
    const m = this.redis.multi().hset(this.cursorKey(), 'number', c.number.toString(), 'hash', c.hash).hset(this.historyKey(), c.number.toString(), c.hash);
    if (c.number >= history) m.hdel(this.historyKey(), (c.number - history).toString());
    await m.exec();
  }

  /** Reorg: the last block whose stored hash is still canonical becomes the cursor. */
  private async rewind(cursor: WatcherCursor): Promise<WatcherCursor> {
    this.reorgs++;
    const history = BigInt(this.o.historyBlocks ?? 256);
    const floor = cursor.number > history ? cursor.number - history : 0n;
    const dropped: string[] = [cursor.hash];
    for (let n = cursor.number - 1n; n >= floor; n--) {
      const [stored, canonical] = await Promise.all([this.redis.hget(this.historyKey(), n.toString()), this.o.client.getBlock({ blockNumber: n })]);
      if (stored && stored === canonical.hash) {
        const c = { number: n, hash: canonical.hash };
        await this.recordDropped(dropped, cursor.number);
        await this.redis.multi().hset(this.cursorKey(), 'number', n.toString(), 'hash', c.hash).hdel(this.historyKey(), cursor.number.toString()).exec();
        this.log.warn({ dropped_from: (n + 1n).toString(), to: cursor.number.toString() }, 'reorg: resuming after the last common block');
        return c;
      }
      if (stored) dropped.push(stored);
      if (n === 0n) break;
    }
    const b = await this.o.client.getBlock({ blockNumber: floor });
    this.log.error({ depth: history.toString() }, 'reorg deeper than the kept history: resuming from its floor');
    await this.recordDropped(dropped, cursor.number);
    const c = { number: b.number!, hash: b.hash! };
    await this.saveCursor(c);
    return c;
  }

  /**
   * Reorg, before the cursor moves back: the events queued from the dropped blocks wait in
   * `wm:reorged:<chain>` until the re-scan reaches `until` (the dropped chain's last processed
   * height); those it does not find again then get a `removed` event ({@link settleRemovals}).
   */
  private async recordDropped(blockHashes: string[], until: bigint): Promise<void> {
    const rows = await Promise.all(blockHashes.map((h) => this.redis.hgetall(this.emittedKey(h))));
    const pending: Record<string, string> = {};
    for (const row of rows) {
      for (const [id, job] of Object.entries(row)) pending[id] = JSON.stringify({ job: JSON.parse(job), until: until.toString() } satisfies ReorgedEvent);
    }
    if (Object.keys(pending).length > 0) await this.redis.hset(this.reorgedKey(), pending);
  }

  /**
   * Sends a `removed: true` event for each event of a dropped block that the re-scan did not find
   * again once it reached the dropped chain's height: marks the original vanished (no attempt of
   * it sends any more), then queues the removed event (the delivery worker sends it only when the
   * original was delivered, and credits the original's price back). Idempotent after a crash.
   */
  private async settleRemovals(cursor: WatcherCursor): Promise<void> {
    const rows = await this.redis.hgetall(this.reorgedKey());
    const due = Object.entries(rows)
      .map(([id, row]) => [id, JSON.parse(row) as ReorgedEvent] as const)
      .filter(([, r]) => BigInt(r.until) <= cursor.number);
    if (due.length === 0) return;
    const now = Date.now();
    const observed_at = new Date(now).toISOString();
    const removals: DeliveryJobData[] = due.map(([id, { job }]) => ({
      webhookId: removedWebhookId(id),
      subscriptionId: job.subscriptionId,
      event: { ...job.event, observed_at, removed: true, original_webhook_id: id },
      observedAtMs: now,
      generation: 0,
      removes: id,
    }));
    const mark = this.redis.multi();
    for (const [id] of due) mark.set(this.deliveryKeys.vanished(id), '1', 'EX', EVENT_FATE_TTL_SECONDS);
    await mark.exec();
    await this.o.queue.enqueue(removals);
    await this.redis.hdel(this.reorgedKey(), ...due.map(([id]) => id));
    this.log.warn({ events: due.length }, 'reorg: events no longer on chain, removed events queued');
  }

  /**
   * Records events under the block `blockHash` (for a later reorg), clears them from the reorg's
   * pending list (found again) and queues them for delivery. Recorded first: a crash in between
   * leaves an event recorded and not queued (the block is read again, as the cursor has not
   * moved), never queued and unrecorded (a later reorg could not take it back).
   */
  private async emit(blockHash: string, jobs: DeliveryJobData[]): Promise<void> {
    if (jobs.length === 0) return;
    const rec: Record<string, string> = {};
    for (const j of jobs) rec[j.webhookId] = JSON.stringify(j);
    await this.redis
      .multi()
      .hset(this.emittedKey(blockHash), rec)
      .expire(this.emittedKey(blockHash), EMITTED_TTL_SECONDS)
      .hdel(this.reorgedKey(), ...jobs.map((j) => j.webhookId))
      .exec();
    await this.o.queue.enqueue(jobs);
  }

  /** Holds events until their block is `confirmations` deep for their subscription (score: the release height). */
  private async hold(events: MatchedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const m = this.redis.multi();
    for (const { job, confirmations } of events) {
      m.zadd(this.heldKey(), (BigInt(job.event.block_number) + BigInt(confirmations)).toString(), job.webhookId);
      m.hset(this.heldJobsKey(), job.webhookId, JSON.stringify(job));
    }
    m.hdel(this.reorgedKey(), ...events.map((e) => e.job.webhookId));
    await m.exec();
  }

  /**
   * Releases held events whose block is now deep enough (`head` − block ≥ the subscription's
   * confirmations) and still the block the watcher processed at that height; an event whose block
   * was reorged out is dropped, never delivered (if its transfer is in the replacement block, the
   * re-scan held it again under the new block hash).
   */
  private async releaseHeld(head: bigint, cursor: WatcherCursor): Promise<void> {
    const due = await this.redis.zrangebyscore(this.heldKey(), '-inf', head.toString(), 'LIMIT', 0, 1000);
    if (due.length === 0) return;
    const rows = await this.redis.hmget(this.heldJobsKey(), ...due);
    const jobs = rows.map((r) => (r ? (JSON.parse(r) as DeliveryJobData) : undefined));
    const heights = jobs.map((j) => (j ? j.event.block_number : '0'));
    const stored = await this.redis.hmget(this.historyKey(), ...heights);
    const done: string[] = [];
    const byBlock = new Map<string, DeliveryJobData[]>();
    const now = Date.now();
    for (let i = 0; i < due.length; i++) {
      const job = jobs[i];
      if (!job) {
        done.push(due[i]);
        continue;
      }
      const n = BigInt(job.event.block_number);
      if (n > cursor.number) continue; // rewound below it: the re-scan decides
      const canonical = stored[i] ?? (await this.o.client.getBlock({ blockNumber: n })).hash;
      done.push(due[i]);
      if (canonical?.toLowerCase() !== job.event.block_hash.toLowerCase()) continue; // reorged out before its depth
      const released = { ...job, observedAtMs: now, event: { ...job.event, observed_at: new Date(now).toISOString() } };
      byBlock.set(job.event.block_hash, [...(byBlock.get(job.event.block_hash) ?? []), released]);
    }
    for (const [blockHash, list] of byBlock) await this.emit(blockHash, list);
    if (done.length > 0)
      await this.redis
        .multi()
        .zrem(this.heldKey(), ...done)
        .hdel(this.heldJobsKey(), ...done)
        .exec();
  }

  /**
   * Queues the events of block `n`; returns the new cursor, or undefined when its parent is not
   * the cursor (reorg). `header` is the block's header when a `newHeads` notification carried it.
   * The header comes first (its hash and parent hash gate everything); then the `Transfer` logs
   * (by block hash), the native transfers (traces) and the address-index change stream are read
   * in parallel.
   */
  private async processBlock(n: bigint, cursor: WatcherCursor, head: bigint, header?: HeadHint): Promise<WatcherCursor | undefined> {
    const observedAtMs = Date.now();
    // Transactions are needed only when native transfers do not come from trace_block.
    const needTxs = this.nativeSource !== 'trace_block';
    let txs: TxLite[] | undefined;
    let txHashes: `0x${string}`[] | undefined;
    if (!header) {
      if (needTxs) {
        const b = await this.o.client.getBlock({ blockNumber: n, includeTransactions: true });
        header = { number: b.number!, hash: b.hash!, parentHash: b.parentHash };
        txs = b.transactions.map((t) => ({ hash: t.hash, from: t.from, to: t.to, value: t.value }));
        txHashes = txs.map((t) => t.hash);
      } else {
        const b = await this.o.client.getBlock({ blockNumber: n });
        header = { number: b.number!, hash: b.hash!, parentHash: b.parentHash };
        txHashes = b.transactions;
      }
    }
    if (header.parentHash !== cursor.hash) return undefined;
    const blockHash = header.hash;
    const number = header.number;
    const readTxs = async () => {
      if (!txs) {
        const b = await this.o.client.getBlock({ blockHash, includeTransactions: true });
        txs = b.transactions.map((t) => ({ hash: t.hash, from: t.from, to: t.to, value: t.value }));
        txHashes = txs.map((t) => t.hash);
      }
      return txs;
    };
    const [logs, native] = await Promise.all([
      this.o.client.request({ method: 'eth_getLogs', params: [{ blockHash, topics: [TRANSFER_TOPIC] }] }) as Promise<LogEntry[]>,
      this.nativeTransfers(number, blockHash, async () => txHashes ?? (await readTxs()).map((t) => t.hash)),
      this.o.matcher.sync(),
    ]);
    const transfers: RawTransfer[] = erc20TransfersFromLogs(logs.map((l) => ({ ...l, logIndex: l.logIndex === null ? null : Number(l.logIndex) })));
    transfers.push(...(native ?? nativeTransfersFromTransactions(await readTxs())));

    const matched = transfers.length > 0 ? await this.match(transfers, number, blockHash, observedAtMs, native === undefined) : [];
    // a subscription's confirmations: blocks on top of this one before its events go out
    const deep = (e: MatchedEvent) => head - number >= BigInt(e.confirmations);
    await this.emit(
      blockHash,
      matched.filter(deep).map((e) => e.job),
    );
    await this.hold(matched.filter((e) => !deep(e)));
    const next = { number, hash: blockHash };
    await this.saveCursor(next);
    return next;
  }

  /**
   * Native transfers of the block from traces, or undefined when they must come from the block's
   * transactions. Under `auto` the first source the node answers is kept for the watcher's life.
   */
  private async nativeTransfers(number: bigint, blockHash: `0x${string}`, hashes: () => Promise<`0x${string}`[]>): Promise<RawTransfer[] | undefined> {
    if (this.nativeSource === 'transactions') return undefined;
    const txHashes = this.nativeSource === 'trace_block' ? [] : await hashes();
    if (this.nativeSource !== 'trace_block' && txHashes.length === 0) return [];
    const sources: NativeSource[] = this.nativeSource ? [this.nativeSource] : ['trace_block', 'debug_trace'];
    for (const source of sources) {
      try {
        const out = await this.readTraces(source, number, blockHash, txHashes);
        if (this.nativeSource === undefined) {
          this.nativeSource = source;
          this.log.info({ source }, 'native ETH transfers from traces (internal transfers included)');
        }
        return out;
      } catch (e) {
        if (
          this.nativeSource !== undefined ||
          !/not (found|supported|available)|does not exist|unsupported|unknown method|method|-32601|-32004|disabled/i.test(String((e as Error).message))
        )
          throw e;
      }
    }
    this.nativeSource = 'transactions';
    this.log.info('the node offers no traces: native transfers from block transactions only (no internal transfers)');
    return undefined;
  }

  private async readTraces(source: NativeSource, number: bigint, blockHash: `0x${string}`, txHashes: `0x${string}`[]): Promise<RawTransfer[]> {
    if (source === 'trace_block') {
      const traces = (await this.o.client.request({
        method: 'trace_block' as 'eth_chainId',
        params: [`0x${number.toString(16)}`] as never,
      })) as unknown as ParityTrace[];
      // trace_block takes a number: make sure the traces are of the block we read (reorg safety)
      if (traces.some((t) => t.blockHash && t.blockHash.toLowerCase() !== blockHash.toLowerCase()))
        throw new Error('trace_block answered for another block (reorg in progress)');
      return nativeTransfersFromParityTraces(traces);
    }
    const traces = (await this.o.client.request({
      method: 'debug_traceBlockByHash' as 'eth_chainId',
      params: [blockHash, { tracer: 'callTracer' }] as never,
    })) as unknown as TxTrace[];
    return nativeTransfersFromTraces(traces, txHashes);
  }

  private async match(
    transfers: RawTransfer[],
    blockNumber: bigint,
    blockHash: `0x${string}`,
    observedAtMs: number,
    checkReceipts: boolean,
  ): Promise<MatchedEvent[]> {
    const addresses = new Set<string>();
    for (const t of transfers) addresses.add(t.from).add(t.to);
    const watched = await this.o.matcher.match(this.chain, addresses); // the change stream was read before (processBlock)
    if (watched.size === 0) return [];

    const candidates: { t: RawTransfer; type: WalletEventName; subscriptionId: string }[] = [];
    for (const t of transfers) {
      for (const [address, type] of [
        [t.to, 'transfer_in'],
        [t.from, 'transfer_out'],
      ] as const) {
        for (const id of watched.get(address) ?? []) candidates.push({ t, type, subscriptionId: id });
      }
    }
    const metas = await this.meta([...new Set(candidates.map((c) => c.subscriptionId))]);
    let wanted = candidates.filter((c) => {
      const m = metas.get(c.subscriptionId);
      return m && m.status === 'active' && m.events.includes(c.type) && m.chains.includes(this.chain);
    });
    if (wanted.length === 0) return [];

    if (checkReceipts) {
      // Without traces a transaction's value moved only if it succeeded.
      const native = [...new Set(wanted.filter((c) => c.t.token === null).map((c) => c.t.txHash))];
      const failed = new Set<string>();
      await Promise.all(
        native.map(async (hash) => {
          const r = await this.o.client.getTransactionReceipt({ hash });
          if (r.status !== 'success') failed.add(hash);
        }),
      );
      wanted = wanted.filter((c) => c.t.token !== null || !failed.has(c.t.txHash));
    }
    const assets = await this.tokens.get(wanted.filter((c) => c.t.token).map((c) => c.t.token!));
    const observed_at = new Date(observedAtMs).toISOString();
    const matched = wanted.map(({ t, type, subscriptionId }) => {
      const event: WalletEventPayload = {
        type,
        subscription_id: subscriptionId,
        chain: this.chain,
        block_number: blockNumber.toString(),
        block_hash: blockHash,
        tx_hash: t.txHash,
        log_index: t.logIndex,
        from: getAddress(t.from),
        to: getAddress(t.to),
        asset: t.token ? (assets.get(t.token) ?? { address: getAddress(t.token), symbol: '', decimals: 0 }) : NATIVE_ASSET,
        amount: t.amount.toString(),
        observed_at,
      };
      const job: DeliveryJobData = {
        webhookId: webhookId({ chain: this.chain, txHash: t.txHash, position: t.position, subscriptionId, type }),
        subscriptionId,
        event,
        observedAtMs,
        generation: 0,
      };
      return { job, confirmations: metas.get(subscriptionId)?.confirmations ?? 0 };
    });
    // a transfer mined again after a reorg removed its event (and its `removed` event went out) gets a new id
    for (let round = 0; round < 8; round++) {
      const marks = await this.redis.pipeline(matched.map((m) => ['exists', this.deliveryKeys.vanished(m.job.webhookId)])).exec();
      const again = matched.filter((_, i) => marks?.[i]?.[1] === 1);
      if (again.length === 0) break;
      for (const m of again) m.job.webhookId = reissuedWebhookId(m.job.webhookId);
    }
    return matched;
  }

  private async meta(ids: string[]): Promise<Map<string, SubMeta>> {
    const out = new Map<string, SubMeta>();
    const now = Date.now();
    const missing: string[] = [];
    for (const id of ids) {
      const m = this.subMeta.get(id);
      if (m && now - m.at < SUB_META_TTL_MS) out.set(id, m);
      else missing.push(id);
    }
    await Promise.all(
      missing.map(async (id) => {
        const info = await this.o.subscriptions.deliveryInfo(id);
        if (!info) return;
        const m = { status: info.status, events: info.events, chains: info.chains, confirmations: info.confirmations, at: now };
        this.subMeta.set(id, m);
        out.set(id, m);
      }),
    );
    return out;
  }

  /** What this chain's watcher (in any process) last reported. */
  static async state(redis: Redis, keys: RedisKeys, chain: ChainName): Promise<WatcherState> {
    const h = await redis.hgetall(walletMonitorKeys.walletMonitor(keys, 'watcher', chain));
    return {
      chain,
      head: h.head ?? null,
      last_processed_block: h.last_processed_block ?? null,
      confirmations: h.confirmations ? Number(h.confirmations) : null,
      native_source: (h.native_source || null) as NativeSource | null,
      reorgs: Number(h.reorgs ?? 0),
      updated_at: h.updated_at ?? null,
    };
  }
}
