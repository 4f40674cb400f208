import { keccak256, parseTransaction, toRlp, zeroHash, type Address, type Hash, type Hex, type PublicClient, type TransactionSerialized } from 'viem';
import { simulateBlock, type SimTx, type SimulatedTx } from '../simulate.js';
import { blockHash, EMPTY_OMMERS_HASH, headerFromRpc, headerRlpFields, ZERO_NONCE, type ExecutionHeader } from './header.js';
import type { PayloadAttributes } from './payloadAttributes.js';
import { depositRequests, requestsHash, systemRequests, type ExecutionRequestsData } from './requests.js';
import { logsBloom, orBlooms, receiptsRoot, transactionsRoot, withdrawalsRoot, type ReceiptData, type WithdrawalData } from './tries.js';

/** Why a block could not be sealed: `shortMessage` is safe to log and to return (never upstream text verbatim). */
export class SealError extends Error {
  override name = 'SealError';
  readonly shortMessage: string;
  constructor(message: string) {
    super(message);
    this.shortMessage = message;
  }
}

/** Everything the block of a slot is built from, besides its transactions. */
export interface SealParams {
  parent: { number: bigint; hash: Hash };
  /** The block's fee recipient: the builder's coinbase. */
  coinbase: Address;
  gasLimit: bigint;
  /** Wei; the node's next base fee (`eth_feeHistory`). */
  baseFeePerGas: bigint;
  /** Used when the node's simulated header does not carry `excessBlobGas` (anvil). */
  excessBlobGas: bigint;
  attributes: PayloadAttributes;
  /** At most 32 bytes. */
  extraData: Hex;
  /** The block's transactions in order, each already simulated valid by the bidder. */
  txs: readonly SimTx[];
  /** Deposit contract whose logs are deposit requests (EIP-6110); default mainnet's. */
  depositContract?: Address;
  /**
   * Accept a zero `stateRoot` from the node (anvil's `eth_simulateV1` computes none; docs/decisions.md
   * "Bundle submission"). Off, a zero root is a seal failure.
   */
  acceptZeroStateRoot: boolean;
}

/** A sealed block: its header and hash, and what the execution payload carries besides the header. */
export interface SealedBlock {
  header: ExecutionHeader;
  /** keccak256(RLP(header)). */
  hash: Hash;
  /** Signed transactions in block order. */
  transactions: Hex[];
  withdrawals: WithdrawalData[];
  requests: ExecutionRequestsData;
  receipts: ReceiptData[];
  /** Per-transaction outcome of the sealing simulation (same order). */
  outcomes: SimulatedTx[];
  /** True when the node returned a zero state root that was accepted (anvil). */
  zeroStateRoot: boolean;
}

const TX_TYPES: Record<string, number> = { legacy: 0, eip2930: 1, eip1559: 2, eip4844: 3, eip7702: 4 };

/**
 * Seals a block against the node's state (docs/decisions.md "Bundle submission"): one `eth_simulateV1` with
 * `validation: true` of the whole block on top of `parent`, with the slot's overrides (number,
 * timestamp, coinbase, gas limit, base fee, prevRandao, beacon root, withdrawals). From the node
 * it takes the state root, gas used, logs and statuses (and `excessBlobGas` where returned); the
 * number and parent come from the chain (anvil answers number 0), and the transactions root, the
 * receipts root, the bloom, the withdrawals root and the EIP-7685 requests are computed here over the
 * real signed transactions (the node's simulated block holds unsigned stand-ins). Checks before
 * returning: the node's own header hashes to the hash it reports (our RLP agrees with the node),
 * gas used matches, the number is the chain's, and the node's `requestsHash`, where returned, is ours.
 *
 * @throws {SealError} when the node refuses the block, a transaction is invalid, or a check fails.
 */
export async function sealBlock(client: PublicClient, p: SealParams): Promise<SealedBlock> {
  const number = p.parent.number + 1n;
  const sim = await simulateBlock(
    client,
    {
      parent: p.parent.number,
      number,
      feeRecipient: p.coinbase,
      timestamp: p.attributes.timestamp,
      gasLimit: p.gasLimit,
      baseFeePerGas: p.baseFeePerGas,
      prevRandao: p.attributes.prevRandao,
      parentBeaconBlockRoot: p.attributes.parentBeaconBlockRoot,
      withdrawals: p.attributes.withdrawals,
    },
    p.txs,
    new Map(),
    { traceTransfers: false },
  );
  if (!sim.ok || !sim.header) throw new SealError(`the node refused the block: ${sim.error ?? 'no block returned'}`);
  const bad = sim.txs.find((t) => t.status === 'invalid');
  if (bad) throw new SealError(`transaction ${bad.hash} is invalid in the sealed block${bad.reason ? ` (${bad.reason})` : ''}`);
  const node = sim.header;
  if (node.hash && keccak256(toRlp(headerRlpFields(headerFromRpc(node)))) !== node.hash)
    throw new SealError('the node reports a block hash that its own header does not hash to');
  const nodeNumber = BigInt(node.number);
  if (nodeNumber !== 0n && nodeNumber !== number) throw new SealError(`the node sealed block ${nodeNumber}, not ${number}`);
  if (BigInt(node.gasUsed) !== sim.gasUsed) throw new SealError(`gas used differs: node ${BigInt(node.gasUsed)}, transactions ${sim.gasUsed}`);
  const zeroStateRoot = node.stateRoot === zeroHash;
  if (zeroStateRoot && !p.acceptZeroStateRoot) throw new SealError('the node returned no state root for the simulated block');

  let cumulative = 0n;
  const receipts: ReceiptData[] = sim.txs.map((t, i) => {
    cumulative += t.gasUsed;
    const type = TX_TYPES[parseTransaction(p.txs[i].raw as TransactionSerialized).type ?? 'legacy'] ?? 0;
    return { type, status: t.status === 'success' ? 1 : 0, cumulativeGasUsed: cumulative, logs: t.logs };
  });
  const allLogs = sim.txs.flatMap((t) => t.logs);
  const requests: ExecutionRequestsData = { deposits: depositRequests(allLogs, p.depositContract), ...(await systemRequests(client, p.parent.number)) };
  const reqHash = requestsHash(requests);
  if (node.requestsHash && node.requestsHash !== reqHash) throw new SealError('the execution requests computed here differ from the node’s requestsHash');
  const transactions = p.txs.map((t) => t.raw);
  const header: ExecutionHeader = {
    parentHash: p.parent.hash,
    ommersHash: EMPTY_OMMERS_HASH,
    coinbase: p.coinbase,
    stateRoot: node.stateRoot,
    transactionsRoot: await transactionsRoot(transactions),
    receiptsRoot: await receiptsRoot(receipts),
    logsBloom: orBlooms(receipts.map((r) => logsBloom(r.logs))),
    difficulty: 0n,
    number,
    gasLimit: p.gasLimit,
    gasUsed: sim.gasUsed,
    timestamp: p.attributes.timestamp,
    extraData: p.extraData,
    mixHash: p.attributes.prevRandao,
    nonce: ZERO_NONCE,
    baseFeePerGas: p.baseFeePerGas,
    withdrawalsRoot: await withdrawalsRoot(p.attributes.withdrawals),
    blobGasUsed: 0n,
    excessBlobGas: node.excessBlobGas !== undefined ? BigInt(node.excessBlobGas) : p.excessBlobGas,
    parentBeaconBlockRoot: p.attributes.parentBeaconBlockRoot,
    requestsHash: reqHash,
  };
  return {
    header,
    hash: blockHash(header),
    transactions,
    withdrawals: [...p.attributes.withdrawals],
    requests,
    receipts,
    outcomes: sim.txs,
    zeroStateRoot,
  };
}

/** What {@link checkSealer} found: whether blocks can be sealed on this node, and why not. */
export interface SealerStatus {
  ok: boolean;
  /** `web3_clientVersion`, e.g. `Geth/v1.15.11-stable/linux-amd64/go1.24.2` or `anvil/v1.7.1`; null when not answered. */
  client: string | null;
  /** The node answers `eth_simulateV1` with a zero state root, accepted on anvil only (docs/decisions.md "Bundle submission"). */
  zeroStateRoot: boolean;
  /** Why not, when `ok` is false. */
  reason?: string;
  checked_at: string;
}

/**
 * The startup check of the sealer: simulates an empty block on top of the head with
 * `eth_simulateV1` and `validation: true`, and checks that the node returns a header that hashes to
 * its reported hash and carries a state root. A zero state root passes only on anvil
 * (`web3_clientVersion` `anvil/...`), whose simulation computes none. Never throws.
 */
export async function checkSealer(client: PublicClient): Promise<SealerStatus> {
  const checked_at = new Date().toISOString();
  const version: unknown = await client.request({ method: 'web3_clientVersion' as never }).catch(() => null);
  const name = typeof version === 'string' ? version : null;
  const anvil = name?.toLowerCase().startsWith('anvil/') ?? false;
  const fail = (reason: string): SealerStatus => ({ ok: false, client: name, zeroStateRoot: false, reason, checked_at });
  let head: { number: bigint; timestamp: bigint };
  try {
    head = await client.getBlock({ blockTag: 'latest' });
  } catch {
    return fail('the node does not answer eth_getBlockByNumber');
  }
  const sim = await simulateBlock(
    client,
    { parent: head.number, feeRecipient: '0x0000000000000000000000000000000000000000', timestamp: head.timestamp + 12n },
    [],
    new Map(),
    {
      traceTransfers: false,
    },
  ).catch(() => undefined);
  if (!sim?.ok || !sim.header) return fail(`eth_simulateV1 with validation is not available: ${sim?.error ?? 'no answer'}`);
  const node = sim.header;
  if (!node.stateRoot) return fail('eth_simulateV1 returns no stateRoot');
  if (node.hash && keccak256(toRlp(headerRlpFields(headerFromRpc(node)))) !== node.hash)
    return fail('the header eth_simulateV1 returns does not hash to its block hash');
  const zeroStateRoot = node.stateRoot === zeroHash;
  if (zeroStateRoot && !anvil) return fail('eth_simulateV1 returns a zero state root (only accepted from anvil, the dev chain)');
  return { ok: true, client: name, zeroStateRoot, checked_at };
}
