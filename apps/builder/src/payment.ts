import { keccak256, type Address, type Hash, type Hex, type LocalAccount } from 'viem';
import type { SimTx } from './simulate.js';

/** Gas limit of a plain ETH transfer to an account without code. */
export const TRANSFER_GAS = 21_000n;
/** Gas limit of a builder transfer to an account with code (a contract, or an EIP-7702 delegated account). */
export const CONTRACT_TRANSFER_GAS = 100_000n;

/** A refund the block pays to a bundle's `refundRecipient` (docs/decisions.md "Bundle submission": `refundPercent`). */
export interface PlannedRefund {
  bundle_hash: Hash;
  recipient: Address;
  /** Wei sent: `refundPercent` of what the refund transaction(s) paid the coinbase, less the refund's own gas. */
  value: bigint;
  /** Gas limit of the refund transaction. */
  gas: bigint;
}

/** What one bundle paid the coinbase in the block, per transaction (wei), for its refund. */
export interface BundleOutcome {
  bundle_hash: Hash;
  /** Hashes of the bundle's transactions that are in the block, in order. */
  txHashes: Hash[];
  /** Per transaction hash: priority fees plus direct transfers to the coinbase, wei. */
  valueByTx: Map<string, bigint>;
  refundPercent?: number;
  refundRecipient?: Address;
  refundTxHashes: Hash[];
  /** Sender of the bundle's first transaction (the default refund recipient). */
  firstSender: Address;
  /** BuilderNet `delayedRefund`: the refund is recorded pending instead of paid by a transaction in the block. */
  delayedRefund?: boolean;
  /** The bundle's signer. */
  searcher: Address;
  /** Identity credited with the refund: `refundIdentity`, else the signer. */
  identity: Address;
}

/**
 * The refund of one bundle, following Flashbots' `eth_sendBundle` semantics: `refundPercent` (0 to
 * 99) of the ETH the transaction in `refundTxHashes` (default: the bundle's last transaction in
 * the block) paid the coinbase goes to `refundRecipient` (default: the sender of the bundle's first
 * transaction), less the refund transaction's gas (`gas` × base fee), which the refund pays for.
 *
 * @returns undefined when there is nothing to refund (no percent, or the refund would not cover its gas).
 */
export function planRefund(b: BundleOutcome, baseFeePerGas: bigint, gas: bigint): PlannedRefund | undefined {
  if (!b.refundPercent || b.txHashes.length === 0) return undefined;
  const value = (refundBasis(b) * BigInt(b.refundPercent)) / 100n - gas * baseFeePerGas;
  if (value <= 0n) return undefined;
  return { bundle_hash: b.bundle_hash, recipient: b.refundRecipient ?? b.firstSender, value, gas };
}

/** What the refund transaction(s) of a bundle paid the coinbase in the block, wei (`refundTxHashes`, default the last transaction in the block). */
export function refundBasis(b: BundleOutcome): bigint {
  const basis = b.refundTxHashes.length > 0 ? b.refundTxHashes.filter((h) => b.txHashes.includes(h)) : [b.txHashes[b.txHashes.length - 1]];
  return basis.reduce((a, h) => a + (b.valueByTx.get(h) ?? 0n), 0n);
}

/**
 * A delayed refund (BuilderNet `delayedRefund: true`; README "Bundle API of 2026"): `refundPercent` of what the
 * refund transaction paid the coinbase, exactly (floor of the wei product / 100), with no gas taken off: there is
 * no refund transaction in the block. Recorded pending for `refundRecipient` (default the first sender).
 * @returns undefined when it would be 0 wei.
 */
export function planDelayedRefund(b: BundleOutcome): { recipient: Address; value: bigint } | undefined {
  if (!b.refundPercent || b.txHashes.length === 0) return undefined;
  const value = (refundBasis(b) * BigInt(b.refundPercent)) / 100n;
  return value > 0n ? { recipient: b.refundRecipient ?? b.firstSender, value } : undefined;
}

/**
 * The bid (docs/decisions.md "Bundle submission", bid policy in the builder's README): `shareBps` basis points
 * of the block's coinbase profit after the builder's own costs go to the proposer.
 * `profit` = priority fees plus direct transfers the block's transactions pay the coinbase;
 * `costs` = refunds paid, their gas, and the payment transaction's gas (`paymentGas` × base fee).
 *
 * @returns the value of the payment transaction in wei; 0 or less means the block cannot pay a bid.
 */
export function proposerPayment(profit: bigint, costs: bigint, shareBps: number): bigint {
  return ((profit - costs) * BigInt(shareBps)) / 10_000n;
}

/**
 * Signs a transfer from the builder's coinbase (refund or proposer payment): EIP-1559 with a fee
 * cap of exactly the block's base fee and no priority fee, so it costs `gas` × base fee and is
 * valid only in a block with that base fee.
 */
export async function signCoinbaseTransfer(
  account: LocalAccount,
  tx: { chainId: number; nonce: number; to: Address; value: bigint; gas: bigint; baseFeePerGas: bigint },
): Promise<SimTx> {
  const raw: Hex = await account.signTransaction({
    type: 'eip1559',
    chainId: tx.chainId,
    nonce: tx.nonce,
    to: tx.to,
    value: tx.value,
    gas: tx.gas,
    maxFeePerGas: tx.baseFeePerGas,
    maxPriorityFeePerGas: 0n,
  });
  return { raw, hash: keccak256(raw), from: account.address, nonce: tx.nonce };
}
