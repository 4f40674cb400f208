import type { Hex } from 'viem';
import type { BidTraceJson, ValidatorRegistrationJson } from './signing.js';

/** A withdrawal in an execution payload (JSON of the relay API: decimal strings; `amount` in Gwei). */
export interface WithdrawalJson {
  index: string;
  validator_index: string;
  address: Hex;
  amount: string;
}

/** `ExecutionPayload` (Deneb, unchanged in Electra) as the relay API writes it: 0x hex bytes, decimal strings for integers. */
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

/** Electra `ExecutionRequests` (EIP-7685 as the consensus layer carries them) in relay JSON. */
export interface ExecutionRequestsJson {
  deposits: { pubkey: Hex; withdrawal_credentials: Hex; amount: string; signature: Hex; index: string }[];
  withdrawals: { source_address: Hex; validator_pubkey: Hex; amount: string }[];
  consolidations: { source_address: Hex; source_pubkey: Hex; target_pubkey: Hex }[];
}

/** The blobs bundle of a submission (Deneb builder API): KZG commitments, proofs and blobs. */
export interface BlobsBundleJson {
  commitments: Hex[];
  proofs: Hex[];
  blobs: Hex[];
}

/**
 * Body of `POST /relay/v1/builder/blocks` (MEV-Boost relay builder API, Electra `SubmitBlockRequest`):
 * the signed `message` (BidTrace), the `execution_payload` it commits to, the blobs bundle, the
 * `execution_requests`, and the builder's BLS `signature` over the BidTrace. Sent as SSZ
 * (`application/octet-stream`) or in this JSON form.
 */
export interface SubmitBlockRequest {
  message: BidTraceJson;
  execution_payload: ExecutionPayloadJson;
  blobs_bundle: BlobsBundleJson;
  execution_requests: ExecutionRequestsJson;
  signature: Hex;
}

/**
 * One entry of `GET /relay/v1/builder/validators` (relay builder API): the proposer of `slot`
 * and its signed registration (`entry.message.fee_recipient`, `gas_limit`, `pubkey`).
 */
export interface ValidatorRegistrationEntry {
  slot: string;
  validator_index: string;
  entry: { message: ValidatorRegistrationJson; signature: Hex };
}
