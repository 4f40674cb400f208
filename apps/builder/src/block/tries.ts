import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { bytesToHex, concat, hexToBytes, keccak256, toHex, toRlp, type Address, type Hash, type Hex } from 'viem';

/** One log of a receipt. */
export interface ReceiptLog {
  address: Address;
  topics: Hex[];
  data: Hex;
}

/** What a receipt commits to (EIP-2718 typed receipts): the tx type, status, cumulative gas and logs. */
export interface ReceiptData {
  /** Transaction type byte: 0 legacy, 1 EIP-2930, 2 EIP-1559, 3 EIP-4844, 4 EIP-7702. */
  type: number;
  /** 1 success, 0 reverted. */
  status: 0 | 1;
  /** Gas used by this transaction and every one before it in the block. */
  cumulativeGasUsed: bigint;
  logs: ReceiptLog[];
}

/** A withdrawal of an execution payload (EIP-4895); `amount` in Gwei. */
export interface WithdrawalData {
  index: bigint;
  validatorIndex: bigint;
  address: Address;
  amount: bigint;
}

const quantity = (n: bigint | number): Hex => (BigInt(n) === 0n ? '0x' : toHex(BigInt(n)));

/** Root of the trie keyed by RLP(index) holding `values` in order, as blocks commit their lists (yellow paper, "ordered trie"). */
export async function orderedTrieRoot(values: readonly Uint8Array[]): Promise<Hash> {
  const trie = new MerklePatriciaTrie();
  for (const [i, v] of values.entries()) await trie.put(hexToBytes(toRlp(quantity(i))), v);
  return bytesToHex(trie.root());
}

/** `transactionsRoot` of signed transactions as they go on the wire (typed envelopes as `type || payload`). */
export function transactionsRoot(raws: readonly Hex[]): Promise<Hash> {
  return orderedTrieRoot(raws.map((r) => hexToBytes(r)));
}

/** The 2048-bit logs bloom (yellow paper 4.3.1): for the address and each topic, three bits from keccak256. */
export function logsBloom(logs: readonly ReceiptLog[]): Hex {
  const bloom = new Uint8Array(256);
  const add = (value: Hex) => {
    const h = hexToBytes(keccak256(value));
    for (let i = 0; i < 6; i += 2) {
      const bit = ((h[i] << 8) | h[i + 1]) & 2047;
      bloom[255 - (bit >> 3)] |= 1 << (bit & 7);
    }
  };
  for (const log of logs) {
    add(log.address);
    for (const t of log.topics) add(t);
  }
  return bytesToHex(bloom);
}

/** A bloom that has every bit of each of `blooms` (a block's bloom is the OR of its receipts'). */
export function orBlooms(blooms: readonly Hex[]): Hex {
  const out = new Uint8Array(256);
  for (const b of blooms) {
    const bytes = hexToBytes(b);
    for (let i = 0; i < 256; i++) out[i] |= bytes[i];
  }
  return bytesToHex(out);
}

/** The consensus encoding of a receipt: `rlp([status, cumulativeGasUsed, bloom, logs])`, prefixed by the type byte for typed transactions (EIP-2718). */
export function encodeReceipt(r: ReceiptData): Hex {
  const body = toRlp([r.status === 1 ? '0x01' : '0x', quantity(r.cumulativeGasUsed), logsBloom(r.logs), r.logs.map((l) => [l.address, l.topics, l.data])]);
  return r.type === 0 ? body : concat([toHex(r.type, { size: 1 }), body]);
}

/** `receiptsRoot` of a block's receipts in order. */
export function receiptsRoot(receipts: readonly ReceiptData[]): Promise<Hash> {
  return orderedTrieRoot(receipts.map((r) => hexToBytes(encodeReceipt(r))));
}

/** `withdrawalsRoot` (EIP-4895): each withdrawal as `rlp([index, validatorIndex, address, amount])`. */
export function withdrawalsRoot(withdrawals: readonly WithdrawalData[]): Promise<Hash> {
  return orderedTrieRoot(withdrawals.map((w) => hexToBytes(toRlp([quantity(w.index), quantity(w.validatorIndex), w.address, quantity(w.amount)]))));
}
