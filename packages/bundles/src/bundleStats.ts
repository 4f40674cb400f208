import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Address, Hash } from 'viem';
import { bundleKeys } from './commands/keys.js';

/** The stats field holding `searcher`'s receipt of a bundle. */
export const receiptField = (searcher: Address): string => `recv:${searcher.toLowerCase()}`;

/** How long the life of a bundle stays readable (`flashbots_getBundleStatsV2`), seconds: a day. */
export const BUNDLE_STATS_TTL_SECONDS = 24 * 3600;

/** One relay's answer to a block that held the bundle. */
export interface RelaySent {
  relay: string;
  /** RFC 3339 UTC */
  timestamp: string;
  accepted: boolean;
}

/** What the bidder did with the bundles of one block-construction attempt (see {@link BundleStatsStore.recordAttempt}). */
export interface AttemptRecord {
  /** Target block. */
  block: bigint;
  /** When the attempt finished (UNIX ms). */
  at: number;
  /** Bundles simulated in this attempt (alone, and on top of the ones chosen before them). */
  simulated: Hash[];
  /** Bundles chosen for the block (Flashbots' "considered": selected to be included in the target block). */
  chosen: Hash[];
  /**
   * Set when the block was sealed: its hash, and what each relay answered. Every chosen bundle is in it.
   * `minedBlockHash`: on the dev chain, the hash the same block got when mined on anvil (anvil's own state root).
   */
  sealed?: { blockHash: Hash; submissions: RelaySent[]; minedBlockHash?: Hash };
}

/** The life of one bundle for one target block, as the searcher who sent it reads it. */
export interface BundleLife {
  /** When this searcher's copy was received (UNIX ms). */
  receivedAt: number;
  /** The bundle's transaction hashes that must be in the block for it to have landed (all but `droppingTxHashes`). */
  requiredTxs: Hash[];
  simulatedAt?: number;
  consideredAt?: number;
  sealedAt?: number;
  sealedBlockHash?: Hash;
  /** Dev chain: the hash of the same block as anvil mined it. */
  minedBlockHash?: Hash;
  relays: RelaySent[];
}

/**
 * The life of each bundle per target block in Redis (docs/decisions.md "Bundle submission":
 * `flashbots_getBundleStatsV2`, per searcher: received, simulated, considered, sealed, sent to
 * relays, landed). One hash per (target block, bundle hash), `builder:bstats:<block>:<bundle_hash>`,
 * kept {@link BUNDLE_STATS_TTL_SECONDS}:
 * - `recv:<searcher>`: first receipt by that searcher (UNIX ms), written by the intake with the
 *   bundle (`bundle_add.lua`), so only searchers who sent the bundle can read it;
 * - `txs`: the required transaction hashes (comma-separated);
 * - `sim_at`, `considered_at`, `sealed_at` (first time, UNIX ms), `sealed_block_hash` (and on the dev
 *   chain `mined_block_hash`);
 * - `relay:<name>`: JSON `{timestamp, accepted}` of the last submission of a block holding it.
 * Landing is read from the chain when asked (the block at the target height holds every required tx).
 */
export class BundleStatsStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** The stats hash of `hash` for target `block`. */
  keyOf(block: bigint | string, hash: Hash): string {
    return bundleKeys.builder(this.keys, 'bstats', block.toString(), hash.toLowerCase());
  }

  /** Records what one block-construction attempt did with its bundles (first times are kept). */
  async recordAttempt(r: AttemptRecord): Promise<void> {
    const m = this.redis.multi();
    const at = String(r.at);
    const touch = (hash: Hash, fields: [string, string][], first: string[]) => {
      const key = this.keyOf(r.block, hash);
      // a key without a `recv:` field (its receipt expired) is never read: read() needs the searcher's receipt
      for (const f of first) m.hsetnx(key, f, at);
      if (fields.length > 0) m.hset(key, ...fields.flat());
      m.expire(key, BUNDLE_STATS_TTL_SECONDS);
    };
    for (const h of r.simulated) touch(h, [], ['sim_at']);
    for (const h of r.chosen) {
      const fields: [string, string][] = [];
      const first = ['sim_at', 'considered_at'];
      if (r.sealed) {
        first.push('sealed_at');
        fields.push(['sealed_block_hash', r.sealed.blockHash]);
        if (r.sealed.minedBlockHash) fields.push(['mined_block_hash', r.sealed.minedBlockHash]);
        for (const s of r.sealed.submissions) fields.push([`relay:${s.relay}`, JSON.stringify({ timestamp: s.timestamp, accepted: s.accepted })]);
      }
      touch(h, fields, first);
    }
    if (r.simulated.length + r.chosen.length > 0) await m.exec();
  }

  /** The life of `hash` for `block` as `searcher` sent it, or undefined when that searcher never sent it (or it expired). */
  async read(searcher: Address, hash: Hash, block: bigint): Promise<BundleLife | undefined> {
    const h = await this.redis.hgetall(this.keyOf(block, hash));
    const received = h[receiptField(searcher)];
    if (!received) return undefined;
    const num = (v: string | undefined) => (v ? Number(v) : undefined);
    const relays = Object.entries(h)
      .filter(([k]) => k.startsWith('relay:'))
      .map(([k, v]) => ({ relay: k.slice(6), ...(JSON.parse(v) as { timestamp: string; accepted: boolean }) }))
      .sort((a, b) => a.relay.localeCompare(b.relay));
    return {
      receivedAt: Number(received),
      requiredTxs: (h.txs ? h.txs.split(',') : []) as Hash[],
      simulatedAt: num(h.sim_at),
      consideredAt: num(h.considered_at),
      sealedAt: num(h.sealed_at),
      sealedBlockHash: h.sealed_block_hash as Hash | undefined,
      minedBlockHash: h.mined_block_hash as Hash | undefined,
      relays,
    };
  }
}
