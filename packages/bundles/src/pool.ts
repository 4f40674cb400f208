import type { RedisKeys } from '@acg/redis';
import { addBundle } from './commands/index.js';
import { BUNDLE_STATS_TTL_SECONDS, BundleStatsStore, receiptField } from './bundleStats.js';
import type { Redis } from 'ioredis';
import type { Address, Hash, Hex } from 'viem';
import { accountKeys } from '@acg/accounts/commands';
import { bundleKeys } from './commands/keys.js';
import { invalidParams } from './errors.js';
import { RefundLedger } from './refunds.js';

/** How long a target block's pool lives after its last write, seconds (covers MAX_BLOCKS_AHEAD of mainnet slots). */
export const POOL_TTL_SECONDS = 4 * 3600;

/** How a bundle came in and how it is paid: over `/rpc` (owed, settled out-of-band) or through x402 execute (paid). */
export type BundleVia = { kind: 'rpc' } | { kind: 'x402'; executionId: string; paymentTxHash: Hex };

/** A bundle as the orderflow pool stores it (JSON in Redis; block numbers as decimal strings). */
export interface StoredBundle {
  bundle_hash: Hash;
  /** Searcher identity: the recovered X-Bundle-Signature address, or the x402 payer. */
  searcher: Address;
  block_number: string;
  txs: { raw: Hex; hash: Hash; from: Address; nonce: number }[];
  min_timestamp?: number;
  max_timestamp?: number;
  reverting_tx_hashes: Hash[];
  dropping_tx_hashes: Hash[];
  replacement_uuid?: string;
  refund_percent?: number;
  refund_recipient?: Address;
  refund_tx_hashes: Hash[];
  /** UNIX ms. */
  received_at: number;
  via: BundleVia;
  /** BuilderNet `replacementNonce` (Titan `replacementSeqNumber`): orders bundles under one `replacement_uuid`. */
  replacement_nonce?: number;
  /** BuilderNet `refundIdentity`: the identity credited with this bundle's refunds (default: `searcher`). */
  refund_identity?: Address;
  /** BuilderNet `delayedRefund`: the `refund_percent` refund is recorded pending, not paid in the block. */
  delayed_refund?: boolean;
  /** Placed after every other bundle of the block (BuilderNet `desiredState: "BottomOfBlock"`, Titan `eth_sendEndOfBlockBundle`). */
  bottom_of_block?: boolean;
  /** Contracts a bottom-of-block bundle targets: it is included only when the block before it touched one of them. */
  target_addresses?: Address[];
  /** Storage slots per target address (index-aligned; checked for shape, matched at the address). */
  target_slots?: Hash[][];
}

/** How one accepted bundle was priced: `paid` through x402, `debited` from the metered account, or recorded as `owed`. */
export type Charged = 'paid' | 'debited' | 'owed';

/** A public transaction seen in the node's mempool, stored for the block it may land in. */
export interface MempoolTx {
  hash: Hash;
  raw: Hex;
}

/**
 * The orderflow pool (docs/decisions.md "Bundle submission"): bundles and mempool transactions in Redis keyed
 * by target block, shared by every replica. Replacement and cancellation go by `replacementUuid`,
 * scoped to the searcher who sent it.
 *
 * Keys: `builder:pool:<block>` (hash `<searcher>:<bundle_hash>` → JSON StoredBundle),
 * `builder:mempool:<block>` (hash tx hash → raw tx), `builder:uuid:<searcher>:<uuid>` (→ `<block>|<field>`),
 * `builder:uuidnonce:<searcher>:<uuid>` (→ `<replacementNonce>|<bundle_hash>` of the last accepted; kept after a cancel),
 * `builder:stats` and `builder:searcher:<address>` counters (see health.ts).
 */
export class OrderflowPool {
  /** The per-bundle life records the pool writes receipts into. */
  readonly stats: BundleStatsStore;
  /** The refunds of landed blocks (README "Bundle API of 2026"). */
  readonly refunds: RefundLedger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    this.stats = new BundleStatsStore(redis, keys);
    this.refunds = new RefundLedger(redis, keys);
  }

  private field(b: Pick<StoredBundle, 'searcher' | 'bundle_hash'>): string {
    return `${b.searcher.toLowerCase()}:${b.bundle_hash}`;
  }

  /**
   * Adds `bundle` to the pool of its target block (and of each block in `alsoFor`: an MEV-Share
   * bundle with `inclusion.maxBlock`), records its receipt for `flashbots_getBundleStatsV2`,
   * counts it once (`bids_received`, and per searcher `bundles`), prices it once, and removes the
   * searcher's previous bundle with the same `replacement_uuid`. Pricing (`priceBaseUnits`): an x402
   * bundle adds to `paid_base_units`; any other is debited from the searcher's metered account when
   * that holds the price (`debited_base_units`, a usage line `builder.send_bundle`), else added to
   * `owed_base_units`. Everything is one Lua script (`bundle_add.lua`): atomic, so of two concurrent
   * replacements the later always removes the earlier, a bundle is never queued unpriced, and
   * concurrent debits never take an account below zero; and one round trip.
   * Priced once (issue 23 item 5): a searcher's bundle is identified by its first target block and
   * its `replacement_uuid`, else its transactions (`bundle_hash`); sending it again (the same signed
   * body replayed, by the searcher or anyone holding it) stores it again but neither counts nor
   * prices it again, for {@link POOL_TTL_SECONDS}. x402 bundles are paid per call and not deduplicated.
   * @returns `replaced`: the bundle hash that was replaced, if any; `charged`: how it was priced
   *   (for a resend, how the first was); `resent`: true when it was already priced; `receivedAtMs`: this
   *   searcher's first receipt of the bundle for its first block (UNIX ms; a resend answers the first one's).
   */
  async add(
    bundle: StoredBundle,
    priceBaseUnits: bigint,
    opts: { alsoFor?: readonly bigint[]; nonceField?: string } = {},
  ): Promise<{ replaced?: Hash; charged: Charged; resent: boolean; receivedAtMs: number }> {
    const field = this.field(bundle);
    const searcher = bundle.searcher.toLowerCase();
    const dropping = new Set(bundle.dropping_tx_hashes);
    const blocks = [bundle.block_number, ...(opts.alsoFor ?? []).map(String)];
    const at = new Date(bundle.received_at).toISOString();
    const uuidValue = bundle.replacement_uuid ? `${bundle.block_number}|${field}` : '';
    // a bundle's identity for pricing: the same replacementUuid in the same first block, else the same transactions and block
    const identity = bundle.replacement_uuid
      ? `${bundle.block_number}:uuid:${bundle.replacement_uuid.toLowerCase()}`
      : `${bundle.block_number}:${bundle.bundle_hash}`;
    const added = await addBundle(this.redis, {
      statsKey: bundleKeys.builder(this.keys, 'stats'),
      searcherKey: bundleKeys.builder(this.keys, 'searcher', searcher),
      accountKey: accountKeys.account(this.keys, searcher),
      usageKey: accountKeys.accountUsage(this.keys, searcher),
      uuidKey: bundleKeys.builder(this.keys, 'uuid', searcher, bundle.replacement_uuid ?? '-'),
      uuidValue,
      pricedKey: bundleKeys.builder(this.keys, 'priced', searcher, identity),
      nonceKey: bundleKeys.builder(this.keys, 'uuidnonce', searcher, bundle.replacement_uuid ?? '-'),
      replacementNonce: bundle.replacement_nonce,
      bundleHash: bundle.bundle_hash,
      blocks: blocks.map((block) => ({
        poolKey: bundleKeys.builder(this.keys, 'pool', block),
        statsKey: this.stats.keyOf(block, bundle.bundle_hash),
        json: JSON.stringify(block === bundle.block_number ? bundle : { ...bundle, block_number: block }),
      })),
      field,
      receiptField: receiptField(bundle.searcher),
      receivedAtMs: bundle.received_at,
      receivedAtIso: at,
      requiredTxs: bundle.txs
        .map((t) => t.hash)
        .filter((h) => !dropping.has(h))
        .join(','),
      poolTtlSeconds: POOL_TTL_SECONDS,
      statsTtlSeconds: BUNDLE_STATS_TTL_SECONDS,
      amount: priceBaseUnits,
      paidBy: bundle.via.kind === 'x402' ? 'x402' : 'rpc',
      usageLine: JSON.stringify({
        kind: 'debit',
        amount: priceBaseUnits.toString(),
        item: 'builder.send_bundle',
        ref: `bundle:${bundle.block_number}:${bundle.bundle_hash}`,
        at,
      }),
      maxUsageLines: 1000,
    });
    const nonceField = opts.nonceField ?? 'replacementNonce';
    if (added.refused === 'stale_nonce')
      throw invalidParams(nonceField, `${bundle.replacement_nonce} is not above ${added.lastNonce}, the last accepted for this replacementUuid`, {
        reason_code: 'stale_replacement_nonce',
        last_nonce: added.lastNonce,
      });
    if (added.refused !== undefined)
      throw invalidParams(nonceField, `required: bundles under this replacementUuid are ordered by ${nonceField} (last accepted ${added.lastNonce})`, {
        reason_code: 'replacement_nonce_required',
        last_nonce: added.lastNonce,
      });
    const { charged, previous, resent, receivedAtMs } = added;
    if (!previous || previous === uuidValue) return { charged, resent, receivedAtMs };
    const [block, prevField] = previous.split('|');
    await this.redis.hdel(bundleKeys.builder(this.keys, 'pool', block), prevField);
    return { replaced: prevField.split(':')[1] as Hash, charged, resent, receivedAtMs };
  }

  /**
   * Cancels the searcher's bundle with `replacementUuid` (docs/decisions.md: scoped to the searcher).
   * @returns the cancelled bundle hash, or undefined when there was none.
   */
  async cancel(searcher: Address, replacementUuid: string): Promise<Hash | undefined> {
    const ref = await this.redis.getdel(bundleKeys.builder(this.keys, 'uuid', searcher.toLowerCase(), replacementUuid.toLowerCase()));
    if (!ref) return undefined;
    const [block, field] = ref.split('|');
    const removed = await this.redis.hdel(bundleKeys.builder(this.keys, 'pool', block), field);
    return removed > 0 ? (field.split(':')[1] as Hash) : undefined;
  }

  /** Bundles targeting `block`, oldest first. */
  async bundlesFor(block: bigint): Promise<StoredBundle[]> {
    const h = await this.redis.hgetall(bundleKeys.builder(this.keys, 'pool', block.toString()));
    return Object.values(h)
      .map((v) => JSON.parse(v) as StoredBundle)
      .sort((a, b) => a.received_at - b.received_at);
  }

  /** Stores public mempool transactions as candidates for `block`. */
  async addMempoolTxs(block: bigint, txs: readonly MempoolTx[]): Promise<void> {
    if (txs.length === 0) return;
    const key = bundleKeys.builder(this.keys, 'mempool', block.toString());
    await this.redis
      .multi()
      .hset(key, Object.fromEntries(txs.map((t) => [t.hash, t.raw])))
      .expire(key, POOL_TTL_SECONDS)
      .exec();
  }

  /** Mempool transactions stored for `block`. */
  async mempoolFor(block: bigint): Promise<MempoolTx[]> {
    const h = await this.redis.hgetall(bundleKeys.builder(this.keys, 'mempool', block.toString()));
    return Object.entries(h).map(([hash, raw]) => ({ hash: hash as Hash, raw: raw as Hex }));
  }

  /** Forgets the pool of a block that has been built or has passed. */
  async dropBlock(block: bigint): Promise<void> {
    await this.redis.del(bundleKeys.builder(this.keys, 'pool', block.toString()), bundleKeys.builder(this.keys, 'mempool', block.toString()));
  }
}
