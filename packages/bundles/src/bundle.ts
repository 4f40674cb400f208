import {
  getAddress,
  isAddress,
  concat,
  parseTransaction,
  serializeTransaction,
  type Address,
  type Hash,
  type Hex,
  type TransactionSerializable,
  type TransactionSerialized,
} from 'viem';
import { LRUCache } from 'lru-cache';
import { MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS } from '@acg/schemas';
import { invalidParams } from './errors.js';
import { keccak256Bytes, keccak256Hex, recoverAddress } from '@acg/secp256k1';

export { MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS };
/** Farthest target block accepted, in blocks past the head (keeps the pool bounded; about 3.3 h of mainnet slots). */
export const MAX_BLOCKS_AHEAD = 1_000n;

/** One decoded transaction of a bundle: raw bytes, hash, recovered sender and the fields simulation needs. */
export interface BundleTx {
  raw: Hex;
  hash: Hash;
  from: Address;
  nonce: number;
  /** Size of the signed transaction, bytes. */
  bytes: number;
}

/** The validated params of `eth_sendBundle` (Flashbots fields plus those of docs/decisions.md "Bundle submission"). Block numbers are bigint, timestamps UNIX seconds. */
export interface ValidBundleParams {
  txs: BundleTx[];
  blockNumber: bigint;
  minTimestamp?: number;
  maxTimestamp?: number;
  revertingTxHashes: Hash[];
  droppingTxHashes: Hash[];
  replacementUuid?: string;
  refundPercent?: number;
  refundRecipient?: Address;
  refundTxHashes: Hash[];
  /** BuilderNet: orders bundles under one `replacementUuid`; a bundle with a nonce not above the last accepted one is refused. */
  replacementNonce?: number;
  /** BuilderNet: the identity credited with this bundle's refunds instead of the signer (`buildernet_getFeeRefunds*`). */
  refundIdentity?: Address;
  /** BuilderNet: the `refundPercent` refund is recorded as pending and paid later, not by a transaction in the same block. */
  delayedRefund: boolean;
  /** BuilderNet's bundle format version (`"v1"` or `"v2"`); when given, `eth_sendBundle` answers `{bundleHash, receivedTimestampMs}`. */
  version?: 'v1' | 'v2';
  /** Bottom-of-block placement (BuilderNet `desiredState: "BottomOfBlock"`, Titan `eth_sendEndOfBlockBundle`). */
  bottomOfBlock: boolean;
  /** Contract addresses (pools) whose state a bottom-of-block bundle targets (BuilderNet `targetAddresses`, Titan `targetPools`). */
  targetAddresses: Address[];
  /** Storage slots per target address, index-aligned with `targetAddresses` (BuilderNet `targetSlots`; [] = every slot). */
  targetSlots: Hash[][];
}

/** BuilderNet's only documented `desiredState` value. */
export const DESIRED_STATE_BOTTOM_OF_BLOCK = 'BottomOfBlock';
/** Most target addresses (pools) one bottom-of-block bundle may name. */
export const MAX_TARGET_ADDRESSES = 32;

const KNOWN_FIELDS = new Set([
  'txs',
  'blockNumber',
  'minTimestamp',
  'maxTimestamp',
  'revertingTxHashes',
  'droppingTxHashes',
  'replacementUuid',
  'refundPercent',
  'refundRecipient',
  'refundTxHashes',
  'replacementNonce',
  'refundIdentity',
  'delayedRefund',
  'version',
  'desiredState',
  'targetAddresses',
  'targetSlots',
  // Flashbots clients may send `builders` (names of builders to share with); accepted and ignored: this is one builder.
  'builders',
]);

const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})+$/;
const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;
const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The Flashbots bundle hash: keccak256 of the concatenated transaction hashes, in bundle order. */
export function bundleHash(txHashes: readonly Hash[]): Hash {
  return keccak256Hex(concat(txHashes as Hash[]));
}

/**
 * Takes `params` of an `eth_sendBundle` request as JSON-RPC sends it: an array holding one object.
 * @throws {RpcError} -32602 when it is anything else.
 */
export function singleParamsObject(params: unknown, method: string): Record<string, unknown> {
  if (!Array.isArray(params) || params.length !== 1 || params[0] === null || typeof params[0] !== 'object' || Array.isArray(params[0])) {
    throw invalidParams('params', `${method} takes an array holding exactly one object`);
  }
  return params[0] as Record<string, unknown>;
}

/** Decoded senders of transactions seen before, by transaction hash (see {@link decodeBundleTx}). */
interface KnownTx {
  from: Address;
  nonce: number;
  chainId: number;
}

/** How many decoded transactions {@link decodeBundleTx} remembers (about 200 bytes each). */
export const TX_SENDER_CACHE_SIZE = 50_000;
const known = new LRUCache<Hash, KnownTx>({ max: TX_SENDER_CACHE_SIZE });

/** Forgets every remembered sender (tests and the bench measure cold decoding with it). */
export function clearTxSenderCache(): void {
  known.clear();
}

/** The recovery bit of a parsed transaction's signature, as viem's `recoverPublicKey` derives it. */
function recoveryBit(tx: { v?: bigint; yParity?: number }): number {
  if (tx.yParity === undefined && tx.v !== undefined && tx.v >= 35n) return tx.v % 2n === 0n ? 1 : 0;
  const n = Number(tx.yParity ?? tx.v);
  return n === 0 || n === 1 ? n : n === 27 ? 0 : n === 28 ? 1 : -1;
}

/**
 * Decodes and recovers the sender of one signed transaction (typed envelopes: legacy with EIP-155,
 * EIP-2930, EIP-1559, EIP-7702). Blob transactions (EIP-4844) are refused: a bundle carries no sidecar.
 *
 * The sender is recovered from the signature over the unsigned serialization (viem
 * `parseTransaction` + `serializeTransaction`, as viem's `recoverTransactionAddress` does) with
 * the native secp256k1 binding where it loads (`./secp256k1.ts`). A transaction decoded before
 * (same hash, so the same bytes) is answered from a bounded LRU of {@link TX_SENDER_CACHE_SIZE}
 * senders: searchers resend the same transaction in bundles for the next blocks.
 * @throws {RpcError} -32602 naming `field`.
 */
export async function decodeBundleTx(raw: unknown, field: string, chainId: number): Promise<BundleTx> {
  return decodeBundleTxSync(raw, field, chainId);
}

/** {@link decodeBundleTx} without the promise (it does no I/O). */
export function decodeBundleTxSync(raw: unknown, field: string, chainId: number): BundleTx {
  if (typeof raw !== 'string' || !HEX_DATA.test(raw)) throw invalidParams(field, 'not a 0x-prefixed hex string of whole bytes');
  const hash = keccak256Hex(raw as Hex);
  const bytes = (raw.length - 2) / 2;
  const hit = known.get(hash);
  if (hit) {
    if (hit.chainId !== chainId)
      throw invalidParams(field, `chain id ${hit.chainId} does not match this builder's chain id ${chainId}`, { chain_id: hit.chainId, expected: chainId });
    return { raw: raw as Hex, hash, from: hit.from, nonce: hit.nonce, bytes };
  }
  let tx: ReturnType<typeof parseTransaction>;
  try {
    tx = parseTransaction(raw as TransactionSerialized);
  } catch {
    throw invalidParams(field, 'not a decodable signed transaction (bad RLP or unknown type)');
  }
  if (tx.type === 'eip4844') throw invalidParams(field, 'blob (EIP-4844) transactions are not accepted in bundles');
  if (tx.r === undefined || tx.s === undefined) throw invalidParams(field, 'the transaction is not signed');
  if (tx.chainId === undefined) throw invalidParams(field, 'the transaction has no chain id (pre-EIP-155, replayable)');
  if (tx.chainId !== chainId)
    throw invalidParams(field, `chain id ${tx.chainId} does not match this builder's chain id ${chainId}`, { chain_id: tx.chainId, expected: chainId });
  let from: Address;
  try {
    const unsigned = serializeTransaction({ ...tx, r: undefined, s: undefined, v: undefined, yParity: undefined } as TransactionSerializable);
    from = recoverAddress(keccak256Bytes(Buffer.from(unsigned.slice(2), 'hex')), BigInt(tx.r), BigInt(tx.s), recoveryBit(tx));
  } catch {
    throw invalidParams(field, 'the sender cannot be recovered from the signature');
  }
  const nonce = tx.nonce ?? 0;
  known.set(hash, { from, nonce, chainId: tx.chainId });
  return { raw: raw as Hex, hash, from, nonce, bytes };
}

/**
 * A target block as a hex quantity: after `head` and at most {@link MAX_BLOCKS_AHEAD} blocks ahead.
 * @throws {RpcError} -32602 naming `field`.
 */
export function targetBlock(value: unknown, field: string, head: bigint): bigint {
  if (typeof value !== 'string' || !HEX_QUANTITY.test(value)) throw invalidParams(field, 'required: a hex quantity such as "0x1361bd3"');
  const block = BigInt(value);
  if (block <= head) {
    throw invalidParams(field, `block ${block} is in the past (head is ${head}); target ${head + 1n} or later`, { head: `0x${head.toString(16)}` });
  }
  if (block > head + MAX_BLOCKS_AHEAD) throw invalidParams(field, `block ${block} is more than ${MAX_BLOCKS_AHEAD} blocks ahead of the head (${head})`);
  return block;
}

function hashList(obj: Record<string, unknown>, name: string, bundleHashes: Set<string>, max?: number): Hash[] {
  const v = obj[name];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidParams(name, 'must be an array of 32-byte transaction hashes');
  if (max !== undefined && v.length > max) throw invalidParams(name, `at most ${max} hash(es)`);
  return v.map((h, i) => {
    if (typeof h !== 'string' || !HASH32.test(h)) throw invalidParams(`${name}[${i}]`, 'not a 0x-prefixed 32-byte hash');
    if (!bundleHashes.has(h.toLowerCase())) throw invalidParams(`${name}[${i}]`, 'not the hash of a transaction in txs');
    return h.toLowerCase() as Hash;
  });
}

function timestamp(obj: Record<string, unknown>, name: string): number | undefined {
  const v = obj[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalidParams(name, 'must be a non-negative integer (UNIX seconds)');
  return v;
}

/**
 * Validates the `eth_sendBundle` params object (docs/decisions.md "Bundle submission"): every tx decoded and
 * its sender recovered, chain id checked, at most {@link MAX_BUNDLE_TXS} txs and
 * {@link MAX_BUNDLE_BYTES} bytes, `blockNumber` after `head` and at most {@link MAX_BLOCKS_AHEAD}
 * ahead. Nothing is dropped silently: an unknown field is an error too.
 *
 * @param obj - The one object of `params`.
 * @param ctx - `chainId` of the target chain and its current `head` block number.
 * @throws {RpcError} -32602 whose message and `data.field` name the first bad field.
 */
export async function validateSendBundleParams(obj: Record<string, unknown>, ctx: { chainId: number; head: bigint }): Promise<ValidBundleParams> {
  for (const key of Object.keys(obj)) if (!KNOWN_FIELDS.has(key)) throw invalidParams(key, 'unknown field');
  if (!Array.isArray(obj.txs)) throw invalidParams('txs', 'required: an array of hex-encoded signed transactions');
  if (obj.txs.length === 0) throw invalidParams('txs', 'must hold at least one transaction');
  if (obj.txs.length > MAX_BUNDLE_TXS)
    throw invalidParams('txs', `holds ${obj.txs.length} transactions; at most ${MAX_BUNDLE_TXS} per bundle`, { limit: MAX_BUNDLE_TXS });
  let total = 0;
  for (const [i, raw] of (obj.txs as unknown[]).entries()) {
    if (typeof raw !== 'string' || !HEX_DATA.test(raw)) throw invalidParams(`txs[${i}]`, 'not a 0x-prefixed hex string of whole bytes');
    total += (raw.length - 2) / 2;
  }
  if (total > MAX_BUNDLE_BYTES)
    throw invalidParams('txs', `the bundle is ${total} bytes; at most ${MAX_BUNDLE_BYTES} bytes per bundle`, { bytes: total, limit: MAX_BUNDLE_BYTES });

  const blockNumber = targetBlock(obj.blockNumber, 'blockNumber', ctx.head);

  const txs = (obj.txs as string[]).map((raw, i) => decodeBundleTxSync(raw, `txs[${i}]`, ctx.chainId));
  const seen = new Map<string, number>();
  txs.forEach((tx, i) => {
    const prev = seen.get(tx.hash);
    if (prev !== undefined) throw invalidParams(`txs[${i}]`, `duplicate of txs[${prev}]`);
    seen.set(tx.hash, i);
  });
  const hashes = new Set(seen.keys());

  const minTimestamp = timestamp(obj, 'minTimestamp');
  const maxTimestamp = timestamp(obj, 'maxTimestamp');
  if (minTimestamp !== undefined && maxTimestamp !== undefined && maxTimestamp !== 0 && minTimestamp > maxTimestamp)
    throw invalidParams('maxTimestamp', 'is before minTimestamp');

  let replacementUuid: string | undefined;
  if (obj.replacementUuid !== undefined && obj.replacementUuid !== null) {
    if (typeof obj.replacementUuid !== 'string' || !UUID.test(obj.replacementUuid))
      throw invalidParams('replacementUuid', 'must be a UUID such as "0f9c3ad0-6b1e-4a3c-9d52-5c2b8f7e1a64"');
    replacementUuid = obj.replacementUuid.toLowerCase();
  }
  let refundPercent: number | undefined;
  if (obj.refundPercent !== undefined && obj.refundPercent !== null) {
    if (typeof obj.refundPercent !== 'number' || !Number.isInteger(obj.refundPercent) || obj.refundPercent < 0 || obj.refundPercent > 99)
      throw invalidParams('refundPercent', 'must be an integer from 0 to 99');
    refundPercent = obj.refundPercent;
  }
  let refundRecipient: Address | undefined;
  if (obj.refundRecipient !== undefined && obj.refundRecipient !== null) {
    if (typeof obj.refundRecipient !== 'string' || !isAddress(obj.refundRecipient, { strict: false }))
      throw invalidParams('refundRecipient', 'must be a 20-byte 0x address');
    refundRecipient = getAddress(obj.refundRecipient);
  }
  if (obj.builders !== undefined && (!Array.isArray(obj.builders) || obj.builders.some((b) => typeof b !== 'string')))
    throw invalidParams('builders', 'must be an array of strings');
  const newer = validateBuilderNetFields(obj, { replacementUuid, refundPercent });

  return {
    ...newer,
    txs,
    blockNumber,
    minTimestamp,
    maxTimestamp,
    revertingTxHashes: hashList(obj, 'revertingTxHashes', hashes),
    droppingTxHashes: hashList(obj, 'droppingTxHashes', hashes),
    replacementUuid,
    refundPercent,
    refundRecipient,
    refundTxHashes: hashList(obj, 'refundTxHashes', hashes, 1),
  };
}

/** An optional 20-byte address field, checksummed. */
function optionalAddress(obj: Record<string, unknown>, name: string): Address | undefined {
  const v = obj[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !isAddress(v, { strict: false })) throw invalidParams(name, 'must be a 20-byte 0x address');
  return getAddress(v);
}

/**
 * The `eth_sendBundle` fields BuilderNet added (docs: buildernet.org/docs/api; the builder README "Bundle API of 2026"):
 * `replacementNonce` (needs `replacementUuid`), `refundIdentity`, `delayedRefund` (needs `refundPercent`), `version`,
 * and the target-pool fields of `version: "v2"`: `desiredState` (`"BottomOfBlock"`), `targetAddresses`, `targetSlots`.
 * @throws {RpcError} -32602 naming the bad field.
 */
export function validateBuilderNetFields(
  obj: Record<string, unknown>,
  ctx: { replacementUuid?: string; refundPercent?: number },
): Pick<ValidBundleParams, 'replacementNonce' | 'refundIdentity' | 'delayedRefund' | 'version' | 'bottomOfBlock' | 'targetAddresses' | 'targetSlots'> {
  let replacementNonce: number | undefined;
  if (obj.replacementNonce !== undefined && obj.replacementNonce !== null) {
    const v = obj.replacementNonce;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      throw invalidParams('replacementNonce', 'must be a non-negative integer (a JSON number below 2^53)');
    if (ctx.replacementUuid === undefined) throw invalidParams('replacementNonce', 'needs replacementUuid: the nonce orders bundles sharing one uuid');
    replacementNonce = v;
  }
  const refundIdentity = optionalAddress(obj, 'refundIdentity');
  let delayedRefund = false;
  if (obj.delayedRefund !== undefined && obj.delayedRefund !== null) {
    if (typeof obj.delayedRefund !== 'boolean') throw invalidParams('delayedRefund', 'must be true or false');
    if (obj.delayedRefund && !ctx.refundPercent) throw invalidParams('delayedRefund', 'needs refundPercent (1 to 99): it delays that refund');
    delayedRefund = obj.delayedRefund;
  }
  let version: 'v1' | 'v2' | undefined;
  if (obj.version !== undefined && obj.version !== null) {
    if (obj.version !== 'v1' && obj.version !== 'v2') throw invalidParams('version', 'must be "v1" or "v2"');
    version = obj.version;
  }
  const v2 = ['desiredState', 'targetAddresses', 'targetSlots'].find((f) => obj[f] !== undefined && obj[f] !== null);
  if (v2 !== undefined && version !== 'v2') throw invalidParams(v2, 'needs "version": "v2" (BuilderNet\'s target-pool fields)');
  let bottomOfBlock = false;
  if (obj.desiredState !== undefined && obj.desiredState !== null) {
    if (obj.desiredState !== DESIRED_STATE_BOTTOM_OF_BLOCK) throw invalidParams('desiredState', `must be "${DESIRED_STATE_BOTTOM_OF_BLOCK}"`);
    bottomOfBlock = true;
  }
  const targetAddresses = addressList(obj.targetAddresses, 'targetAddresses');
  const targetSlots = slotLists(obj.targetSlots, 'targetSlots', targetAddresses.length);
  return { replacementNonce, refundIdentity, delayedRefund, version, bottomOfBlock, targetAddresses, targetSlots };
}

/**
 * A list of contract addresses (`targetAddresses`, Titan's `targetPools`): at most {@link MAX_TARGET_ADDRESSES}, no duplicates.
 * @throws {RpcError} -32602 naming `field` or `field[i]`.
 */
export function addressList(v: unknown, field: string, required = false): Address[] {
  if (v === undefined || v === null) {
    if (required) throw invalidParams(field, 'required: an array of 20-byte 0x contract addresses');
    return [];
  }
  if (!Array.isArray(v)) throw invalidParams(field, 'must be an array of 20-byte 0x contract addresses');
  if (required && v.length === 0) throw invalidParams(field, 'must hold at least one address');
  if (v.length > MAX_TARGET_ADDRESSES) throw invalidParams(field, `at most ${MAX_TARGET_ADDRESSES} addresses`);
  const seen = new Set<string>();
  return v.map((a, i) => {
    if (typeof a !== 'string' || !isAddress(a, { strict: false })) throw invalidParams(`${field}[${i}]`, 'not a 20-byte 0x address');
    const address = getAddress(a);
    if (seen.has(address)) throw invalidParams(`${field}[${i}]`, 'duplicate address');
    seen.add(address);
    return address;
  });
}

function slotLists(v: unknown, field: string, addresses: number): Hash[][] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidParams(field, 'must be an array of arrays of 32-byte storage slots, one per target address');
  if (v.length !== addresses) throw invalidParams(field, `must have one entry per targetAddresses entry (${addresses}), index-aligned`);
  return v.map((slots, i) => {
    if (!Array.isArray(slots)) throw invalidParams(`${field}[${i}]`, 'must be an array of 32-byte storage slots ([] targets every slot)');
    return slots.map((s, j) => {
      if (typeof s !== 'string' || !HASH32.test(s)) throw invalidParams(`${field}[${i}][${j}]`, 'not a 0x-prefixed 32-byte storage slot');
      return s.toLowerCase() as Hash;
    });
  });
}
