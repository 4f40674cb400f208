import type { Address, PublicClient } from 'viem';
import { bundleHash, decodeBundleTx, MAX_BUNDLE_BYTES, MAX_BUNDLE_TXS, singleParamsObject } from '@acg/bundles';
import type { BundleIntake } from '@acg/bundles';
import { simulateBlock } from '../simulate.js';
import type { RpcContext } from './context.js';
import { internalError, invalidParams } from '@acg/bundles';

/** One transaction's outcome in `eth_callBundle` (Flashbots shape; wei amounts as decimal strings). */
export interface CallBundleTxResult {
  txHash: `0x${string}`;
  fromAddress: Address;
  toAddress: Address | null;
  gasUsed: number;
  gasPrice: string;
  gasFees: string;
  coinbaseDiff: string;
  ethSentToCoinbase: string;
  /** Return data (hex). */
  value: `0x${string}`;
  /** Present when the transaction reverted or could not be included. */
  error?: string;
}

/** Result of `eth_callBundle` (Flashbots shape). */
export interface CallBundleResult {
  bundleHash: `0x${string}`;
  bundleGasPrice: string;
  coinbaseDiff: string;
  ethSentToCoinbase: string;
  gasFees: string;
  results: CallBundleTxResult[];
  stateBlockNumber: number;
  totalGasUsed: number;
}

const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;

/**
 * `eth_callBundle` params `[{txs, blockNumber, stateBlockNumber?, timestamp?}]`: simulates the
 * bundle with `eth_simulateV1` on the node as block `blockNumber` on top of `stateBlockNumber`
 * (default `latest`), with the builder's fee recipient as coinbase. Nothing is queued or charged.
 *
 * @throws {RpcError} -32602 naming the bad field; -32603 when the node refuses the simulation as a whole
 *   (e.g. a sender cannot pay for gas), with the node's short reason in `data.reason`.
 */
export async function eth_callBundle(
  deps: { intake: BundleIntake; client: PublicClient; feeRecipient: Address },
  params: unknown,
  _ctx: RpcContext,
): Promise<CallBundleResult> {
  const obj = singleParamsObject(params, 'eth_callBundle');
  for (const key of Object.keys(obj)) if (!['txs', 'blockNumber', 'stateBlockNumber', 'timestamp'].includes(key)) throw invalidParams(key, 'unknown field');
  if (!Array.isArray(obj.txs) || obj.txs.length === 0) throw invalidParams('txs', 'required: a non-empty array of hex-encoded signed transactions');
  if (obj.txs.length > MAX_BUNDLE_TXS) throw invalidParams('txs', `at most ${MAX_BUNDLE_TXS} transactions per bundle`);
  const bytes = (obj.txs as unknown[]).reduce<number>((a, t) => a + (typeof t === 'string' ? (t.length - 2) / 2 : 0), 0);
  if (bytes > MAX_BUNDLE_BYTES) throw invalidParams('txs', `the bundle is ${bytes} bytes; at most ${MAX_BUNDLE_BYTES}`);
  if (typeof obj.blockNumber !== 'string' || !HEX_QUANTITY.test(obj.blockNumber)) throw invalidParams('blockNumber', 'required: a hex quantity');
  let state: bigint;
  if (obj.stateBlockNumber === undefined || obj.stateBlockNumber === 'latest') state = await deps.intake.headBlock();
  else if (typeof obj.stateBlockNumber === 'string' && HEX_QUANTITY.test(obj.stateBlockNumber)) state = BigInt(obj.stateBlockNumber);
  else throw invalidParams('stateBlockNumber', 'must be "latest" or a hex quantity');
  if (obj.timestamp !== undefined && (typeof obj.timestamp !== 'number' || !Number.isSafeInteger(obj.timestamp) || obj.timestamp < 0))
    throw invalidParams('timestamp', 'must be a non-negative integer (UNIX seconds)');
  const chainId = await deps.intake.chainId();
  const txs = await Promise.all((obj.txs as unknown[]).map((raw, i) => decodeBundleTx(raw, `txs[${i}]`, chainId)));

  const sim = await simulateBlock(
    deps.client,
    {
      parent: state,
      number: BigInt(obj.blockNumber),
      feeRecipient: deps.feeRecipient,
      timestamp: obj.timestamp === undefined ? undefined : BigInt(obj.timestamp as number),
    },
    txs,
  );
  if (!sim.ok) throw internalError('The node refused to simulate this bundle.', { reason: sim.error }, 502);
  let fees = 0n;
  let sent = 0n;
  let gas = 0n;
  const results: CallBundleTxResult[] = sim.txs.map((r) => {
    fees += r.gasFees;
    sent += r.coinbaseTransfer;
    gas += r.gasUsed;
    const out: CallBundleTxResult = {
      txHash: r.hash,
      fromAddress: r.from,
      toAddress: r.to,
      gasUsed: Number(r.gasUsed),
      gasPrice: (r.gasUsed > 0n ? (r.gasFees + r.coinbaseTransfer) / r.gasUsed : 0n).toString(),
      gasFees: r.gasFees.toString(),
      coinbaseDiff: (r.gasFees + r.coinbaseTransfer).toString(),
      ethSentToCoinbase: r.coinbaseTransfer.toString(),
      value: r.returnData,
    };
    if (r.status !== 'success') out.error = r.reason ?? r.status;
    return out;
  });
  return {
    bundleHash: bundleHash(txs.map((t) => t.hash)),
    bundleGasPrice: (gas > 0n ? (fees + sent) / gas : 0n).toString(),
    coinbaseDiff: (fees + sent).toString(),
    ethSentToCoinbase: sent.toString(),
    gasFees: fees.toString(),
    results,
    stateBlockNumber: Number(state),
    totalGasUsed: Number(gas),
  };
}
