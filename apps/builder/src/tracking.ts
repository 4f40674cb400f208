import type { AttemptRecord, BundleStatsStore } from '@acg/bundles';
import type { Hash } from 'viem';
import { type AttemptResult, Bidder, type BidderOptions } from './bidder.js';
import { settleLandedRefunds } from './refunds.js';

/** Skip reasons of bundles the bidder left out before simulating them (outside their timestamp window). */
const NOT_SIMULATED = /^(minTimestamp|maxTimestamp) /;

/**
 * What an attempt did with each bundle, for `flashbots_getBundleStatsV2`: every bundle it looked
 * at was simulated except those outside their timestamp window; `included` are the chosen ones
 * (Flashbots' "considered"); with a bid they were sealed and sent to each relay at `at`.
 */
export function attemptRecord(r: AttemptResult, at: number): AttemptRecord {
  const simulated: Hash[] = [...r.included, ...r.skipped.filter((s) => !NOT_SIMULATED.test(s.reason)).map((s) => s.bundle_hash)];
  const timestamp = new Date(at).toISOString();
  return {
    block: r.target,
    at,
    simulated,
    chosen: r.included,
    sealed: r.bid
      ? {
          blockHash: r.bid.blockHash,
          submissions: r.bid.submissions.map((s) => ({ relay: s.relay, timestamp, accepted: s.accepted })),
          minedBlockHash: r.bid.mined?.hash,
        }
      : undefined,
  };
}

/**
 * The bidder, with the life of each bundle recorded after every attempt (simulated, considered,
 * sealed, sent to relays; {@link BundleStatsStore}) and the refunds of its sealed block (candidates until
 * the block lands, then the ledger; `settleLandedRefunds`) before the attempt resolves. A failure to
 * record is logged and never fails the attempt.
 */
export class TrackingBidder extends Bidder {
  private readonly log: BidderOptions['log'];

  private readonly bundleStats: BundleStatsStore;

  private readonly client: BidderOptions['client'];

  private readonly refunds: BidderOptions['pool']['refunds'];

  /** `bundleStats`: where the life of each bundle is recorded (the intake's `pool.stats`); refunds go to `pool.refunds`. */
  constructor(opts: BidderOptions & { bundleStats: BundleStatsStore }) {
    super(opts);
    this.log = opts.log;
    this.bundleStats = opts.bundleStats;
    this.client = opts.client;
    this.refunds = opts.pool.refunds;
  }

  /** {@link Bidder.attempt}, resolving once the attempt's bundle stats are recorded. */
  override attempt(target?: bigint, flags: { onlyIfOrderflow?: boolean; mineEmpty?: boolean } = {}): Promise<AttemptResult> {
    return super.attempt(target, flags).then(async (r) => {
      await this.bundleStats
        .recordAttempt(attemptRecord(r, Date.now()))
        .catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'bundle stats not recorded'));
      await this.recordRefunds(r).catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'refunds not recorded'));
      return r;
    });
  }

  /** The refunds of the attempt's sealed block become candidates (its hash, and on the dev chain the mined one); landed blocks are settled. */
  private async recordRefunds(r: AttemptResult): Promise<void> {
    if (r.bid && r.bid.refundRecords.length > 0) {
      const hashes = [r.bid.blockHash, ...(r.bid.mined ? [r.bid.mined.hash] : [])];
      await this.refunds.addCandidates(
        r.bid.blockNumber,
        hashes,
        r.bid.refundRecords.map((x) => ({ ...x, value: x.value.toString() })),
      );
    }
    await settleLandedRefunds(this.refunds, this.client);
  }
}
