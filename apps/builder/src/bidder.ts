import type { BuilderMetrics } from '@acg/observability';
import type { Logger } from 'pino';
import {
  parseTransaction,
  recoverTransactionAddress,
  stringToHex,
  type Address,
  type Block,
  type Hash,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionSerialized,
} from 'viem';
import type { BundleIntake } from '@acg/bundles';
import type { OrderflowPool, StoredBundle } from '@acg/bundles';
import type { BeaconPayloadAttributes } from './block/beaconAttributes.js';
import { nextExcessBlobGas, nextGasLimit } from './block/header.js';
import { devPayloadAttributes, type PayloadAttributes } from './block/payloadAttributes.js';
import { SealError, sealBlock, type SealedBlock } from './block/seal.js';
import { mineEmptyOnDevChain, mineOnDevChain } from './devMining.js';
import {
  CONTRACT_TRANSFER_GAS,
  planDelayedRefund,
  planRefund,
  proposerPayment,
  signCoinbaseTransfer,
  TRANSFER_GAS,
  type BundleOutcome,
  type PlannedRefund,
} from './payment.js';
import type { SlotProposer, ValidatorRegistrations } from './relay/registrations.js';
import { signBidTrace, type BidTraceJson } from './relay/signing.js';
import type { RelaySubmission, RelaySubmitter } from './relay/submitter.js';
import type { SubmitBlockRequest } from './relay/types.js';
import { submitBlockRequest, verifyPayloadBlockHash } from './relay/wire.js';
import { simulateBlock, type SimTx, type SimulationTarget } from './simulate.js';

/** The builder's BLS identity: secret key, public key and the DOMAIN_APPLICATION_BUILDER domain. */
export interface BuilderSigner {
  secretKey: Hex;
  publicKey: Hex;
  domain: Uint8Array;
}

/** What the startup check found about sealing on the node (see `checkSealer`). */
export interface SealerState {
  ok: boolean;
  reason?: string;
  /** Accept a zero state root from `eth_simulateV1` (anvil, the dev chain). */
  acceptZeroStateRoot: boolean;
}

/** Options of {@link Bidder}. */
export interface BidderOptions {
  client: PublicClient;
  pool: OrderflowPool;
  intake: BundleIntake;
  submitter: RelaySubmitter;
  registrations: ValidatorRegistrations;
  signer: BuilderSigner;
  /** The builder's coinbase: fee recipient of its blocks, signer of refunds and of the payment to the proposer. */
  coinbase: LocalAccount;
  sealer: SealerState;
  /** Bid policy: basis points of the coinbase profit paid to the proposer. */
  proposerShareBps: number;
  /** `extraData` of the blocks built (at most 32 bytes). */
  extraData?: Hex;
  /** Dev chain only: also mine each submitted block on the node (anvil methods) so that it lands. */
  devMining: boolean;
  /** Attempt every `slotMs` too (0: only on new heads and explicit `attempt()` calls). */
  slotMs: number;
  headPollMs: number;
  /** slot = (timestamp - genesis) / 12 when set; else the block number (the dev chain's slots). Unused with `beacon`. */
  beaconGenesisTime?: number;
  /**
   * The beacon node's payload attributes (slot, timestamp, prevRandao, withdrawals, parent beacon
   * block root of each proposal). Without it: the dev chain's stand-ins (`devPayloadAttributes`).
   */
  beacon?: BeaconPayloadAttributes;
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

/** A refund transaction in the block. */
export interface BidRefund extends PlannedRefund {
  tx_hash: Hash;
}

/**
 * A refund one bundle of the block earns (README "Bundle API of 2026"): in the block (`tx_hash`) or delayed
 * (`delayed`: recorded pending, no transaction), credited to `identity` (`refundIdentity`, else the signer).
 */
export interface BidRefundRecord {
  bundle_hash: Hash;
  searcher: Address;
  identity: Address;
  /** Where the ETH goes: `refundRecipient`, else the sender of the bundle's first transaction. */
  recipient: Address;
  /** Wei. */
  value: bigint;
  delayed: boolean;
  tx_hash?: Hash;
}

/** The bid of an attempt: the sealed block, its value and what each relay answered. */
export interface Bid {
  /** The BidTrace `slot`. */
  slot: bigint;
  /** Wei paid to the proposer by the block's last transaction (the BidTrace `value`). */
  value: bigint;
  /** The slot's proposer as the relays list it. */
  proposer: { pubkey: Hex; feeRecipient: Address };
  blockNumber: bigint;
  /** keccak256(RLP(header)) of the sealed block (the BidTrace `block_hash`). */
  blockHash: Hash;
  txCount: number;
  /** Block transactions in order (hashes), the refunds and the payment last. */
  txHashes: Hash[];
  refunds: BidRefund[];
  /** Every refund the block's bundles earn, in-block and delayed, with the identity credited. */
  refundRecords: BidRefundRecord[];
  /** The last transaction: coinbase → proposer fee recipient, `value` wei. */
  paymentTxHash: Hash;
  /** The signed submission, as sent to every listed relay. */
  request: SubmitBlockRequest;
  submissions: RelaySubmission[];
  /** Dev chain only: the block as mined on the node (its own hash and state root), when BUILDER_DEV_MINING is on. */
  mined?: { number: bigint; hash: Hash; txHashes: Hash[] };
}

/** One block-construction attempt for `target`. */
export interface AttemptResult {
  target: bigint;
  /** Bundle hashes in the block, in block order. */
  included: Hash[];
  skipped: SkippedBundle[];
  /** Public mempool transactions in the block. */
  mempoolTxs: number;
  /** null when the attempt produced no bid (nothing to build, no registered proposer, not sealable); `reason` says why. */
  bid: Bid | null;
  reason?: string;
}

interface Evaluation {
  ok: boolean;
  txs: SimTx[];
  value: bigint;
  /** Per transaction hash: what it paid the coinbase, wei. */
  valueByTx: Map<string, bigint>;
  gasUsed: bigint;
  /** Addresses the transactions called or that emitted their logs (lowercase): the state they touched. */
  touched: string[];
  reason?: string;
}

/** `extraData` of the blocks built when none is configured. */
export const DEFAULT_EXTRA_DATA: Hex = stringToHex('acg builder');

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
 * The bidder (docs/decisions.md "Bundle submission"): on each new head N (and every `slotMs`), builds block
 * N+1 for its slot, the same way on the dev chain and in production:
 * 1. the slot's proposer from the relays' validator registrations (no relay lists one: no bid);
 * 2. the public mempool transactions that simulate validly, then the bundles: each simulated alone
 *    with `eth_simulateV1`, ranked by what it pays the coinbase, added greedily while it still
 *    simulates cleanly after what is already in (no shared transaction, no nonce clash, no
 *    unallowed revert);
 * 3. a refund transaction per bundle with `refundPercent`, then the payment of the bid (the
 *    proposer's share of the coinbase profit) from the builder's coinbase to the proposer's
 *    registered `fee_recipient`, last;
 * 4. sealed against the node's state (`sealBlock`: `eth_simulateV1` with validation), its block hash
 *    checked the way a relay checks it, the BidTrace signed with the builder's BLS key, and the
 *    Electra `SubmitBlockRequest` sent to every relay listing the proposer (always-submit).
 * On the dev chain (`devMining`) the submitted block is then also mined on anvil (`devMining.ts`).
 * One attempt runs at a time per process.
 */
export class Bidder {
  private chain: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private lastHead = -1n;
  private stopped = false;
  private chainId?: number;

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

  /** The slot and timestamp of the block after `parent`: slot = block number on the dev chain, else the beacon slot. */
  private slotOf(parent: Block): { slot: bigint; timestamp: bigint } {
    const genesis = this.opts.beaconGenesisTime;
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (genesis === undefined) {
      const timestamp = parent.timestamp + 1n > now ? parent.timestamp + 1n : now;
      return { slot: parent.number! + 1n, timestamp };
    }
    const g = BigInt(genesis);
    const parentSlot = (parent.timestamp - g) / 12n;
    const nowSlot = now > g ? (now - g) / 12n : 0n;
    const slot = nowSlot > parentSlot ? nowSlot : parentSlot + 1n;
    return { slot, timestamp: g + slot * 12n };
  }

  /** The node's base fee of the next block (`eth_feeHistory`: its last entry is the block after the newest). */
  private async nextBaseFee(parent: Block): Promise<bigint> {
    const history = await this.opts.client.getFeeHistory({ blockCount: 1, blockNumber: parent.number!, rewardPercentiles: [] });
    const next = history.baseFeePerGas.at(-1);
    if (next === undefined) throw new SealError('the node returned no base fee in eth_feeHistory');
    return next;
  }

  /** Gas limit of a transfer from the coinbase to `to`: 21000, or more when `to` has code. */
  private async transferGas(to: Address, parent: bigint): Promise<bigint> {
    const code = await this.opts.client.getCode({ address: to, blockNumber: parent }).catch(() => undefined);
    return code && code !== '0x' ? CONTRACT_TRANSFER_GAS : TRANSFER_GAS;
  }

  private async run(wanted: bigint | undefined, flags: { onlyIfOrderflow?: boolean; mineEmpty?: boolean }): Promise<AttemptResult> {
    const { client, pool, log } = this.opts;
    const parent = await client.getBlock({ blockTag: 'latest' });
    const target = wanted ?? parent.number + 1n;
    const empty = (reason: string, skipped: SkippedBundle[] = [], included: Hash[] = [], mempoolTxs = 0): AttemptResult => ({
      target,
      included,
      skipped,
      mempoolTxs,
      bid: null,
      reason,
    });
    const passSlot = async () => {
      if (flags.mineEmpty && this.opts.devMining) await mineEmptyOnDevChain(client).catch(() => undefined);
    };
    if (this.stopped && wanted === undefined) return empty('stopped');
    if (target !== parent.number + 1n) return empty(`head is ${parent.number}: block ${target} is not the next block`);
    await pool.dropBlock(parent.number).catch(() => undefined);

    await this.captureMempool(target);
    const [bundles, mempool] = await Promise.all([pool.bundlesFor(target), pool.mempoolFor(target)]);
    if (bundles.length === 0 && mempool.length === 0) {
      if (!flags.onlyIfOrderflow) await passSlot();
      return empty('no orderflow');
    }
    if (!this.opts.sealer.ok) {
      log.info({ target: String(target) }, 'orderflow but no sealer: the node cannot seal blocks');
      return empty(`the node cannot seal blocks: ${this.opts.sealer.reason ?? 'unknown'}`);
    }
    let slot: bigint;
    let attributes: PayloadAttributes;
    if (this.opts.beacon) {
      const announced = this.opts.beacon.forParent(parent.hash);
      if (!announced) {
        await passSlot();
        return empty(`the beacon node announced no proposal on the head ${parent.hash}`);
      }
      slot = announced.slot;
      attributes = announced;
    } else {
      const next = this.slotOf(parent);
      slot = next.slot;
      attributes = devPayloadAttributes(parent.hash, next.timestamp);
    }
    const timestamp = attributes.timestamp;
    const proposer = await this.opts.registrations.proposerFor(slot);
    if (!proposer) {
      await passSlot();
      return empty(`no relay lists a registered proposer for slot ${slot}`);
    }

    this.chainId ??= await client.getChainId();
    const baseFeePerGas = await this.nextBaseFee(parent);
    const gasLimit = nextGasLimit(parent.gasLimit, proposer.gasLimit);
    const coinbase = this.opts.coinbase.address;
    const simTarget: SimulationTarget = {
      parent: parent.number,
      feeRecipient: coinbase,
      timestamp,
      gasLimit,
      baseFeePerGas,
      prevRandao: attributes.prevRandao,
      parentBeaconBlockRoot: attributes.parentBeaconBlockRoot,
      withdrawals: attributes.withdrawals,
    };
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
    const failed = (txs: SimTx[], reason: string): Evaluation => ({ ok: false, txs, value: 0n, valueByTx: new Map(), gasUsed: 0n, touched: [], reason });
    const touchedBy = (rs: readonly { to: Address | null; logs: readonly { address: Address }[] }[]): string[] =>
      rs.flatMap((r) => [...(r.to ? [r.to.toLowerCase()] : []), ...r.logs.map((l) => l.address.toLowerCase())]);
    const evaluate = async (prefix: SimTx[], b: StoredBundle): Promise<Evaluation> => {
      const reverting = new Set(b.reverting_tx_hashes);
      const dropping = new Set(b.dropping_tx_hashes);
      let txs: SimTx[] = b.txs.map((t) => ({ raw: t.raw, hash: t.hash, from: t.from, nonce: t.nonce }));
      for (let round = 0; round <= b.txs.length; round++) {
        const sim = await simulateBlock(client, simTarget, [...prefix, ...txs], nonces);
        if (!sim.ok) return failed(txs, `simulation refused: ${sim.error}`);
        const mine = sim.txs.slice(prefix.length);
        const drop = new Set<Hash>();
        for (const r of mine) {
          if (r.status === 'success' || (r.status === 'reverted' && reverting.has(r.hash))) continue;
          if (dropping.has(r.hash) || reverting.has(r.hash)) drop.add(r.hash);
          else return failed(txs, `transaction ${r.hash} ${r.status}${r.reason ? ` (${r.reason})` : ''}`);
        }
        if (drop.size === 0) {
          const valueByTx = new Map(mine.map((r) => [r.hash as string, r.gasFees + r.coinbaseTransfer]));
          const value = [...valueByTx.values()].reduce((a, v) => a + v, 0n);
          return { ok: true, txs, value, valueByTx, gasUsed: mine.reduce((a, r) => a + r.gasUsed, 0n), touched: touchedBy(mine) };
        }
        txs = txs.filter((t) => !drop.has(t.hash));
        if (txs.length === 0) return failed(txs, 'every transaction was dropped');
      }
      return failed(txs, 'did not settle');
    };

    // 1. public mempool transactions first (those a bundle carries land with their bundle)
    const blockTxs: SimTx[] = [];
    const used = new Set<string>();
    /** Addresses the block's transactions so far called or that emitted their logs: what a bottom-of-block bundle's targets are matched against. */
    const touched = new Set<string>();
    const inBundles = new Set(inWindow.flatMap((b) => b.txs.map((t) => t.hash as string)));
    let gasUsed = 0n;
    let profit = 0n;
    let mempoolTxs = 0;
    const candidates = (
      await Promise.all(
        mempool
          .filter((m) => !inBundles.has(m.hash))
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
      const sim = await simulateBlock(client, simTarget, candidates, nonces);
      if (sim.ok) {
        // invalid ones (nonce, fee cap) were left out of the simulated calls: the rest ran in this order
        for (const r of sim.txs) {
          if (r.status === 'invalid') continue;
          if (gasUsed + r.gasUsed > gasLimit) break;
          blockTxs.push(candidates.find((c) => c.hash === r.hash)!);
          used.add(r.hash);
          for (const a of touchedBy([r])) touched.add(a);
          gasUsed += r.gasUsed;
          profit += r.gasFees + r.coinbaseTransfer;
          mempoolTxs++;
        }
      }
    }

    // 2. bundles: each alone, then greedy by value with re-simulation on top of what is in; bottom-of-block
    //    bundles last, on the state everything else leaves (a backrun may fail alone: it is not dropped for that)
    const alone = await mapLimit(inWindow, SIM_CONCURRENCY, (b) => evaluate([], b));
    const valid = alone.filter((e) => e.ok).length;
    this.opts.metrics?.bundlesSimulated(valid, alone.length - valid);
    const byValue = (x: { b: StoredBundle; e: Evaluation }, y: { b: StoredBundle; e: Evaluation }) =>
      y.e.value > x.e.value ? 1 : y.e.value < x.e.value ? -1 : x.b.received_at - y.b.received_at;
    const candidatesOf = inWindow.map((b, i) => ({ b, e: alone[i] }));
    const ranked = [
      ...candidatesOf
        .filter(({ b, e }) => {
          if (b.bottom_of_block) return false;
          if (!e.ok) skip(b, e.reason!);
          return e.ok;
        })
        .sort(byValue),
      ...candidatesOf.filter(({ b }) => b.bottom_of_block).sort(byValue),
    ];
    const included: Hash[] = [];
    const outcomes: BundleOutcome[] = [];
    for (const { b } of ranked) {
      const targets = b.bottom_of_block ? (b.target_addresses ?? []) : [];
      if (targets.length > 0 && !targets.some((a) => touched.has(a.toLowerCase()))) {
        skip(b, 'bottom-of-block: no transaction before it touched one of its target addresses');
        continue;
      }
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
      if (gasUsed + e.gasUsed > gasLimit) {
        skip(b, 'does not fit in the block gas limit');
        continue;
      }
      blockTxs.push(...e.txs);
      for (const t of e.txs) used.add(t.hash);
      for (const a of e.touched) touched.add(a);
      gasUsed += e.gasUsed;
      profit += e.value;
      included.push(b.bundle_hash);
      outcomes.push({
        bundle_hash: b.bundle_hash,
        txHashes: e.txs.map((t) => t.hash),
        valueByTx: e.valueByTx,
        refundPercent: b.refund_percent,
        refundRecipient: b.refund_recipient,
        refundTxHashes: b.refund_tx_hashes,
        firstSender: b.txs[0].from,
        delayedRefund: b.delayed_refund === true,
        searcher: b.searcher,
        identity: b.refund_identity ?? b.searcher,
      });
    }
    if (blockTxs.length === 0) {
      await passSlot();
      return empty('no valid bundle or transaction', skipped, included, mempoolTxs);
    }

    // 3. refunds, then the proposer payment, from the builder's coinbase
    const refunds: PlannedRefund[] = [];
    const delayed: BidRefundRecord[] = [];
    for (const o of outcomes) {
      if (!o.refundPercent) continue;
      if (o.delayedRefund) {
        const d = planDelayedRefund(o);
        if (d) delayed.push({ bundle_hash: o.bundle_hash, searcher: o.searcher, identity: o.identity, recipient: d.recipient, value: d.value, delayed: true });
        continue;
      }
      const gas = await this.transferGas(o.refundRecipient ?? o.firstSender, parent.number);
      const r = planRefund(o, baseFeePerGas, gas);
      if (r) refunds.push(r);
    }
    const paymentGas = await this.transferGas(proposer.feeRecipient, parent.number);
    // delayed refunds are owed by the builder as surely as in-block ones: they come out of the profit before the bid
    const costs = refunds.reduce((a, r) => a + r.value + r.gas * baseFeePerGas, 0n) + delayed.reduce((a, r) => a + r.value, 0n) + paymentGas * baseFeePerGas;
    const value = proposerPayment(profit, costs, this.opts.proposerShareBps);
    if (value <= 0n) {
      await passSlot();
      return empty(`the block pays the coinbase ${profit} wei: not enough for refunds and the proposer payment (${costs} wei)`, skipped, included, mempoolTxs);
    }
    let nonce = await client.getTransactionCount({ address: coinbase, blockNumber: parent.number });
    const signed = { chainId: this.chainId, baseFeePerGas };
    const refundTxs: SimTx[] = [];
    for (const r of refunds)
      refundTxs.push(await signCoinbaseTransfer(this.opts.coinbase, { ...signed, nonce: nonce++, to: r.recipient, value: r.value, gas: r.gas }));
    const payment = await signCoinbaseTransfer(this.opts.coinbase, { ...signed, nonce: nonce++, to: proposer.feeRecipient, value, gas: paymentGas });

    // 4. seal, check, sign, submit
    let sealed: SealedBlock;
    try {
      sealed = await sealBlock(client, {
        parent: { number: parent.number, hash: parent.hash },
        coinbase,
        gasLimit,
        baseFeePerGas,
        excessBlobGas: nextExcessBlobGas(parent),
        attributes,
        extraData: this.opts.extraData ?? DEFAULT_EXTRA_DATA,
        txs: [...blockTxs, ...refundTxs, payment],
        acceptZeroStateRoot: this.opts.sealer.acceptZeroStateRoot,
      });
    } catch (e) {
      if (!(e instanceof SealError)) throw e;
      log.warn({ target: String(target), reason: e.shortMessage }, 'block not sealed');
      await passSlot();
      return empty(`not sealed: ${e.shortMessage}`, skipped, included, mempoolTxs);
    }
    const builderTxs = sealed.outcomes.slice(blockTxs.length);
    const failedOwn = builderTxs.find((t) => t.status !== 'success');
    if (failedOwn) {
      await passSlot();
      return empty(`the builder's transaction ${failedOwn.hash} ${failedOwn.status} in the sealed block`, skipped, included, mempoolTxs);
    }
    const request = this.submission(sealed, slot, proposer, value);
    const checked = await verifyPayloadBlockHash(request, attributes.parentBeaconBlockRoot, this.chainId);
    if (!checked.ok) {
      log.error({ target: String(target), reason: checked.reason }, 'the sealed block hash does not recompute from its payload: not submitted');
      await passSlot();
      return empty(`block hash check failed: ${checked.reason}`, skipped, included, mempoolTxs);
    }
    const submissions = await this.opts.submitter.submitAll(request, proposer.relays);
    this.opts.metrics?.blockSubmitted(included.length);
    const bid: Bid = {
      slot,
      value,
      proposer: { pubkey: proposer.pubkey, feeRecipient: proposer.feeRecipient },
      blockNumber: sealed.header.number,
      blockHash: sealed.hash,
      txCount: sealed.transactions.length,
      txHashes: [...blockTxs, ...refundTxs, payment].map((t) => t.hash),
      refunds: refunds.map((r, i) => ({ ...r, tx_hash: refundTxs[i].hash })),
      refundRecords: [
        ...refunds.map((r, i) => {
          const o = outcomes.find((x) => x.bundle_hash === r.bundle_hash)!;
          return {
            bundle_hash: r.bundle_hash,
            searcher: o.searcher,
            identity: o.identity,
            recipient: r.recipient,
            value: r.value,
            delayed: false,
            tx_hash: refundTxs[i].hash,
          };
        }),
        ...delayed,
      ],
      paymentTxHash: payment.hash,
      request,
      submissions,
    };
    if (this.opts.devMining) {
      const mined = await mineOnDevChain(client, {
        parent: parent.number,
        coinbase,
        timestamp,
        transactions: [...blockTxs, ...refundTxs, payment],
      }).catch((e) => {
        log.warn({ err: String((e as Error).message).slice(0, 200) }, 'dev mining failed');
        return undefined;
      });
      if (mined) {
        bid.mined = mined;
        await pool.dropBlock(target).catch(() => undefined);
      }
    }
    log.info(
      {
        target: String(target),
        slot: String(slot),
        bundles: included.length,
        txs: bid.txCount,
        value_wei: String(bid.value),
        relays: proposer.relays.length,
        accepted: submissions.filter((s) => s.accepted).length,
      },
      'block built and submitted to relays',
    );
    return { target, included, skipped, mempoolTxs, bid };
  }

  private async rpc<T = unknown>(method: string, params: unknown[]): Promise<T> {
    return (await this.opts.client.request({ method: method as never, params: params as never })) as T;
  }

  /** Copies the node's pending public transactions (`txpool_content`, where the node exposes it) into the pool of `target`. */
  private async captureMempool(target: bigint): Promise<void> {
    let content: { pending?: Record<string, Record<string, { hash: Hash }>> };
    try {
      content = await this.rpc('txpool_content', []);
    } catch {
      return;
    }
    const hashes = Object.values(content.pending ?? {}).flatMap((byNonce) => Object.values(byNonce).map((t) => t.hash));
    if (hashes.length === 0) return;
    const raws = await Promise.all(hashes.map((h) => this.rpc<Hex | null>('eth_getRawTransactionByHash', [h]).catch(() => null)));
    await this.opts.pool.addMempoolTxs(
      target,
      hashes.flatMap((hash, i) => (raws[i] ? [{ hash, raw: raws[i]! }] : [])),
    );
  }

  /** The signed Electra `SubmitBlockRequest` of a sealed block for `slot`'s proposer. */
  private submission(sealed: SealedBlock, slot: bigint, proposer: SlotProposer, value: bigint): SubmitBlockRequest {
    const h = sealed.header;
    const message: BidTraceJson = {
      slot: slot.toString(),
      parent_hash: h.parentHash,
      block_hash: sealed.hash,
      builder_pubkey: this.opts.signer.publicKey,
      proposer_pubkey: proposer.pubkey,
      proposer_fee_recipient: proposer.feeRecipient.toLowerCase() as Hex,
      gas_limit: h.gasLimit.toString(),
      gas_used: h.gasUsed.toString(),
      value: value.toString(),
    };
    return submitBlockRequest(sealed, message, signBidTrace(message, this.opts.signer.secretKey, this.opts.signer.domain));
  }
}
