import { createChannelStorage, unpaidChannels, type UnpaidChannel } from '@acg/channels';
import { paymentKeys } from '@acg/payments/commands';
import { parseAbi, parseAbiItem, type Hex } from 'viem';
import type { PublicClient } from 'viem';
import type { TestGateway } from '../harness.js';
import type { Scope } from './scope.js';

/** What the channel equations read of the suite's `MoneyTruth` (conservation.ts): the chain, the gateway, USDC, a key scan. */
interface MoneyTruth {
  client: PublicClient;
  t: TestGateway;
  usdc: `0x${string}`;
  treasury: `0x${string}`;
  balanceOf(address: `0x${string}`, blockNumber?: bigint): Promise<bigint>;
  scan(pattern: string): Promise<string[]>;
}

/**
 * The x402 `batch-settlement` side of the money invariant suite's ground truth (docs/money-invariants.md
 * "Channels"): the `x402BatchSettlement` contract's events and its `channels` / `receivers` views on
 * anvil, and the gateway's records in Redis (the channel storage the official server scheme keeps, and
 * the paywall's voucher reservations). No amount comes from the suite's model.
 */

type Address = `0x${string}`;

/** The x402BatchSettlement contract's events the equations read. */
export const CONTRACT_EVENTS = parseAbi([
  'event ChannelCreated(bytes32 indexed channelId, (address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt) config)',
  'event Deposited(bytes32 indexed channelId, address indexed collector, uint128 amount, uint128 balance)',
  'event Claimed(bytes32 indexed channelId, uint128 amount, uint128 totalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
  'event Refunded(bytes32 indexed channelId, uint128 amount, uint256 nonce)',
  'event WithdrawFinalized(bytes32 indexed channelId, uint128 amount)',
]);

const VIEWS = parseAbi([
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
]);

export const USDC_TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** One channel of a sequence's payer, as the chain and the gateway's records show it (token base units). */
export interface ChannelTruth {
  channelId: Hex;
  payer: Address;
  /** Σ `Deposited.amount` since the scope began (the channel is the sequence's: its payer is fresh) */
  deposited: bigint;
  /** Σ `Claimed.amount` (each the increase of `totalClaimed`) */
  claimedEvents: bigint;
  /** Σ `Refunded.amount`: cooperative refunds back to the payer */
  refunded: bigint;
  /** Σ `WithdrawFinalized.amount`: timed withdrawals back to the payer */
  withdrawn: bigint;
  /** `channels(id)` now */
  view: { balance: bigint; totalClaimed: bigint };
  /** the gateway's channel record (official `ChannelStorage`), when it still has one (a cooperative refund deletes it) */
  stored?: { chargedCumulativeAmount: bigint; totalClaimed: bigint; balance: bigint };
  /** the paywall's voucher reservations of the channel: each accepted voucher, its state, amount and operation */
  vouchers: { state: string; amount: bigint; operationId: string }[];
  /** the report in `ch:unpaid` when the worker marked the channel unpaid (its deposit reorged out for good) */
  unpaid?: UnpaidChannel;
}

/** What the contract did for the scope since it began: its channels, and the settlements to the treasury. */
export interface ChannelsTruth {
  channels: ChannelTruth[];
  /** Σ `Settled.amount` to the treasury (claimed funds paid out of escrow) and the transactions */
  settledToTreasury: bigint;
  settleTxs: Set<string>;
  /** transactions that deposited into a channel (their EIP-3009 `AuthorizationUsed` is a deposit, not a payment into the treasury) */
  depositTxs: Set<string>;
  /** `receivers(treasury, usdc)` now */
  receiver: { totalClaimed: bigint; totalSettled: bigint };
  /** Σ `Claimed.amount` in range over every channel (the scope's and any other) */
  claimedAll: bigint;
}

/** `receivers(treasury, usdc)` at `blockNumber` (or now). */
export async function receiverView(truth: MoneyTruth, blockNumber?: bigint): Promise<{ totalClaimed: bigint; totalSettled: bigint }> {
  const [totalClaimed, totalSettled] = await truth.client.readContract({
    address: truth.t.stack.payment.batchSettlement,
    abi: VIEWS,
    functionName: 'receivers',
    args: [truth.treasury, truth.usdc],
    ...(blockNumber === undefined ? {} : { blockNumber }),
  });
  return { totalClaimed, totalSettled };
}

/** Reads every channel of `scope`'s payers and the contract's settlements to the treasury since `scope.fromBlock`. */
export async function channelsTruth(truth: MoneyTruth, scope: Scope): Promise<ChannelsTruth> {
  const contract = truth.t.stack.payment.batchSettlement;
  const { redis, keys } = truth.t.gateway.services;
  const head = await truth.client.getBlockNumber({ cacheTime: 0 });
  const logs =
    head < scope.fromBlock ? [] : await truth.client.getLogs({ address: contract, events: CONTRACT_EVENTS, fromBlock: scope.fromBlock, toBlock: head });
  const payers = new Set(scope.payers.map((p) => p.toLowerCase()));
  const byId = new Map<string, ChannelTruth>();
  let settledToTreasury = 0n;
  let claimedAll = 0n;
  const settleTxs = new Set<string>();
  const depositTxs = new Set<string>();
  for (const l of logs) {
    if (l.eventName === 'ChannelCreated' && payers.has(l.args.config!.payer.toLowerCase())) {
      const id = l.args.channelId!.toLowerCase() as Hex;
      if (!byId.has(id))
        byId.set(id, {
          channelId: id,
          payer: l.args.config!.payer,
          deposited: 0n,
          claimedEvents: 0n,
          refunded: 0n,
          withdrawn: 0n,
          view: { balance: 0n, totalClaimed: 0n },
          vouchers: [],
        });
    }
  }
  for (const l of logs) {
    if (l.eventName === 'Settled') {
      if (l.args.receiver!.toLowerCase() === truth.treasury.toLowerCase() && l.args.token!.toLowerCase() === truth.usdc.toLowerCase()) {
        settledToTreasury += l.args.amount!;
        settleTxs.add(l.transactionHash);
      }
      continue;
    }
    if (l.eventName === 'Deposited') depositTxs.add(l.transactionHash);
    if (l.eventName === 'Claimed') claimedAll += l.args.amount!;
    const c = byId.get(l.args.channelId!.toLowerCase());
    if (!c) continue;
    if (l.eventName === 'Deposited') c.deposited += l.args.amount!;
    else if (l.eventName === 'Claimed') c.claimedEvents += l.args.amount!;
    else if (l.eventName === 'Refunded') c.refunded += l.args.amount!;
    else if (l.eventName === 'WithdrawFinalized') c.withdrawn += l.args.amount!;
  }
  const storage = createChannelStorage({ redis, keys });
  // a channel the gateway has a record of, whatever the chain says (e.g. a deposit that never reached it)
  for (const s of await storage.list()) {
    const id = s.channelId.toLowerCase() as Hex;
    if (payers.has(s.channelConfig.payer.toLowerCase()) && !byId.has(id))
      byId.set(id, {
        channelId: id,
        payer: s.channelConfig.payer as Address,
        deposited: 0n,
        claimedEvents: 0n,
        refunded: 0n,
        withdrawn: 0n,
        view: { balance: 0n, totalClaimed: 0n },
        vouchers: [],
      });
  }
  const network = `eip155:${truth.t.config.payment.chain.id}`;
  const unpaid = await unpaidChannels(redis, keys);
  for (const c of byId.values()) {
    c.unpaid = unpaid.get(c.channelId);
    const [balance, totalClaimed] = await truth.client.readContract({ address: contract, abi: VIEWS, functionName: 'channels', args: [c.channelId] });
    c.view = { balance, totalClaimed };
    const s = await storage.get(c.channelId);
    if (s) c.stored = { chargedCumulativeAmount: BigInt(s.chargedCumulativeAmount), totalClaimed: BigInt(s.totalClaimed), balance: BigInt(s.balance) };
    const prefix = paymentKeys.authorization(keys, network, c.channelId, c.payer, '');
    for (const key of await truth.scan(`${prefix.slice(keys.prefix.length)}*`)) {
      const h = await redis.hgetall(key);
      c.vouchers.push({ state: h.state ?? '', amount: BigInt(h.amount ?? '0'), operationId: h.operation_id ?? '' });
    }
  }
  return { channels: [...byId.values()], settledToTreasury, settleTxs, depositTxs, receiver: await receiverView(truth), claimedAll };
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/**
 * The channel equations (docs/money-invariants.md "Channels"), per channel of the scope:
 * - escrow: Σ deposits = `channels(id).balance` + Σ cooperative refunds + Σ timed withdrawals, and
 *   `balance` = claimed (`totalClaimed`) + what is still in escrow for the payer (`balance − totalClaimed ≥ 0`);
 *   Σ `Claimed` = `totalClaimed`;
 * - vouchers: Σ accepted voucher charges (the paywall's completed voucher reservations, each of a SUCCEEDED
 *   execution) = what was claimed + what is still claimable: the gateway's record's
 *   `chargedCumulativeAmount` when it has one (then claimable = charged − `totalClaimed` ≥ 0, and within the
 *   balance), or exactly `totalClaimed` when a cooperative refund closed the record;
 * and over the scope: the receiver's claims grew by Σ claims in range (`receivers(treasury).totalClaimed`),
 * its settlements by Σ `Settled` to the treasury, and the contract's USDC moved by Σ deposits − refunds −
 * withdrawals − settlements.
 */
export async function checkChannels(truth: MoneyTruth, scope: Scope, ch: ChannelsTruth): Promise<string[]> {
  const v: string[] = [];
  const { executions } = truth.t.gateway.services;
  for (const c of ch.channels) {
    const tag = `channel ${c.channelId.slice(0, 10)} of ${c.payer.slice(0, 8)}`;
    if (c.deposited !== c.view.balance + c.refunded + c.withdrawn)
      v.push(`${tag}: deposits ${c.deposited} ≠ balance ${c.view.balance} + refunded ${c.refunded} + withdrawn ${c.withdrawn}`);
    if (c.claimedEvents !== c.view.totalClaimed) v.push(`${tag}: Σ Claimed ${c.claimedEvents} ≠ totalClaimed ${c.view.totalClaimed}`);
    if (c.view.totalClaimed > c.view.balance) v.push(`${tag}: claimed ${c.view.totalClaimed} above the balance ${c.view.balance}`);
    const accepted = c.vouchers.filter((x) => x.state === 'completed');
    const charges = sum(accepted.map((x) => x.amount));
    for (const x of c.vouchers.filter((y) => y.state !== 'completed')) v.push(`${tag}: voucher of ${x.operationId} left ${x.state || 'without a state'}`);
    for (const x of accepted) {
      const rec = x.operationId.startsWith('exe_') ? await executions.get(x.operationId) : undefined;
      if (rec?.status !== 'SUCCEEDED' || BigInt(rec.payment.amount) !== x.amount)
        v.push(`${tag}: accepted voucher ${x.operationId} (${x.amount}) belongs to an execution that is ${rec?.status ?? 'missing'} (${rec?.payment.amount})`);
    }
    if (c.stored) {
      if (c.stored.chargedCumulativeAmount !== charges)
        v.push(`${tag}: the record says charged ${c.stored.chargedCumulativeAmount}, accepted vouchers ${charges}`);
      const claimable = charges - c.view.totalClaimed;
      // a channel marked unpaid (its deposit reorged out for good): what the escrow cannot cover is not
      // lost silently, it is the report's `uncovered` (accepted since the mark: none, its vouchers are refused)
      const uncovered = c.unpaid ? BigInt(c.unpaid.uncovered) : 0n;
      if (claimable < 0n) v.push(`${tag}: claimed ${c.view.totalClaimed} on chain above the accepted vouchers ${charges}`);
      else if (c.view.totalClaimed + claimable - uncovered > c.view.balance)
        v.push(
          `${tag}: claimed ${c.view.totalClaimed} + claimable ${claimable} exceed the escrow ${c.view.balance}${c.unpaid ? ` by more than the unpaid report's uncovered ${uncovered}` : ' (and the channel is not reported unpaid)'}`,
        );
      if (c.unpaid) {
        // the report is as of the mark; a later deposit of the payer covers what it accepts after
        const u = c.unpaid;
        if (BigInt(u.charged) > charges) v.push(`${tag}: reported unpaid with charges ${u.charged} above the accepted vouchers ${charges}`);
        if (BigInt(u.unclaimed) !== BigInt(u.charged) - BigInt(u.claimedOnChain))
          v.push(`${tag}: reported unpaid with unclaimed ${u.unclaimed} ≠ charged ${u.charged} − claimed ${u.claimedOnChain}`);
        const short = charges > c.view.balance ? charges - c.view.balance : 0n;
        if (short > uncovered) v.push(`${tag}: the escrow ${c.view.balance} leaves ${short} of ${charges} uncovered, the unpaid report says ${uncovered}`);
      }
      if (c.stored.totalClaimed > c.view.totalClaimed) v.push(`${tag}: the record says claimed ${c.stored.totalClaimed}, the chain ${c.view.totalClaimed}`);
    } else if (charges !== c.view.totalClaimed) v.push(`${tag}: closed (no record) with accepted vouchers ${charges} ≠ claimed ${c.view.totalClaimed}`);
  }
  const before = scope.receiverBefore;
  if (ch.receiver.totalClaimed - before.totalClaimed !== ch.claimedAll)
    v.push(`receiver: totalClaimed grew by ${ch.receiver.totalClaimed - before.totalClaimed}, Σ Claimed in range ${ch.claimedAll}`);
  if (ch.claimedAll !== sum(ch.channels.map((c) => c.claimedEvents))) v.push(`receiver: claims in range ${ch.claimedAll} of channels outside the sequence`);
  if (ch.receiver.totalSettled - before.totalSettled !== ch.settledToTreasury)
    v.push(`receiver: totalSettled grew by ${ch.receiver.totalSettled - before.totalSettled}, Σ Settled to the treasury ${ch.settledToTreasury}`);
  const escrow = (await truth.balanceOf(truth.t.stack.payment.batchSettlement)) - scope.escrowBefore;
  const flows = sum(ch.channels.map((c) => c.deposited - c.refunded - c.withdrawn)) - ch.settledToTreasury;
  if (escrow !== flows) v.push(`escrow: the contract's USDC changed by ${escrow} ≠ deposits − refunds − withdrawals − settlements ${flows}`);
  return v;
}
