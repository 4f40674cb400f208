import type { TransferPosition } from './ids.js';

/** keccak256("Transfer(address,address,uint256)"): the ERC-20 (and ERC-721) Transfer topic. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A value movement found in a block, before it is matched to subscriptions. Addresses lowercase. */
export interface RawTransfer {
  txHash: `0x${string}`;
  position: TransferPosition;
  from: string;
  to: string;
  /** integer base units of the asset (wei for ETH) */
  amount: bigint;
  /** token contract (lowercase), or null for native ETH */
  token: string | null;
  /** the log's index in the block for ERC-20 transfers, else null */
  logIndex: number | null;
}

/** One `debug_traceBlockBy*` callTracer frame (the fields used here). */
export interface CallFrame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  error?: string;
  calls?: CallFrame[];
}

/** One entry of `debug_traceBlockByHash(hash, {tracer: "callTracer"})`. */
export interface TxTrace {
  txHash?: `0x${string}`;
  result?: CallFrame;
  error?: string;
}

/** Call types that move value from `from` to `to`; DELEGATECALL, STATICCALL and CALLCODE do not. */
const VALUE_TYPES = new Set(['CALL', 'CREATE', 'CREATE2', 'SELFDESTRUCT']);

/**
 * Native ETH transfers from callTracer traces: the top-level call's value (position `tx`) and
 * every internal value transfer (position `trace:<path>`), skipping reverted frames and
 * everything under them (their value never moved). `txHashes` gives the hash by index when the
 * node omits `txHash` in its trace entries.
 */
export function nativeTransfersFromTraces(traces: TxTrace[], txHashes: readonly `0x${string}`[]): RawTransfer[] {
  const out: RawTransfer[] = [];
  traces.forEach((t, i) => {
    const txHash = (t.txHash ?? txHashes[i]) as `0x${string}`;
    if (!t.result || !txHash) return;
    const walk = (f: CallFrame, path: number[]) => {
      if (f.error) return;
      const value = f.value ? BigInt(f.value) : 0n;
      if (value > 0n && f.to && VALUE_TYPES.has(f.type.toUpperCase())) {
        out.push({
          txHash,
          position: path.length === 0 ? { kind: 'tx' } : { kind: 'trace', path },
          from: f.from.toLowerCase(),
          to: f.to.toLowerCase(),
          amount: value,
          token: null,
          logIndex: null,
        });
      }
      for (const [j, c] of (f.calls ?? []).entries()) walk(c, [...path, j]);
    };
    walk(t.result, []);
  });
  return out;
}

/** A block transaction (the fields used here). */
export interface BlockTx {
  hash: `0x${string}`;
  from: string;
  to: string | null;
  value: bigint;
}

/**
 * Native ETH transfers from the block's transactions alone (nodes without traces): each
 * transaction with a value and a recipient. Internal transfers are not visible this way, and
 * the caller must drop transactions whose receipt failed.
 */
export function nativeTransfersFromTransactions(txs: readonly BlockTx[]): RawTransfer[] {
  return txs
    .filter((tx) => tx.value > 0n && tx.to)
    .map((tx) => ({
      txHash: tx.hash,
      position: { kind: 'tx' } as const,
      from: tx.from.toLowerCase(),
      to: tx.to!.toLowerCase(),
      amount: tx.value,
      token: null,
      logIndex: null,
    }));
}

/** An `eth_getLogs` entry (the fields used here). */
export interface LogEntry {
  address: string;
  topics: readonly string[];
  data: string;
  transactionHash: `0x${string}` | null;
  logIndex: number | null;
  removed?: boolean;
}

/**
 * ERC-20 transfers from `Transfer` logs: exactly three topics (ERC-721 puts the token id in a
 * fourth) and a 32-byte amount. Zero amounts are kept (they are real Transfer events).
 */
export function erc20TransfersFromLogs(logs: readonly LogEntry[]): RawTransfer[] {
  const out: RawTransfer[] = [];
  for (const log of logs) {
    if (log.removed || log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) continue;
    if (!/^0x[0-9a-fA-F]{64}$/.test(log.data) || log.transactionHash === null || log.logIndex === null) continue;
    out.push({
      txHash: log.transactionHash,
      position: { kind: 'log', logIndex: log.logIndex },
      from: `0x${log.topics[1].slice(-40)}`.toLowerCase(),
      to: `0x${log.topics[2].slice(-40)}`.toLowerCase(),
      amount: BigInt(log.data),
      token: log.address.toLowerCase(),
      logIndex: log.logIndex,
    });
  }
  return out;
}

/** One `trace_block` entry (OpenEthereum/Parity trace format; anvil, Erigon, Reth, Nethermind). */
export interface ParityTrace {
  type: string;
  action: { from?: string; to?: string; value?: string; callType?: string; address?: string; refundAddress?: string; balance?: string };
  result?: { address?: string } | null;
  error?: string;
  traceAddress: number[];
  transactionHash?: `0x${string}` | null;
  blockHash?: string;
}

/**
 * Native ETH transfers from `trace_block` traces: the same transfers, positions and rules as
 * {@link nativeTransfersFromTraces} (a `traceAddress` is the callTracer path): calls with value
 * (not delegate/static/callcode), creations with value, self-destructs with a balance; a failed
 * frame and everything under it moved nothing; block rewards are ignored.
 */
export function nativeTransfersFromParityTraces(traces: readonly ParityTrace[]): RawTransfer[] {
  const out: RawTransfer[] = [];
  const failed = new Map<string, number[][]>(); // tx hash → failed trace addresses
  const under = (path: number[], prefix: number[]) => prefix.length <= path.length && prefix.every((v, i) => path[i] === v);
  for (const t of traces) {
    const txHash = t.transactionHash;
    if (!txHash) continue;
    if (t.error) {
      const list = failed.get(txHash) ?? [];
      list.push(t.traceAddress);
      failed.set(txHash, list);
      continue;
    }
    if ((failed.get(txHash) ?? []).some((f) => under(t.traceAddress, f))) continue;
    let from: string | undefined;
    let to: string | undefined;
    let value = 0n;
    if (t.type === 'call' && (t.action.callType ?? 'call') === 'call') {
      from = t.action.from;
      to = t.action.to;
      value = BigInt(t.action.value ?? '0x0');
    } else if (t.type === 'create') {
      from = t.action.from;
      to = t.result?.address;
      value = BigInt(t.action.value ?? '0x0');
    } else if (t.type === 'suicide' || t.type === 'selfdestruct') {
      from = t.action.address;
      to = t.action.refundAddress;
      value = BigInt(t.action.balance ?? '0x0');
    }
    if (value > 0n && from && to) {
      out.push({
        txHash,
        position: t.traceAddress.length === 0 ? { kind: 'tx' } : { kind: 'trace', path: [...t.traceAddress] },
        from: from.toLowerCase(),
        to: to.toLowerCase(),
        amount: value,
        token: null,
        logIndex: null,
      });
    }
  }
  return out;
}
