import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Address, Hash } from 'viem';
import { bundleKeys } from './commands/keys.js';

/** How long the refunds planned for a sealed block wait for it to land, seconds (a day). */
export const REFUND_CANDIDATE_TTL_SECONDS = 24 * 3600;

/** One refund a bundle of a sealed block earns, before the block lands (written by the bidder). */
export interface RefundCandidate {
  bundle_hash: Hash;
  /** The bundle's signer. */
  searcher: Address;
  /** Credited identity: `refundIdentity`, else the signer. */
  identity: Address;
  /** Where the ETH goes: `refundRecipient`, else the sender of the bundle's first transaction. */
  recipient: Address;
  /** Wei, as a decimal string. */
  value: string;
  /** `delayedRefund`: no transaction in the block; pending until paid out. */
  delayed: boolean;
  /** The refund transaction in the block (in-block refunds). */
  tx_hash?: Hash;
}

/** A refund of a landed block, as the ledger keeps it. */
export interface RefundRecord extends RefundCandidate {
  /** The block it landed in. */
  block_number: string;
  /** `received`: paid by a transaction of the landed block; `pending`: delayed, not paid yet. */
  status: 'pending' | 'received';
}

/** Wei totals of an identity's refunds, and the highest block the ledger holds. */
export interface RefundTotals {
  pending: bigint;
  received: bigint;
  maxBlockNumber: bigint;
}

/**
 * The builder's refund ledger in Redis (README "Bundle API of 2026"; read by the `buildernet_*` refund methods).
 * Refunds come from the real block: the bidder plans them from what each bundle paid the coinbase in the sealed
 * block ({@link addCandidates}, keyed by the sealed block hash and on the dev chain the mined one) and they enter
 * the ledger only when a block with that hash is canonical at that height ({@link settle}); a block that never
 * lands leaves nothing behind.
 *
 * Keys (no TTL on the ledger: money records): `builder:refundcand:<block>` (hash: block hash → JSON candidates,
 * {@link REFUND_CANDIDATE_TTL_SECONDS}) and the set `builder:refundcand` of those blocks; `builder:refund:<bundle_hash>`
 * (hash: block → JSON {@link RefundRecord}); sorted sets scored by block, members `<block>:<bundle_hash>`:
 * `builder:refunds:identity:<address>`, `builder:refunds:delayed:<recipient>`; `builder:refunds:blocks` (blocks settled).
 * Every write is idempotent (settling a block twice changes nothing).
 */
export class RefundLedger {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  private k(...parts: (string | number)[]): string {
    return bundleKeys.builder(this.keys, ...parts);
  }

  /** Remembers the refunds a sealed block would pay, under each hash it may land with. */
  async addCandidates(block: bigint, blockHashes: readonly Hash[], refunds: readonly RefundCandidate[]): Promise<void> {
    if (refunds.length === 0 || blockHashes.length === 0) return;
    const key = this.k('refundcand', block.toString());
    const json = JSON.stringify(refunds);
    await this.redis
      .multi()
      .hset(key, Object.fromEntries(blockHashes.map((h) => [h.toLowerCase(), json])))
      .expire(key, REFUND_CANDIDATE_TTL_SECONDS)
      .zadd(this.k('refundcand'), block.toString(), block.toString())
      .exec();
  }

  /**
   * Settles every candidate block at or below `head`: the block whose hash `canonicalHash(block)` gives enters the
   * ledger, the others are dropped.
   * @returns the refunds recorded.
   */
  async settle(head: bigint, canonicalHash: (block: bigint) => Promise<Hash | undefined>): Promise<RefundRecord[]> {
    const blocks = await this.redis.zrangebyscore(this.k('refundcand'), '-inf', head.toString());
    const out: RefundRecord[] = [];
    for (const b of blocks) {
      const block = BigInt(b);
      const hash = await canonicalHash(block);
      if (hash === undefined) continue;
      const json = await this.redis.hget(this.k('refundcand', b), hash.toLowerCase());
      const m = this.redis.multi();
      for (const c of json ? (JSON.parse(json) as RefundCandidate[]) : []) {
        const r: RefundRecord = { ...c, block_number: b, status: c.delayed ? 'pending' : 'received' };
        const member = `${b}:${c.bundle_hash.toLowerCase()}`;
        m.hset(this.k('refund', c.bundle_hash.toLowerCase()), b, JSON.stringify(r));
        m.zadd(this.k('refunds', 'identity', c.identity.toLowerCase()), Number(b), member);
        if (c.delayed) m.zadd(this.k('refunds', 'delayed', c.recipient.toLowerCase()), Number(b), member);
        out.push(r);
      }
      if (json) m.zadd(this.k('refunds', 'blocks'), Number(b), b);
      m.del(this.k('refundcand', b));
      m.zrem(this.k('refundcand'), b);
      await m.exec();
    }
    return out;
  }

  /** The refunds of `bundleHash` (one per block it landed in). */
  async byBundle(bundleHash: Hash): Promise<RefundRecord[]> {
    const h = await this.redis.hgetall(this.k('refund', bundleHash.toLowerCase()));
    return Object.values(h)
      .map((v) => JSON.parse(v) as RefundRecord)
      .sort((a, b) => Number(BigInt(a.block_number) - BigInt(b.block_number)));
  }

  private async page(set: string, opts: { from?: bigint; to?: bigint; after?: string; limit: number }): Promise<{ records: RefundRecord[]; next?: string }> {
    const members = await this.redis.zrangebyscore(
      set,
      opts.from === undefined ? '-inf' : opts.from.toString(),
      opts.to === undefined ? '+inf' : opts.to.toString(),
    );
    const start = opts.after === undefined ? 0 : members.indexOf(opts.after) + 1;
    const slice = members.slice(start, start + opts.limit);
    const records: RefundRecord[] = [];
    for (const m of slice) {
      const [block, hash] = m.split(':');
      const v = await this.redis.hget(this.k('refund', hash), block);
      if (v) records.push(JSON.parse(v) as RefundRecord);
    }
    return { records, next: start + opts.limit < members.length ? slice.at(-1) : undefined };
  }

  /** The refunds credited to `identity`, oldest block first; `after` continues from a page's last member. */
  byIdentity(identity: Address, opts: { after?: string; limit: number }): Promise<{ records: RefundRecord[]; next?: string }> {
    return this.page(this.k('refunds', 'identity', identity.toLowerCase()), opts);
  }

  /** The delayed refunds paid to `recipient`, oldest block first, within `[from, to]` when given. */
  delayedFor(recipient: Address, opts: { from?: bigint; to?: bigint; after?: string; limit: number }): Promise<{ records: RefundRecord[]; next?: string }> {
    return this.page(this.k('refunds', 'delayed', recipient.toLowerCase()), opts);
  }

  /** Wei totals over every refund of `records`. */
  static totals(records: readonly RefundRecord[], maxBlockNumber: bigint): RefundTotals {
    let pending = 0n;
    let received = 0n;
    for (const r of records) {
      if (r.status === 'pending') pending += BigInt(r.value);
      else received += BigInt(r.value);
    }
    return { pending, received, maxBlockNumber };
  }

  /** The highest block the ledger settled refunds for (0 when none). */
  async maxBlock(): Promise<bigint> {
    const top = await this.redis.zrange(this.k('refunds', 'blocks'), '-1', '-1');
    return top[0] ? BigInt(top[0]) : 0n;
  }
}
