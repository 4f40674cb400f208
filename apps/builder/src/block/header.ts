import { keccak256, toHex, toRlp, type Address, type Hash, type Hex } from 'viem';

/** keccak256(RLP([])): the `sha3Uncles` (ommers hash) of every post-merge block. */
export const EMPTY_OMMERS_HASH: Hash = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
/** Root of an empty Merkle Patricia trie: keccak256(RLP("")). */
export const EMPTY_TRIE_ROOT: Hash = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
/** sha256 of nothing: the EIP-7685 `requestsHash` of a block without execution requests. */
export const EMPTY_REQUESTS_HASH: Hash = '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ZERO_NONCE: Hex = '0x0000000000000000';

/**
 * An execution block header. Fields after `nonce` exist from the fork that added them on:
 * `baseFeePerGas` (London, EIP-1559), `withdrawalsRoot` (Shanghai, EIP-4895), `blobGasUsed` and
 * `excessBlobGas` (Cancun, EIP-4844), `parentBeaconBlockRoot` (Cancun, EIP-4788), `requestsHash`
 * (Prague, EIP-7685). A Prague (Electra) header has all of them. Integers in wei or gas units.
 */
export interface ExecutionHeader {
  parentHash: Hash;
  ommersHash: Hash;
  /** The block's fee recipient (coinbase). */
  coinbase: Address;
  stateRoot: Hash;
  transactionsRoot: Hash;
  receiptsRoot: Hash;
  logsBloom: Hex;
  difficulty: bigint;
  number: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  /** UNIX seconds. */
  timestamp: bigint;
  extraData: Hex;
  /** `prevRandao` since the merge. */
  mixHash: Hash;
  nonce: Hex;
  baseFeePerGas?: bigint;
  withdrawalsRoot?: Hash;
  blobGasUsed?: bigint;
  excessBlobGas?: bigint;
  parentBeaconBlockRoot?: Hash;
  requestsHash?: Hash;
}

/** RLP of an integer: big-endian without leading zeros, zero as the empty string. */
const quantity = (n: bigint): Hex => (n === 0n ? '0x' : toHex(n));

/**
 * The header's fields in consensus order as RLP items (the yellow paper's header list, extended by
 * each fork's EIP). Optional fields are appended while present, in order; a later field without
 * the earlier ones is a malformed header.
 *
 * @throws {Error} when an optional field is present while an earlier one is missing.
 */
export function headerRlpFields(h: ExecutionHeader): Hex[] {
  const fields: Hex[] = [
    h.parentHash,
    h.ommersHash,
    h.coinbase,
    h.stateRoot,
    h.transactionsRoot,
    h.receiptsRoot,
    h.logsBloom,
    quantity(h.difficulty),
    quantity(h.number),
    quantity(h.gasLimit),
    quantity(h.gasUsed),
    quantity(h.timestamp),
    h.extraData,
    h.mixHash,
    h.nonce,
  ];
  const optional: [string, Hex | undefined][] = [
    ['baseFeePerGas', h.baseFeePerGas === undefined ? undefined : quantity(h.baseFeePerGas)],
    ['withdrawalsRoot', h.withdrawalsRoot],
    ['blobGasUsed', h.blobGasUsed === undefined ? undefined : quantity(h.blobGasUsed)],
    ['excessBlobGas', h.excessBlobGas === undefined ? undefined : quantity(h.excessBlobGas)],
    ['parentBeaconBlockRoot', h.parentBeaconBlockRoot],
    ['requestsHash', h.requestsHash],
  ];
  let missing: string | undefined;
  for (const [name, value] of optional) {
    if (value === undefined) {
      missing ??= name;
      continue;
    }
    if (missing) throw new Error(`header has ${name} but not ${missing}`);
    fields.push(value);
  }
  return fields;
}

/** The block hash: keccak256(RLP(header)). */
export function blockHash(h: ExecutionHeader): Hash {
  return keccak256(toRlp(headerRlpFields(h)));
}

/** A header as JSON-RPC returns it (`eth_getBlockByNumber`, `eth_simulateV1`): hex strings. */
export interface RpcHeader {
  hash?: Hash;
  parentHash: Hash;
  sha3Uncles: Hash;
  miner: Address;
  stateRoot: Hash;
  transactionsRoot: Hash;
  receiptsRoot: Hash;
  logsBloom: Hex;
  difficulty?: Hex;
  number: Hex;
  gasLimit: Hex;
  gasUsed: Hex;
  timestamp: Hex;
  extraData: Hex;
  mixHash: Hash;
  nonce?: Hex;
  baseFeePerGas?: Hex;
  withdrawalsRoot?: Hash;
  blobGasUsed?: Hex;
  excessBlobGas?: Hex;
  parentBeaconBlockRoot?: Hash;
  requestsHash?: Hash;
}

const big = (v: Hex | undefined): bigint | undefined => (v === undefined || v === null ? undefined : BigInt(v));

/** Reads a JSON-RPC header into an {@link ExecutionHeader} (fields the node left out stay undefined). */
export function headerFromRpc(b: RpcHeader): ExecutionHeader {
  return {
    parentHash: b.parentHash,
    ommersHash: b.sha3Uncles,
    coinbase: b.miner,
    stateRoot: b.stateRoot,
    transactionsRoot: b.transactionsRoot,
    receiptsRoot: b.receiptsRoot,
    logsBloom: b.logsBloom,
    difficulty: big(b.difficulty) ?? 0n,
    number: BigInt(b.number),
    gasLimit: BigInt(b.gasLimit),
    gasUsed: BigInt(b.gasUsed),
    timestamp: BigInt(b.timestamp),
    extraData: b.extraData,
    mixHash: b.mixHash,
    nonce: b.nonce ?? ZERO_NONCE,
    baseFeePerGas: big(b.baseFeePerGas),
    withdrawalsRoot: b.withdrawalsRoot ?? undefined,
    blobGasUsed: big(b.blobGasUsed),
    excessBlobGas: big(b.excessBlobGas),
    parentBeaconBlockRoot: b.parentBeaconBlockRoot ?? undefined,
    requestsHash: b.requestsHash ?? undefined,
  };
}

/** The zero nonce of every post-merge header. */
export { ZERO_NONCE };

/** Prague (EIP-7691) blob gas target per block: 6 blobs of 131072 blob gas. */
export const PRAGUE_TARGET_BLOB_GAS_PER_BLOCK = 786_432n;

/**
 * `calc_excess_blob_gas` of EIP-4844 with Prague's target (EIP-7691): the parent's excess plus its
 * blob gas used, less the target, floored at 0. Used only when the node does not return the value.
 */
export function nextExcessBlobGas(parent: { excessBlobGas?: bigint; blobGasUsed?: bigint }): bigint {
  const sum = (parent.excessBlobGas ?? 0n) + (parent.blobGasUsed ?? 0n);
  return sum < PRAGUE_TARGET_BLOB_GAS_PER_BLOCK ? 0n : sum - PRAGUE_TARGET_BLOB_GAS_PER_BLOCK;
}

/**
 * The gas limit of the child block moved from `parentGasLimit` toward `desired` (the proposer's
 * registered preference) by at most what consensus allows: |child - parent| < parent / 1024
 * (yellow paper; geth `CalcGasLimit`). Never below 5000.
 */
export function nextGasLimit(parentGasLimit: bigint, desired: bigint): bigint {
  const delta = parentGasLimit / 1024n - 1n;
  if (desired > parentGasLimit) return desired - parentGasLimit <= delta ? desired : parentGasLimit + delta;
  if (desired < parentGasLimit) {
    const lowered = parentGasLimit - desired <= delta ? desired : parentGasLimit - delta;
    return lowered < 5000n ? 5000n : lowered;
  }
  return parentGasLimit;
}
