import { channelChainViews, createChannelStorage } from '@acg/channels';
import { BATCH_SETTLEMENT_ADDRESS } from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { decodeFunctionData, isAddressEqual, parseAbi, parseAbiItem, type Hex } from 'viem';
import type { ChainReconciliationOptions, ReconciliationCounts, ReconciliationOutcome } from './chainReconciliationOptions.js';

/**
 * The events of the x402 `batch-settlement` contract the reconciliation reads, as the contract declares
 * them (packages/x402-contracts `x402BatchSettlement.sol`, the official interface; `@x402/evm` ships no
 * event ABI for it).
 */
const EVENTS = parseAbi([
  'event Claimed(bytes32 indexed channelId, uint128 amount, uint128 totalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
]);
/**
 * The claim calls the official facilitator sends (`claimWithSignature`, alone or in a `multicall` with a
 * refund), from the contract's interface: the rows name each channel's config (receiver, token).
 */
const CLAIM_CALLS = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
  'function claim(VoucherClaim[] voucherClaims)',
  'function claimWithSignature(VoucherClaim[] voucherClaims, bytes authorizerSignature)',
  'function multicall(bytes[] data) returns (bytes[] results)',
]);
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** One channel's claims as the chain's `Claimed` logs show them in a block range. */
export interface ChainChannelClaim {
  channelId: Hex;
  /** the channel's cumulative claim after the range's last `Claimed` log, token base units */
  totalClaimed: bigint;
  txHash: Hex;
  blockNumber: bigint;
}

/** One `settle(receiver, token)` to the treasury: the contract's `Settled` log. */
export interface ChainChannelSettlement {
  /** token base units paid to the treasury */
  amount: bigint;
  txHash: Hex;
  blockNumber: bigint;
}

const zero = (): ReconciliationCounts => ({ matched: 0, repaired: 0, deferred: 0, undecided: 0 });

/**
 * Reconciles the `batch-settlement` money of blocks `[fromBlock, toBlock]` with the records
 * (docs/decisions.md "Reconciliation from the chain", batch-settlement):
 * - each channel with a `Claimed` log in the range, once: the claimed total the worker recorded
 *   (the channel's `totalClaimed` in the channel storage, `@acg/channels`) against the contract's
 *   `channels(id).totalClaimed` now. Equal → matched. Below the chain → deferred (a pass died
 *   between its claim and its bookkeeping; the next pass's cumulative claim moves nothing and records
 *   it). Above the chain → repaired: the storage is set back to the chain's total (a compare-and-set),
 *   so the next pass claims those vouchers again (a claim reorged out, or a record that says more than
 *   the contract holds). A channel of the treasury (a row of its claim transaction's decoded call pays
 *   the treasury and hashes to the channel id, `computeChannelId`) without a record whose escrow still holds unclaimed funds → undecided (its vouchers are lost with the record);
 *   one with nothing left to claim (refunded, its record deleted) → matched; a channel of another
 *   receiver is not counted;
 * - each `Settled` log to the treasury for the asset: the contract's USDC `Transfer` to the treasury of
 *   the same amount in the same transaction → matched, else undecided; and the contract's
 *   `receivers(treasury, asset)` must not show more settled than claimed, nor less claimed than the
 *   channel records of the treasury add up to (else undecided; claims are read first, so a record a
 *   claim check set back is already back).
 * Only confirmed blocks are read (the caller's range), as for `exact`: a claim or settlement reorged out
 * is not in the logs, and its effect on the views is what is compared.
 */
export async function reconcileChannels(o: ChainReconciliationOptions, fromBlock: bigint, toBlock: bigint): Promise<ReconciliationCounts> {
  const counts = zero();
  const address = o.batchSettlement ?? BATCH_SETTLEMENT_ADDRESS;
  const [claimedLogs, settledLogs] = await Promise.all([
    o.publicClient.getLogs({ address, event: EVENTS[0], fromBlock, toBlock }),
    o.publicClient.getLogs({ address, event: EVENTS[1], args: { receiver: o.treasury, token: o.asset }, fromBlock, toBlock }),
  ]);
  const claims = new Map<string, ChainChannelClaim>();
  for (const log of claimedLogs) {
    const id = log.args.channelId!.toLowerCase() as Hex;
    claims.set(id, { channelId: id, totalClaimed: log.args.totalClaimed!, txHash: log.transactionHash, blockNumber: log.blockNumber });
  }
  for (const claim of claims.values()) {
    const outcome = await reconcileChannelClaim(o, claim);
    if (outcome) counts[outcome]++;
  }
  for (const log of settledLogs) {
    counts[await reconcileChannelSettlement(o, { amount: log.args.amount!, txHash: log.transactionHash, blockNumber: log.blockNumber })]++;
  }
  return counts;
}

/** One channel's recorded claims against the contract's `channels(id)` view (see {@link reconcileChannels}). */
export async function reconcileChannelClaim(o: ChainReconciliationOptions, c: ChainChannelClaim): Promise<ReconciliationOutcome | undefined> {
  const address = o.batchSettlement ?? BATCH_SETTLEMENT_ADDRESS;
  const storage = createChannelStorage({ redis: o.redis, keys: o.keys });
  const onChain = await channelChainViews(o.publicClient, address).channel(c.channelId);
  const record = await storage.get(c.channelId);
  const context = { channelId: c.channelId, tx_hash: c.txHash, chain_total_claimed: String(onChain.totalClaimed) };
  if (!record) {
    if (!(await claimedForTreasury(o, c))) return undefined; // another receiver's channel: not ours to count
    if (onChain.balance <= onChain.totalClaimed) return 'matched'; // nothing left to claim: refunded, its record deleted
    o.log.error(
      { alert: 'chain_reconciliation_undecided', reason: 'claims on chain for a channel of the treasury without a record, unclaimed escrow left', ...context },
      'chain reconciliation cannot decide a channel; an operator must',
    );
    return 'undecided';
  }
  const recorded = BigInt(record.totalClaimed);
  if (recorded === onChain.totalClaimed) return 'matched';
  if (recorded < onChain.totalClaimed) return 'deferred';
  // the worker believes more claimed than the contract holds: its vouchers are claimed again by the next pass
  const result = await storage.updateChannel(c.channelId, (ch) =>
    ch && BigInt(ch.totalClaimed) > onChain.totalClaimed ? { ...ch, totalClaimed: String(onChain.totalClaimed) } : ch,
  );
  o.log.warn({ ...context, recorded_total_claimed: String(recorded), status: result.status }, 'a channel recorded more claimed than the chain shows: set back');
  return 'repaired';
}

/**
 * Whether the claim transaction of `c` claimed it for the treasury in the asset: its call (a claim, or a
 * `multicall` holding claims) decoded, and a row whose config pays the treasury in the asset hashes to
 * the channel id (`computeChannelId` of `@x402/evm`). A call it cannot decode is not the treasury's.
 */
async function claimedForTreasury(o: ChainReconciliationOptions, c: ChainChannelClaim): Promise<boolean> {
  const tx = await o.publicClient.getTransaction({ hash: c.txHash });
  const rows: { voucher: { channel: Parameters<typeof computeChannelId>[0] } }[] = [];
  const read = (data: Hex, depth: number) => {
    try {
      const call = decodeFunctionData({ abi: CLAIM_CALLS, data });
      if (call.functionName === 'multicall' && depth === 0) for (const inner of call.args[0]) read(inner, 1);
      else if (call.functionName === 'claim' || call.functionName === 'claimWithSignature') rows.push(...(call.args[0] as unknown as typeof rows));
    } catch {
      // another call (a refund in the same multicall): no claim rows
    }
  };
  read(tx.input, 0);
  return rows.some(
    (r) =>
      isAddressEqual(r.voucher.channel.receiver, o.treasury) &&
      isAddressEqual(r.voucher.channel.token, o.asset) &&
      computeChannelId(r.voucher.channel, o.network).toLowerCase() === c.channelId,
  );
}

/** One `Settled` log to the treasury against its USDC transfer and the `receivers` view (see {@link reconcileChannels}). */
export async function reconcileChannelSettlement(o: ChainReconciliationOptions, s: ChainChannelSettlement): Promise<ReconciliationOutcome> {
  const address = o.batchSettlement ?? BATCH_SETTLEMENT_ADDRESS;
  const transfers = await o.publicClient.getLogs({
    address: o.asset,
    event: TRANSFER,
    args: { from: address, to: o.treasury },
    fromBlock: s.blockNumber,
    toBlock: s.blockNumber,
  });
  const paid = transfers.some((t) => t.transactionHash === s.txHash && t.args.value === s.amount);
  const receiver = await channelChainViews(o.publicClient, address).receiver(o.treasury, o.asset);
  // what the worker recorded claimed over the channels it still holds (deleted ones, refunded, only add to the chain's total)
  const recorded = (await createChannelStorage({ redis: o.redis, keys: o.keys }).list())
    .filter((c) => isAddressEqual(c.channelConfig.receiver, o.treasury) && isAddressEqual(c.channelConfig.token, o.asset))
    .reduce((sum, c) => sum + BigInt(c.totalClaimed), 0n);
  const reason = !paid
    ? 'a channel settlement to the treasury without its USDC transfer of the same amount'
    : receiver.totalSettled > receiver.totalClaimed
      ? 'the contract shows more settled to the treasury than claimed'
      : recorded > receiver.totalClaimed
        ? `the channel records say ${recorded} claimed for the treasury, the contract's receivers view ${receiver.totalClaimed}`
        : undefined;
  if (!reason) return 'matched';
  o.log.error(
    { alert: 'chain_reconciliation_undecided', reason, tx_hash: s.txHash, amount: String(s.amount) },
    'chain reconciliation cannot decide a channel settlement; an operator must',
  );
  return 'undecided';
}
