import type { BuilderMetrics } from '@acg/observability';
import type { Logger } from 'pino';
import {
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Block,
  type Hash,
  type Hex,
  type PublicClient,
  type TransactionSerialized,
} from 'viem';
import type { BundleIntake } from '@acg/bundles';
import type { OrderflowPool, StoredBundle } from '@acg/bundles';
import { signBidTrace, type BidTraceJson } from './relay/signing.js';
import type { RelaySubmission, RelaySubmitter } from './relay/submitter.js';
import type { ExecutionPayloadJson, SubmitBlockRequest } from './relay/types.js';
import { simulateBlock, type SimTx } from './simulate.js';

/** The builder's BLS identity: secret key, public key and the DOMAIN_APPLICATION_BUILDER domain. */
export interface BuilderSigner {
  secretKey: Hex;
  publicKey: Hex;
  domain: Uint8Array;
}

/** Options of {@link Bidder}. */
export interface BidderOptions {
  client: PublicClient;
  pool: OrderflowPool;
  intake: BundleIntake;
  submitter: RelaySubmitter;
  signer: BuilderSigner;
  feeRecipient: Address;
  /** BidTrace `proposer_pubkey` (48 bytes hex). */
  proposerPubkey: Hex;
  /** Seal the block on the node (anvil) so it lands on the dev chain. */
  devMining: boolean;
  /** Attempt every `slotMs` too (0: only on new heads and explicit `attempt()` calls). */
  slotMs: number;
  headPollMs: number;
  /** slot = (timestamp - genesis) / 12 when set; else the block number. */
  beaconGenesisTime?: number;
  log: Logger;
  /** Counts bundles simulated and blocks submitted (`acg_builder_*`). */
  metrics?: Pick<BuilderMetrics, 'bundlesSimulated' | 'blockSubmitted'>;
}

/** Why a bundle was left out of an attempt. */
export interface SkippedBundle {
  bundle_hash: Hash;
  searcher: Address;
  reason: string;
}

/** The bid of an attempt: the sealed block, its value and what each relay answered. */
export interface Bid {
  /** Wei paid to the proposer's fee recipient (coinbase balance delta of the sealed block). */
  value: bigint;
  blockNumber: bigint;
  blockHash: Hash;
  txCount: number;
  /** Block transactions in order (hashes). */
  txHashes: Hash[];
  submissions: RelaySubmission[];
}

/** One block-construction attempt for `target`. */
export interface AttemptResult {
  target: bigint;
  /** Bundle hashes in the block, in block order. */
  included: Hash[];
  skipped: SkippedBundle[];
  /** Public mempool transactions in the block. */
  mempoolTxs: number;
  /** null when the attempt produced no bid (nothing to build, or not sealable); `reason` says why. */
  bid: Bid | null;
  reason?: string;
}

interface Evaluation {
  ok: boolean;
  txs: SimTx[];
  value: bigint;
  gasUsed: bigint;
  reason?: string;
}

const SIM_CONCURRENCY = 8;

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/**
 * The bidder (DESIGN "Bundle submission"): on each new head N (and every `slotMs`), builds block
 * N+1 from the orderflow pool — simulates every candidate bundle alone with `eth_simulateV1`,
 * orders them by the value they pay the coinbase, adds them greedily while each still simulates
 * cleanly after the ones already chosen (no shared transaction, no nonce clash, no unallowed
 * revert), then appends the valid public mempool transactions. On the dev chain it seals that
 * block (anvil), then signs the BidTrace with the builder BLS key and submits the attempt to every
 * relay (always-submit). One attempt runs at a time per process.
 */
export class Bidder {
  private chain: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private lastHead = -1n;
  private stopped = false;

  constructor(private readonly opts: BidderOptions) {}

  /** Starts the head watcher and the slot timer. */
  start(): void {
    this.stopped = false;
    if (this.opts.headPollMs > 0) {
      const poll = async () => {
        try {
          const head = await this.opts.client.getBlockNumber({ cacheTime: 0 });
          if (head > this.lastHead) {
            const first = this.lastHead < 0n;
            this.lastHead = head;
            this.opts.intake.noteHead(head);
            if (!first) void this.attempt(head + 1n, { onlyIfOrderflow: true }).catch(() => undefined);
          }
        } catch (e) {
          this.opts.log.warn({ err: (e as Error).message }, 'head poll failed');
        }
      };
      void poll();
      this.timers.push(setInterval(poll, this.opts.headPollMs));
    }
    if (this.opts.slotMs > 0) {
      this.timers.push(setInterval(() => void this.attempt(undefined, { mineEmpty: true }).catch(() => undefined), this.opts.slotMs));
    }
    for (const t of this.timers) t.unref();
  }

  /** Stops the timers; an attempt already running finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.chain.catch(() => undefined);
  }

  /**
   * Runs one block-construction attempt for `target` (default: head + 1), after any running one.
   * `onlyIfOrderflow`: skip quietly when the pool holds nothing for the target.
   * `mineEmpty`: on the dev chain, mine an empty block when there is nothing to build (a slot passes).
   */
  attempt(target?: bigint, flags: { onlyIfOrderflow?: boolean; mineEmpty?: boolean } = {}): Promise<AttemptResult> {
    const run = this.chain.then(() => this.run(target, flags));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async run(wanted: bigint | undefined, flags: { onlyIfOrderflow?: boolean; mineEmpty?: boolean }): Promise<AttemptResult> {
    const { client, pool, log } = this.opts;
    const parent = await client.getBlock({ blockTag: 'latest' });
    const target = wanted ?? parent.number + 1n;
    const empty = (reason: string, skipped: SkippedBundle[] = []): AttemptResult => ({ target, included: [], skipped, mempoolTxs: 0, bid: null, reason });
    if (this.stopped && wanted === undefined) return empty('stopped');
    if (target !== parent.number + 1n) return empty(`head is ${parent.number}: block ${target} is not the next block`);
    await pool.dropBlock(parent.number).catch(() => undefined);

    await this.captureMempool(target);
    const [bundles, mempool] = await Promise.all([pool.bundlesFor(target), pool.mempoolFor(target)]);
    if (flags.onlyIfOrderflow && bundles.length === 0 && mempool.length === 0) return empty('no orderflow');

    const timestamp = BigInt(Math.max(Number(parent.timestamp) + 1, Math.floor(Date.now() / 1000)));
    const simTarget = { parent: parent.number, feeRecipient: this.opts.feeRecipient, timestamp };
    const nonces = new Map<string, number>();
    const skipped: SkippedBundle[] = [];
    const skip = (b: StoredBundle, reason: string) => skipped.push({ bundle_hash: b.bundle_hash, searcher: b.searcher, reason });

    const inWindow = bundles.filter((b) => {
      if (b.min_timestamp && BigInt(b.min_timestamp) > timestamp) {
        skip(b, `minTimestamp ${b.min_timestamp} is after the block timestamp ${timestamp}`);
        return false;
      }
      if (b.max_timestamp && BigInt(b.max_timestamp) < timestamp) {
        skip(b, `maxTimestamp ${b.max_timestamp} is before the block timestamp ${timestamp}`);
        return false;
      }
      return true;
    });
    const evaluate = async (prefix: SimTx[], b: StoredBundle): Promise<Evaluation> => {
      const reverting = new Set(b.reverting_tx_hashes);
      const dropping = new Set(b.dropping_tx_hashes);
      let txs: SimTx[] = b.txs.map((t) => ({ raw: t.raw, hash: t.hash, from: t.from, nonce: t.nonce }));
      for (let round = 0; round <= b.txs.length; round++) {
        const sim = await simulateBlock(client, simTarget, [...prefix, ...txs], nonces);
        if (!sim.ok) return { ok: false, txs, value: 0n, gasUsed: 0n, reason: `simulation refused: ${sim.error}` };
        const mine = sim.txs.slice(prefix.length);
        const drop = new Set<Hash>();
        for (const r of mine) {
          if (r.status === 'success' || (r.status === 'reverted' && reverting.has(r.hash))) continue;
          if (dropping.has(r.hash) || reverting.has(r.hash)) drop.add(r.hash);
          else return { ok: false, txs, value: 0n, gasUsed: 0n, reason: `transaction ${r.hash} ${r.status}${r.reason ? ` (${r.reason})` : ''}` };
        }
        if (drop.size === 0) {
          const value = mine.reduce((a, r) => a + r.gasFees + r.coinbaseTransfer, 0n);
          return { ok: true, txs, value, gasUsed: mine.reduce((a, r) => a + r.gasUsed, 0n) };
        }
        txs = txs.filter((t) => !drop.has(t.hash));
        if (txs.length === 0) return { ok: false, txs, value: 0n, gasUsed: 0n, reason: 'every transaction was dropped' };
      }
      return { ok: false, txs, value: 0n, gasUsed: 0n, reason: 'did not settle' };
    };

    // 1. each bundle alone, 2. greedy by value with re-simulation on top of the chosen ones
    const alone = await mapLimit(inWindow, SIM_CONCURRENCY, (b) => evaluate([], b));
    const valid = alone.filter((e) => e.ok).length;
    this.opts.metrics?.bundlesSimulated(valid, alone.length - valid);
    const ranked = inWindow
      .map((b, i) => ({ b, e: alone[i] }))
      .filter(({ b, e }) => {
        if (!e.ok) skip(b, e.reason!);
        return e.ok;
      })
      .sort((x, y) => (y.e.value > x.e.value ? 1 : y.e.value < x.e.value ? -1 : x.b.received_at - y.b.received_at));
    const blockTxs: SimTx[] = [];
    const used = new Set<string>();
    const included: Hash[] = [];
    let gasUsed = 0n;
    for (const { b } of ranked) {
      const clash = b.txs.find((t) => used.has(t.hash));
      if (clash) {
        skip(b, `transaction ${clash.hash} is already in the block (another bundle)`);
        continue;
      }
      const e = await evaluate(blockTxs, b);
      if (!e.ok) {
        skip(b, `conflicts with the bundles chosen before it: ${e.reason}`);
        continue;
      }
      if (gasUsed + e.gasUsed > parent.gasLimit) {
        skip(b, 'does not fit in the block gas limit');
        continue;
      }
      blockTxs.push(...e.txs);
      for (const t of e.txs) used.add(t.hash);
      gasUsed += e.gasUsed;
      included.push(b.bundle_hash);
    }
    // 3. public mempool transactions after the bundles
    let mempoolTxs = 0;
    const candidates = (
      await Promise.all(
        mempool
          .filter((m) => !used.has(m.hash))
          .map(async (m) => {
            try {
              const from = await recoverTransactionAddress({ serializedTransaction: m.raw as TransactionSerialized });
              return { raw: m.raw, hash: m.hash, from, nonce: parseTransaction(m.raw as TransactionSerialized).nonce ?? 0 } satisfies SimTx;
            } catch {
              return undefined;
            }
          }),
      )
    ).filter((x): x is SimTx => x !== undefined);
    if (candidates.length > 0) {
      const sim = await simulateBlock(client, simTarget, [...blockTxs, ...candidates], nonces);
      if (sim.ok) {
        for (const r of sim.txs.slice(blockTxs.length)) {
          if (r.status === 'invalid' || gasUsed + r.gasUsed > parent.gasLimit) continue;
          blockTxs.push(candidates.find((c) => c.hash === r.hash)!);
          gasUsed += r.gasUsed;
          mempoolTxs++;
        }
      }
    }

    if (blockTxs.length === 0) {
      if (flags.mineEmpty && this.opts.devMining) await this.devRpc('evm_mine', []).catch(() => undefined);
      return {
        target,
        included,
        skipped,
        mempoolTxs,
        bid: null,
        reason: bundles.length + mempool.length === 0 ? 'no orderflow' : 'no valid bundle or transaction',
      };
    }
    if (!this.opts.devMining) {
      log.info(
        { target: String(target), bundles: included.length, txs: blockTxs.length },
        'attempt has a block but no sealer (BUILDER_DEV_MINING off): not submitted',
      );
      return { target, included, skipped, mempoolTxs, bid: null, reason: 'no sealer: block payloads are sealed on the dev chain only' };
    }
    const sealed = await this.sealOnDevChain(parent, blockTxs);
    if (!sealed) return { target, included: [], skipped, mempoolTxs: 0, bid: null, reason: 'the head moved while sealing; retried at the next head' };
    await pool.dropBlock(target).catch(() => undefined);
    const request = this.submission(sealed.block, sealed.raws, sealed.value);
    const submissions = await this.opts.submitter.submitAll(request);
    this.opts.metrics?.blockSubmitted(included.length);
    const bid: Bid = {
      value: sealed.value,
      blockNumber: sealed.block.number!,
      blockHash: sealed.block.hash!,
      txCount: sealed.raws.length,
      txHashes: (sealed.block.transactions as { hash: Hash }[]).map((t) => t.hash),
      submissions,
    };
    log.info(
      {
        target: String(target),
        bundles: included.length,
        txs: bid.txCount,
        value_wei: String(bid.value),
        accepted: submissions.filter((s) => s.accepted).length,
      },
      'block built and submitted to relays',
    );
    return { target, included, skipped, mempoolTxs, bid };
  }

  private async devRpc<T = unknown>(method: string, params: unknown[]): Promise<T> {
    return (await this.opts.client.request({ method: method as never, params: params as never })) as T;
  }

  /** Copies the node's pending public transactions into the pool of `target` (where the node exposes `txpool_content`). */
  private async captureMempool(target: bigint): Promise<void> {
    let content: { pending?: Record<string, Record<string, { hash: Hash }>> };
    try {
      content = await this.devRpc('txpool_content', []);
    } catch {
      return;
    }
    const hashes = Object.values(content.pending ?? {}).flatMap((byNonce) => Object.values(byNonce).map((t) => t.hash));
    if (hashes.length === 0) return;
    const raws = await Promise.all(hashes.map((h) => this.devRpc<Hex | null>('eth_getRawTransactionByHash', [h]).catch(() => null)));
    await this.opts.pool.addMempoolTxs(
      target,
      hashes.flatMap((hash, i) => (raws[i] ? [{ hash, raw: raws[i]! }] : [])),
    );
  }

  /**
   * Seals `txs` as the next block on anvil, in this order: automine off, pending public
   * transactions taken out (`anvil_dropTransaction`, re-sent after ours), coinbase set to the fee
   * recipient, our transactions sent in order, `evm_mine`, automine restored. Needs anvil's
   * `--order fifo` for the order to hold. Returns undefined when the head moved meanwhile.
   */
  private async sealOnDevChain(parent: Block, txs: SimTx[]): Promise<{ block: Block; raws: Hex[]; value: bigint } | undefined> {
    await this.devRpc('evm_setAutomine', [false]);
    let block: Block | undefined;
    try {
      const head = await this.opts.client.getBlockNumber({ cacheTime: 0 });
      if (head !== parent.number) return undefined;
      type TxPool = { pending?: Record<string, Record<string, { hash: Hash }>> };
      const content = await this.devRpc<TxPool>('txpool_content', []).catch((): TxPool => ({ pending: {} }));
      const pendingHashes = Object.values(content.pending ?? {}).flatMap((byNonce) => Object.values(byNonce).map((t) => t.hash));
      const ours = new Set(txs.map((t) => t.hash));
      const held: Hex[] = [];
      for (const h of pendingHashes) {
        if (ours.has(h)) continue;
        const raw = await this.devRpc<Hex | null>('eth_getRawTransactionByHash', [h]).catch(() => null);
        await this.devRpc('anvil_dropTransaction', [h]).catch(() => undefined);
        if (raw) held.push(raw);
      }
      await this.devRpc('anvil_setCoinbase', [this.opts.feeRecipient]);
      for (const t of txs) {
        if (pendingHashes.includes(t.hash)) await this.devRpc('anvil_dropTransaction', [t.hash]).catch(() => undefined);
        await this.devRpc('eth_sendRawTransaction', [t.raw]);
      }
      for (const raw of held) await this.devRpc('eth_sendRawTransaction', [raw]).catch(() => undefined);
      await this.devRpc('evm_mine', []);
      block = await this.opts.client.getBlock({ blockNumber: parent.number + 1n, includeTransactions: true });
    } finally {
      await this.devRpc('evm_setAutomine', [true]).catch(() => undefined);
    }
    // A transaction that arrived between evm_mine and automine on would wait for the next one.
    const left = await this.devRpc<{ pending?: string }>('txpool_status', []).catch(() => ({ pending: '0x0' }));
    if (left.pending && BigInt(left.pending) > 0n) await this.devRpc('evm_mine', []).catch(() => undefined);
    const [before, after] = await Promise.all([
      this.opts.client.getBalance({ address: this.opts.feeRecipient, blockNumber: parent.number }),
      this.opts.client.getBalance({ address: this.opts.feeRecipient, blockNumber: block.number! }),
    ]);
    const raws = await Promise.all(
      (block.transactions as { hash: Hash }[]).map(
        async (t) => txs.find((x) => x.hash === t.hash)?.raw ?? (await this.devRpc<Hex>('eth_getRawTransactionByHash', [t.hash])),
      ),
    );
    return { block, raws, value: after - before };
  }

  /** The signed `SubmitBlockRequest` (Deneb) for a sealed block. */
  private submission(block: Block, raws: Hex[], value: bigint): SubmitBlockRequest {
    const genesis = this.opts.beaconGenesisTime;
    const slot = genesis !== undefined ? (block.timestamp - BigInt(genesis)) / 12n : block.number!;
    const message: BidTraceJson = {
      slot: slot.toString(),
      parent_hash: block.parentHash,
      block_hash: block.hash!,
      builder_pubkey: this.opts.signer.publicKey,
      proposer_pubkey: this.opts.proposerPubkey,
      proposer_fee_recipient: block.miner,
      gas_limit: block.gasLimit.toString(),
      gas_used: block.gasUsed.toString(),
      value: value.toString(),
    };
    const execution_payload: ExecutionPayloadJson = {
      parent_hash: block.parentHash,
      fee_recipient: block.miner,
      state_root: block.stateRoot,
      receipts_root: block.receiptsRoot,
      logs_bloom: block.logsBloom!,
      prev_randao: block.mixHash,
      block_number: block.number!.toString(),
      gas_limit: block.gasLimit.toString(),
      gas_used: block.gasUsed.toString(),
      timestamp: block.timestamp.toString(),
      extra_data: block.extraData,
      base_fee_per_gas: (block.baseFeePerGas ?? 0n).toString(),
      block_hash: block.hash!,
      transactions: raws,
      withdrawals: (block.withdrawals ?? []).map((w) => ({
        index: BigInt(w.index).toString(),
        validator_index: BigInt(w.validatorIndex).toString(),
        address: w.address,
        amount: BigInt(w.amount).toString(),
      })),
      blob_gas_used: (block.blobGasUsed ?? 0n).toString(),
      excess_blob_gas: (block.excessBlobGas ?? 0n).toString(),
    };
    return {
      message,
      execution_payload,
      blobs_bundle: { commitments: [], proofs: [], blobs: [] },
      signature: signBidTrace(message, this.opts.signer.secretKey, this.opts.signer.domain),
    };
  }
}
