import type { Hex } from 'viem';
import type { BidTraceJson } from './signing.js';

/** A withdrawal in an execution payload (JSON of the relay API: decimal strings). */
export interface WithdrawalJson {
  index: string;
  validator_index: string;
  address: Hex;
  amount: string;
}

/** `ExecutionPayload` (Deneb) as the relay API writes it: 0x hex bytes, decimal strings for integers. */
export interface ExecutionPayloadJson {
  parent_hash: Hex;
  fee_recipient: Hex;
  state_root: Hex;
  receipts_root: Hex;
  logs_bloom: Hex;
  prev_randao: Hex;
  block_number: string;
  gas_limit: string;
  gas_used: string;
  timestamp: string;
  extra_data: Hex;
  base_fee_per_gas: string;
  block_hash: Hex;
  transactions: Hex[];
  withdrawals: WithdrawalJson[];
  blob_gas_used: string;
  excess_blob_gas: string;
}

/**
 * Body of `POST /relay/v1/builder/blocks` (MEV-Boost relay builder API, Deneb `SubmitBlockRequest`):
 * the signed `message` (BidTrace), the `execution_payload` it commits to, the blobs bundle and the
 * builder's BLS `signature` over the BidTrace.
 */
export interface SubmitBlockRequest {
  message: BidTraceJson;
  execution_payload: ExecutionPayloadJson;
  blobs_bundle: { commitments: Hex[]; proofs: Hex[]; blobs: Hex[] };
  signature: Hex;
}
