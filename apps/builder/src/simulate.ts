import { hexToBigInt, parseTransaction, toHex, type Address, type Hash, type Hex, type PublicClient, type TransactionSerialized } from 'viem';
import type { RpcHeader } from './block/header.js';
import type { ReceiptLog, WithdrawalData } from './block/tries.js';

/** A signed transaction to simulate: raw bytes with its hash and recovered sender. */
export interface SimTx {
  raw: Hex;
  hash: Hash;
  from: Address;
  nonce: number;
}

/** Outcome of one transaction in a simulated block. */
export interface SimulatedTx {
  hash: Hash;
  from: Address;
  to: Address | null;
  /** `success`, `reverted` (executed, status 0), or `invalid` (could not be included: nonce or fee cap). */
  status: 'success' | 'reverted' | 'invalid';
  gasUsed: bigint;
  /** Effective priority fee per gas paid to the coinbase, wei. */
  tipPerGas: bigint;
  /** tipPerGas × gasUsed, wei. */
  gasFees: bigint;
  /** ETH sent to the coinbase by the transaction itself (direct transfers, incl. internal calls), wei. */
  coinbaseTransfer: bigint;
  returnData: Hex;
  /** The transaction's logs as the node returned them, without `traceTransfers`' synthetic ETH transfer logs. */
  logs: ReceiptLog[];
  /** Why an `invalid` or `reverted` transaction failed (short, never upstream text verbatim). */
  reason?: string;
}

/** The outcome of a transaction that could not be included (`invalid`): no gas used, nothing paid, no logs. */
function invalidTx(tx: Pick<SimulatedTx, 'hash' | 'from'>, to: Address | null, reason: string | undefined): SimulatedTx {
  return {
    hash: tx.hash,
    from: tx.from,
    to,
    status: 'invalid',
    gasUsed: 0n,
    tipPerGas: 0n,
    gasFees: 0n,
    coinbaseTransfer: 0n,
    returnData: '0x',
    logs: [],
    reason,
  };
}

/** A simulated block: per-transaction outcomes and the value the coinbase receives, wei. */
export interface BlockSimulation {
  /** false when the node refused the whole simulation (e.g. insufficient funds); then `txs` is empty. */
  ok: boolean;
  error?: string;
  baseFeePerGas: bigint;
  txs: SimulatedTx[];
  gasUsed: bigint;
  /** Σ gasFees + Σ coinbaseTransfer, wei: what the block pays its fee recipient. */
  coinbaseValue: bigint;
  /** The simulated block's header as the node returned it (absent when `ok` is false). */
  header?: RpcHeader;
}

/** Where a simulation runs: on top of block `parent` (number), as block `parent + 1` with these overrides. */
export interface SimulationTarget {
  parent: bigint;
  feeRecipient: Address;
  /** Block timestamp, UNIX seconds (default: the node's choice). */
  timestamp?: bigint;
  /** Block number of the simulated block (default `parent + 1`; eth_callBundle may simulate block N on older state). */
  number?: bigint;
  /** Block gas limit (default: the node's choice, usually the parent's). */
  gasLimit?: bigint;
  /** Base fee per gas, wei (default: the node's choice). */
  baseFeePerGas?: bigint;
  /** `prevRandao` of the block (from the payload attributes). */
  prevRandao?: Hash;
  /** EIP-4788 parent beacon block root (geth's `beaconRoot` override). */
  parentBeaconBlockRoot?: Hash;
  /** Withdrawals credited at the end of the block (EIP-4895; amounts in Gwei). */
  withdrawals?: readonly WithdrawalData[];
}

/** Options of {@link simulateBlock}. */
export interface SimulateOptions {
  /**
   * Ask the node for `traceTransfers` (default true): ETH sent to the coinbase is then seen. Off
   * when sealing, so that the logs are exactly the receipts' logs.
   */
  traceTransfers?: boolean;
}

/** ERC-7528 pseudo-address of native ETH in `traceTransfers` logs, and the ERC-20 Transfer topic. */
const ETH_TRANSFER_ADDRESS = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

type RpcCall = Record<string, unknown>;

function toCall(tx: SimTx): { call: RpcCall; parsed: ReturnType<typeof parseTransaction> } {
  const p = parseTransaction(tx.raw as TransactionSerialized);
  const call: RpcCall = {
    from: tx.from,
    nonce: toHex(p.nonce ?? 0),
    gas: toHex(p.gas ?? 0n),
    value: toHex(p.value ?? 0n),
    input: p.data ?? '0x',
  };
  if (p.to) call.to = p.to;
  if (p.type === 'eip1559' || p.type === 'eip7702') {
    call.maxFeePerGas = toHex(p.maxFeePerGas ?? 0n);
    call.maxPriorityFeePerGas = toHex(p.maxPriorityFeePerGas ?? 0n);
  } else {
    call.gasPrice = toHex(p.gasPrice ?? 0n);
  }
  if ('accessList' in p && p.accessList) call.accessList = p.accessList;
  if (p.type === 'eip7702' && p.authorizationList) {
    call.authorizationList = p.authorizationList.map((a) => ({
      chainId: toHex(a.chainId),
      address: a.address,
      nonce: toHex(a.nonce),
      yParity: toHex(a.yParity ?? 0),
      r: a.r,
      s: a.s,
    }));
  }
  return { call, parsed: p };
}

function tipPerGas(p: ReturnType<typeof parseTransaction>, baseFee: bigint): bigint | undefined {
  if (p.type === 'eip1559' || p.type === 'eip7702') {
    const max = p.maxFeePerGas ?? 0n;
    if (max < baseFee) return undefined;
    const prio = p.maxPriorityFeePerGas ?? 0n;
    return prio < max - baseFee ? prio : max - baseFee;
  }
  const price = p.gasPrice ?? 0n;
  return price < baseFee ? undefined : price - baseFee;
}

/**
 * Simulates `txs` in order as the block after `target.parent` with `eth_simulateV1` on the node
 * (docs/decisions.md "Bundle submission"), with `traceTransfers` to see ETH sent to the coinbase.
 * The node's simulation does not check nonces or fee caps (anvil 1.7): both are checked here,
 * and a transaction failing them is `invalid` and left out of the simulated calls.
 *
 * @param client - viem client of the Ethereum node.
 * @param nonces - Sender nonces at `target.parent` (fetched for missing senders and added to the map).
 * @returns A {@link BlockSimulation}; `ok: false` when the node refused the request as a whole.
 */
export async function simulateBlock(
  client: PublicClient,
  target: SimulationTarget,
  txs: readonly SimTx[],
  nonces = new Map<string, number>(),
  options: SimulateOptions = {},
): Promise<BlockSimulation> {
  const traceTransfers = options.traceTransfers ?? true;
  const parentTag = toHex(target.parent);
  const senders = [...new Set(txs.map((t) => t.from.toLowerCase()))].filter((s) => !nonces.has(s));
  await Promise.all(senders.map(async (s) => nonces.set(s, await client.getTransactionCount({ address: s as Address, blockNumber: target.parent }))));
  const next = new Map(nonces);
  const included: { tx: SimTx; call: RpcCall; parsed: ReturnType<typeof parseTransaction> }[] = [];
  const invalid = new Map<Hash, string>();
  for (const tx of txs) {
    const key = tx.from.toLowerCase();
    const expected = next.get(key)!;
    if (tx.nonce !== expected) {
      invalid.set(tx.hash, `nonce ${tx.nonce}, expected ${expected}`);
      continue;
    }
    next.set(key, expected + 1);
    included.push({ tx, ...toCall(tx) });
  }
  const overrides: Record<string, unknown> = { number: toHex(target.number ?? target.parent + 1n), feeRecipient: target.feeRecipient };
  if (target.timestamp !== undefined) overrides.time = toHex(target.timestamp);
  if (target.gasLimit !== undefined) overrides.gasLimit = toHex(target.gasLimit);
  if (target.baseFeePerGas !== undefined) overrides.baseFeePerGas = toHex(target.baseFeePerGas);
  if (target.prevRandao !== undefined) overrides.prevRandao = target.prevRandao;
  if (target.parentBeaconBlockRoot !== undefined) overrides.beaconRoot = target.parentBeaconBlockRoot;
  if (target.withdrawals !== undefined)
    overrides.withdrawals = target.withdrawals.map((w) => ({
      index: toHex(w.index),
      validatorIndex: toHex(w.validatorIndex),
      address: w.address,
      amount: toHex(w.amount),
    }));

  let block: RpcHeader & {
    calls: { status: Hex; gasUsed: Hex; returnData: Hex; logs?: { address: Address; topics: Hex[]; data: Hex }[]; error?: { message?: string } }[];
  };
  try {
    const res = (await client.request({
      method: 'eth_simulateV1' as never,
      params: [{ blockStateCalls: [{ blockOverrides: overrides, calls: included.map((i) => i.call) }], validation: true, traceTransfers }, parentTag] as never,
    })) as unknown as (typeof block)[];
    block = res[0];
  } catch (e) {
    const msg = (e as { details?: string; shortMessage?: string }).details ?? (e as Error).message ?? 'simulation failed';
    return { ok: false, error: String(msg).split('\n')[0].slice(0, 160), baseFeePerGas: 0n, txs: [], gasUsed: 0n, coinbaseValue: 0n };
  }
  const baseFee = block.baseFeePerGas ? hexToBigInt(block.baseFeePerGas) : 0n;
  const coinbaseTopic = `0x${target.feeRecipient.slice(2).toLowerCase().padStart(64, '0')}`;
  const out: SimulatedTx[] = [];
  let gasUsed = 0n;
  let value = 0n;
  const byHash = new Map(included.map((i, idx) => [i.tx.hash, { ...i, result: block.calls[idx] }]));
  for (const tx of txs) {
    const reason = invalid.get(tx.hash);
    const entry = byHash.get(tx.hash);
    if (reason || !entry) {
      out.push(invalidTx(tx, null, reason));
      continue;
    }
    const r = entry.result;
    const tip = tipPerGas(entry.parsed, baseFee);
    const to = (entry.parsed.to ?? null) as Address | null;
    if (tip === undefined) {
      out.push(invalidTx(tx, to, `fee cap below the base fee ${baseFee}`));
      continue;
    }
    const used = hexToBigInt(r.gasUsed);
    let transfer = 0n;
    const logs: ReceiptLog[] = [];
    for (const log of r.logs ?? []) {
      if (traceTransfers && log.address.toLowerCase() === ETH_TRANSFER_ADDRESS) {
        if (log.topics[0] === TRANSFER_TOPIC && log.topics[2]?.toLowerCase() === coinbaseTopic) transfer += hexToBigInt(log.data);
        continue;
      }
      logs.push({ address: log.address, topics: log.topics, data: log.data });
    }
    const status = r.status === '0x1' ? 'success' : 'reverted';
    out.push({
      hash: tx.hash,
      from: tx.from,
      to,
      status,
      gasUsed: used,
      tipPerGas: tip,
      gasFees: tip * used,
      coinbaseTransfer: status === 'success' ? transfer : 0n,
      returnData: r.returnData,
      logs,
      reason: status === 'reverted' ? 'execution reverted' : undefined,
    });
    gasUsed += used;
    value += tip * used + (status === 'success' ? transfer : 0n);
  }
  const { calls: _calls, ...header } = block;
  return { ok: true, baseFeePerGas: baseFee, txs: out, gasUsed, coinbaseValue: value, header };
}
