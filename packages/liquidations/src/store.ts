import type { LendingProtocol, LiquidationOpportunity } from '@acg/schemas';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Hex } from 'viem';
import { getAddress } from 'viem';
import { MAX_QUERY_HEALTH_FACTOR, type LiquidationChain, type PositionRef } from './types.js';
import { liquidationKeys } from './commands/keys.js';

export const PROTOCOLS: readonly LendingProtocol[] = ['aave_v3', 'spark', 'compound_v3', 'morpho_blue'];

/** Block-level facts stored with the index. */
export interface IndexMeta {
  block_number: number;
  block_timestamp: number;
  base_fee_wei: string;
  eth_usd: number;
  updated_at: string;
  /**
   * The block's price book: USD per whole token by lowercase address (the protocols' oracles and
   * the configured feeds; `0x000…0` is the native token when a native feed is set). It prices the
   * token flows of liquidation plans whose planner gave no price (docs/liquidation-plans.md).
   */
  usd_prices?: Record<string, number>;
}

/** One position's stored state after an evaluation. */
export interface PositionWrite {
  key: string;
  adapterId: string;
  protocol: LendingProtocol;
  health_factor: number;
  has_debt: boolean;
  /** The wire document (LiquidationOpportunity). */
  doc: LiquidationOpportunity;
}

/**
 * The liquidation index of one chain in Redis (shared by every gateway replica). Keys, all under
 * the `{chain}` hash tag (see `RedisKeys.liquidationIndex`):
 * - `meta` hash: IndexMeta of the last indexed block, and `version`, a counter incremented by every
 *   block written (answers read at one version are the same for the same query);
 * - `pos` hash: position key → opportunity JSON (every tracked position with debt);
 * - `hf` hash: position key → health factor (decimal string);
 * - `opp:<protocol>` sorted sets: score estimated_profit_usd, member position key, for positions
 *   with debt and health_factor ≤ 1.1 (what a query can return);
 * - `tracked:<adapter id>` sets: tracked borrowers (`borrower` or `marketId:borrower`);
 * - `cursor` hash: adapter id → last block whose logs were read.
 * A block is written in one MULTI transaction, so readers always see one block's state.
 */
export class LiquidationIndexStore {
  readonly keys: {
    meta: string;
    pos: string;
    hf: string;
    cursor: string;
    opp: (p: LendingProtocol) => string;
    tracked: (adapterId: string) => string;
  };

  constructor(
    readonly redis: Redis,
    keys: RedisKeys,
    readonly chain: LiquidationChain,
  ) {
    const k = (part: string) => liquidationKeys.liquidationIndex(keys, chain, part);
    this.keys = {
      meta: k('meta'),
      pos: k('pos'),
      hf: k('hf'),
      cursor: k('cursor'),
      opp: (p) => k(`opp:${p}`),
      tracked: (id) => k(`tracked:${id}`),
    };
  }

  /** The stored meta, or undefined when the chain has never been indexed. */
  async meta(): Promise<IndexMeta | undefined> {
    const h = await this.redis.hgetall(this.keys.meta);
    if (!h.block_number) return undefined;
    return {
      block_number: Number(h.block_number),
      block_timestamp: Number(h.block_timestamp),
      base_fee_wei: h.base_fee_wei,
      eth_usd: Number(h.eth_usd),
      updated_at: h.updated_at,
      ...(h.usd_prices ? { usd_prices: JSON.parse(h.usd_prices) as Record<string, number> } : {}),
    };
  }

  /** Last block whose logs were read for `adapterId`. */
  async cursor(adapterId: string): Promise<bigint | undefined> {
    const v = await this.redis.hget(this.keys.cursor, adapterId);
    return v ? BigInt(v) : undefined;
  }

  /** Tracked positions of `adapterId`, rebuilt into refs. */
  async tracked(adapterId: string): Promise<PositionRef[]> {
    const members = await this.redis.smembers(this.keys.tracked(adapterId));
    return members.map((m) => {
      const [a, b] = m.split(':');
      return b ? { key: `${adapterId}:${a}:${b}`, borrower: getAddress(b), marketId: a as Hex } : { key: `${adapterId}:${a}`, borrower: getAddress(a) };
    });
  }

  /** Starts tracking refs (idempotent). */
  async track(adapterId: string, refs: PositionRef[]): Promise<void> {
    if (refs.length === 0) return;
    await this.redis.sadd(this.keys.tracked(adapterId), ...refs.map(member));
  }

  /** Health factors of every position with debt (for the indexer's at-risk selection after a restart). */
  async healthFactors(): Promise<Map<string, number>> {
    const h = await this.redis.hgetall(this.keys.hf);
    return new Map(Object.entries(h).map(([k, v]) => [k, Number(v)]));
  }

  /** Writes one block atomically: meta, cursors, and every evaluated position. */
  async writeBlock(meta: IndexMeta, cursors: Record<string, bigint>, writes: PositionWrite[]): Promise<void> {
    const m = this.redis.multi();
    for (const w of writes) {
      const opp = this.keys.opp(w.protocol);
      if (!w.has_debt) {
        m.hdel(this.keys.pos, w.key);
        m.hdel(this.keys.hf, w.key);
        m.zrem(opp, w.key);
        m.srem(this.keys.tracked(w.adapterId), member({ key: w.key, borrower: w.doc.borrower as Hex, marketId: w.doc.market_id as Hex | undefined }));
        continue;
      }
      m.hset(this.keys.pos, w.key, JSON.stringify(w.doc));
      m.hset(this.keys.hf, w.key, String(w.health_factor));
      if (w.health_factor <= MAX_QUERY_HEALTH_FACTOR) m.zadd(opp, w.doc.estimated_profit_usd, w.key);
      else m.zrem(opp, w.key);
    }
    const c = Object.entries(cursors).flatMap(([k, v]) => [k, v.toString()]);
    if (c.length > 0) m.hset(this.keys.cursor, ...c);
    // the write counter: a reader may reuse an answer while it is unchanged (cachedLiquidationSearch)
    m.hincrby(this.keys.meta, 'version', 1);
    m.hset(this.keys.meta, {
      block_number: String(meta.block_number),
      block_timestamp: String(meta.block_timestamp),
      base_fee_wei: meta.base_fee_wei,
      eth_usd: String(meta.eth_usd),
      updated_at: meta.updated_at,
      ...(meta.usd_prices ? { usd_prices: JSON.stringify(meta.usd_prices) } : {}),
    });
    const res = await m.exec();
    const failed = res?.find(([err]) => err);
    if (failed) throw failed[0];
  }
}

function member(r: PositionRef): string {
  return r.marketId ? `${r.marketId.toLowerCase()}:${r.borrower.toLowerCase()}` : r.borrower.toLowerCase();
}
