import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Address, Hash, PublicClient } from 'viem';
import { addressList, bundleHash, validateSendBundleParams, type ValidBundleParams } from './bundle.js';
import { validateMevSendBundleParams } from './mevShare.js';
import { OrderflowPool, type BundleVia, type Charged, type StoredBundle } from './pool.js';
import { invalidParams } from './errors.js';

/** Options of {@link BundleIntake}. */
export interface BundleIntakeOptions {
  redis: Redis;
  keys: RedisKeys;
  /** viem client of the Ethereum node the bundles target (head and chain id). */
  client: PublicClient;
  /** Price per bundle, USDC base units (default 100000 = 0.10 USD, docs/spec-notes.md 8). */
  bundlePriceBaseUnits?: bigint;
  /** How long a read head block number is reused, ms (default 250). */
  headMaxAgeMs?: number;
}

/** What {@link BundleIntake.submit} accepted. */
export interface SubmitBundleResult {
  bundleHash: Hash;
  blockNumber: bigint;
  searcher: Address;
  /** Hash of the searcher's bundle this one replaced (same replacementUuid), if any. */
  replaced?: Hash;
  /** Last block the bundle may land in (`inclusion.maxBlock` of `mev_sendBundle`; else `blockNumber`). */
  maxBlock: bigint;
  /** How it was priced: `paid` (x402), `debited` from the searcher's metered account, or `owed` (for a resend: how the first was). */
  charged: Charged;
  /** True when this searcher's bundle was already priced: a resend, answered alike, nothing charged. */
  resent: boolean;
  /** When the builder first received it from this searcher for its first block, UNIX ms (BuilderNet's `receivedTimestampMs`; a resend answers the first one's, as `flashbots_getBundleStatsV2` does). */
  receivedTimestampMs: number;
  /** BuilderNet's bundle format version, when the request gave one (`eth_sendBundle` then answers `{bundleHash, receivedTimestampMs}`). */
  version?: 'v1' | 'v2';
}

/** The fields of Titan's `eth_sendEndOfBlockBundle` (docs.titanbuilder.xyz/api/eth_sendendofblockbundle). */
const END_OF_BLOCK_FIELDS = ['txs', 'blockNumber', 'revertingTxHashes', 'targetPools', 'replacementUuid', 'replacementSeqNumber'];

/**
 * Intake of bundles, shared by `eth_sendBundle` on /rpc and the `builder.send_bundle` capability
 * of the gateway (x402): validate → store in the orderflow pool → count and price. Stateless
 * apart from a short cache of the head and chain id; everything else is in Redis.
 */
export class BundleIntake {
  readonly pool: OrderflowPool;
  private head?: { value: bigint; at: number; pending?: Promise<bigint> };
  private chainIdValue?: Promise<number>;

  constructor(private readonly opts: BundleIntakeOptions) {
    this.pool = new OrderflowPool(opts.redis, opts.keys);
  }

  /** Chain id of the target node (read once). */
  chainId(): Promise<number> {
    this.chainIdValue ??= this.opts.client.getChainId().catch((e) => {
      this.chainIdValue = undefined;
      throw e;
    });
    return this.chainIdValue;
  }

  /** The node's head block number, reused for `headMaxAgeMs`. */
  async headBlock(): Promise<bigint> {
    const maxAge = this.opts.headMaxAgeMs ?? 250;
    const h = this.head;
    if (h && Date.now() - h.at <= maxAge) return h.value;
    if (h?.pending) return h.pending;
    const pending = this.opts.client.getBlockNumber({ cacheTime: 0 }).then((value) => {
      this.head = { value, at: Date.now() };
      return value;
    });
    this.head = { value: h?.value ?? 0n, at: h?.at ?? 0, pending };
    try {
      return await pending;
    } finally {
      if (this.head?.pending === pending) this.head.pending = undefined;
    }
  }

  /** Tells the intake a new head was seen (the bidder's head watcher), so validation never lags it. */
  noteHead(value: bigint): void {
    if (!this.head || value >= this.head.value) this.head = { value, at: Date.now() };
  }

  /**
   * Validates the one params object of `eth_sendBundle` and queues the bundle for its target block.
   * @param searcher - Identity of the sender: recovered X-Bundle-Signature address or x402 payer.
   * @param params - The params object (Flashbots fields plus those of docs/decisions.md "Bundle submission").
   * @param via - How it is paid (`rpc`: recorded as owed; `x402`: recorded as paid).
   * @throws {RpcError} -32602 naming the bad field.
   */
  async submit(searcher: Address, params: Record<string, unknown>, via: BundleVia = { kind: 'rpc' }): Promise<SubmitBundleResult> {
    const [chainId, head] = await Promise.all([this.chainId(), this.headBlock()]);
    const valid = await validateSendBundleParams(params, { chainId, head });
    return this.store(searcher, valid, via);
  }

  /**
   * Validates the one params object of `mev_sendBundle` (MEV-Share v0.1, {@link validateMevSendBundleParams})
   * and queues the bundle for every block from `inclusion.block` to `inclusion.maxBlock`, counted and priced once.
   * @throws {RpcError} -32602 naming the bad field.
   */
  async submitMevShare(searcher: Address, params: Record<string, unknown>, via: BundleVia = { kind: 'rpc' }): Promise<SubmitBundleResult> {
    const [chainId, head] = await Promise.all([this.chainId(), this.headBlock()]);
    const { bundle, maxBlock } = validateMevSendBundleParams(params, { chainId, head });
    return this.store(searcher, bundle, via, maxBlock);
  }

  /**
   * Titan's `eth_sendEndOfBlockBundle` `{txs, blockNumber?, revertingTxHashes?, targetPools, replacementUuid?,
   * replacementSeqNumber?}`: a bottom-of-block bundle (placed after every other bundle, included only when the block
   * before it touched one of `targetPools`). `blockNumber` defaults to the next block; `replacementSeqNumber` orders
   * bundles under one uuid like BuilderNet's `replacementNonce` (0 or absent: receive order).
   * @throws {RpcError} -32602 naming the bad field (`targetPools[1]`, `replacementSeqNumber`, ...).
   */
  async submitEndOfBlock(searcher: Address, params: Record<string, unknown>, via: BundleVia = { kind: 'rpc' }): Promise<SubmitBundleResult> {
    for (const key of Object.keys(params)) if (!END_OF_BLOCK_FIELDS.includes(key)) throw invalidParams(key, 'unknown field');
    const [chainId, head] = await Promise.all([this.chainId(), this.headBlock()]);
    const seq = params.replacementSeqNumber;
    if (seq !== undefined && seq !== null) {
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
        throw invalidParams('replacementSeqNumber', 'must be a non-negative integer (a JSON number below 2^53)');
      if (seq > 0 && (params.replacementUuid === undefined || params.replacementUuid === null))
        throw invalidParams('replacementSeqNumber', 'needs replacementUuid: the sequence orders bundles sharing one uuid');
    }
    const targetAddresses = addressList(params.targetPools, 'targetPools', true);
    const blockNumber = params.blockNumber ?? `0x${(head + 1n).toString(16)}`;
    const valid = await validateSendBundleParams(
      {
        txs: params.txs,
        blockNumber,
        revertingTxHashes: params.revertingTxHashes,
        replacementUuid: params.replacementUuid,
        replacementNonce: typeof seq === 'number' && seq > 0 ? seq : undefined,
      },
      { chainId, head },
    );
    return this.store(searcher, { ...valid, bottomOfBlock: true, targetAddresses }, via, valid.blockNumber, 'replacementSeqNumber');
  }

  /** Queues an already validated bundle for `valid.blockNumber` up to `maxBlock` (see {@link submit}). */
  async store(searcher: Address, valid: ValidBundleParams, via: BundleVia, maxBlock = valid.blockNumber, nonceField?: string): Promise<SubmitBundleResult> {
    const hash = bundleHash(valid.txs.map((t) => t.hash));
    const stored: StoredBundle = {
      bundle_hash: hash,
      searcher,
      block_number: valid.blockNumber.toString(),
      txs: valid.txs.map(({ raw, hash: h, from, nonce }) => ({ raw, hash: h, from, nonce })),
      min_timestamp: valid.minTimestamp,
      max_timestamp: valid.maxTimestamp,
      reverting_tx_hashes: valid.revertingTxHashes,
      dropping_tx_hashes: valid.droppingTxHashes,
      replacement_uuid: valid.replacementUuid,
      refund_percent: valid.refundPercent,
      refund_recipient: valid.refundRecipient,
      refund_tx_hashes: valid.refundTxHashes,
      received_at: Date.now(),
      via,
      replacement_nonce: valid.replacementNonce,
      refund_identity: valid.refundIdentity,
      delayed_refund: valid.delayedRefund || undefined,
      bottom_of_block: valid.bottomOfBlock || undefined,
      target_addresses: valid.targetAddresses.length > 0 ? valid.targetAddresses : undefined,
      target_slots: valid.targetSlots.length > 0 ? valid.targetSlots : undefined,
    };
    const alsoFor: bigint[] = [];
    for (let b = valid.blockNumber + 1n; b <= maxBlock; b++) alsoFor.push(b);
    const { replaced, charged, resent, receivedAtMs } = await this.pool.add(stored, this.opts.bundlePriceBaseUnits ?? 100_000n, { alsoFor, nonceField });
    return {
      bundleHash: hash,
      blockNumber: valid.blockNumber,
      maxBlock,
      searcher,
      replaced,
      charged,
      resent,
      receivedTimestampMs: receivedAtMs,
      version: valid.version,
    };
  }

  /**
   * `eth_cancelBundle {replacementUuid}`: removes the searcher's bundle with that uuid.
   * @returns the cancelled bundle hash, or undefined when the searcher had none with that uuid.
   * @throws {RpcError} -32602 when `replacementUuid` is missing or not a string.
   */
  async cancel(searcher: Address, params: Record<string, unknown>): Promise<Hash | undefined> {
    for (const key of Object.keys(params)) if (key !== 'replacementUuid') throw invalidParams(key, 'unknown field');
    if (typeof params.replacementUuid !== 'string' || params.replacementUuid.length === 0 || params.replacementUuid.length > 100) {
      throw invalidParams('replacementUuid', 'required: the replacementUuid the bundle was sent with');
    }
    return this.pool.cancel(searcher, params.replacementUuid);
  }
}

const intakes = new WeakMap<object, WeakMap<object, BundleIntake>>();

/**
 * A {@link BundleIntake} for another process part (the `builder.send_bundle` capability run by
 * the gateway), sharing its Redis connection and Ethereum client; one per (redis, client) pair.
 *
 * @example
 * const result = await bundleIntakeFor({ redis, keys, client }).submit(payer, params, { kind: 'x402', executionId, paymentTxHash })
 */
export function bundleIntakeFor(opts: { redis: Redis; keys: RedisKeys; client: PublicClient; headMaxAgeMs?: number }): BundleIntake {
  let byClient = intakes.get(opts.redis);
  if (!byClient) {
    byClient = new WeakMap();
    intakes.set(opts.redis, byClient);
  }
  let intake = byClient.get(opts.client);
  if (!intake) {
    intake = new BundleIntake(opts);
    byClient.set(opts.client, intake);
  }
  return intake;
}
