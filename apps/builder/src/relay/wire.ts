import { gunzipSync } from 'node:zlib';
import { ContainerType } from '@chainsafe/ssz';
import { createBlockFromExecutionPayload } from '@ethereumjs/block';
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { ssz } from '@lodestar/types';
import { bytesToHex, hexToBytes, toHex, type Hash, type Hex } from 'viem';
import { requestsHash, type ExecutionRequestsData } from '../block/requests.js';
import type { SealedBlock } from '../block/seal.js';
import { BidTraceType, type BidTraceJson } from './signing.js';
import type { ExecutionPayloadJson, ExecutionRequestsJson, SubmitBlockRequest } from './types.js';

/**
 * SSZ `SubmitBlockRequest` of the Electra relay builder API (flashbots `builder-api-types`
 * `electra.SubmitBlockRequest`): `message` (BidTrace), `execution_payload` (Deneb/Electra
 * `ExecutionPayload`), `blobs_bundle`, `execution_requests`, `signature`. The field types are
 * `@lodestar/types`' (mainnet preset); `toJson`/`fromJson` give the relay API's JSON.
 */
export const SubmitBlockRequestElectra = new ContainerType(
  {
    message: BidTraceType,
    executionPayload: ssz.electra.ExecutionPayload,
    blobsBundle: ssz.electra.BlobsBundle,
    executionRequests: ssz.electra.ExecutionRequests,
    signature: ssz.BLSSignature,
  },
  { typeName: 'SubmitBlockRequest', jsonCase: 'eth2' },
);

/** SSZ bytes of a submission. @throws when the JSON form is malformed. */
export function encodeSubmitBlockRequestSsz(request: SubmitBlockRequest): Uint8Array {
  return SubmitBlockRequestElectra.serialize(SubmitBlockRequestElectra.fromJson(request));
}

/**
 * Decodes a submission body (after any gzip): SSZ when `contentType` is
 * `application/octet-stream`, JSON otherwise; either way returned in the JSON form, normalised
 * (lowercase hex, decimal strings).
 *
 * @throws {Error} on bytes that are not a well-formed Electra `SubmitBlockRequest`.
 */
export function decodeSubmitBlockRequest(body: Uint8Array, contentType: string | undefined): SubmitBlockRequest {
  const ssz = (contentType ?? '').toLowerCase().startsWith('application/octet-stream');
  const value = ssz ? SubmitBlockRequestElectra.deserialize(body) : SubmitBlockRequestElectra.fromJson(JSON.parse(Buffer.from(body).toString('utf8')));
  return SubmitBlockRequestElectra.toJson(value) as unknown as SubmitBlockRequest;
}

/** Gunzips `body` when `contentEncoding` is gzip. @throws on a corrupt gzip stream or another encoding. */
export function decodeContentEncoding(body: Buffer, contentEncoding: string | undefined): Buffer {
  const enc = (contentEncoding ?? '').toLowerCase().trim();
  if (enc === '' || enc === 'identity') return body;
  if (enc === 'gzip') return gunzipSync(body, { maxOutputLength: 64 * 1024 * 1024 });
  throw new Error(`unsupported content encoding ${enc}`);
}

/** The execution payload of a sealed block in relay JSON. */
export function executionPayloadJson(sealed: SealedBlock): ExecutionPayloadJson {
  const h = sealed.header;
  return {
    parent_hash: h.parentHash,
    fee_recipient: h.coinbase.toLowerCase() as Hex,
    state_root: h.stateRoot,
    receipts_root: h.receiptsRoot,
    logs_bloom: h.logsBloom,
    prev_randao: h.mixHash,
    block_number: h.number.toString(),
    gas_limit: h.gasLimit.toString(),
    gas_used: h.gasUsed.toString(),
    timestamp: h.timestamp.toString(),
    extra_data: h.extraData,
    base_fee_per_gas: (h.baseFeePerGas ?? 0n).toString(),
    block_hash: sealed.hash,
    transactions: sealed.transactions,
    withdrawals: sealed.withdrawals.map((w) => ({
      index: w.index.toString(),
      validator_index: w.validatorIndex.toString(),
      address: w.address.toLowerCase() as Hex,
      amount: w.amount.toString(),
    })),
    blob_gas_used: (h.blobGasUsed ?? 0n).toString(),
    excess_blob_gas: (h.excessBlobGas ?? 0n).toString(),
  };
}

/** Electra `ExecutionRequests` in relay JSON from the per-type request bytes. */
export function executionRequestsJson(r: ExecutionRequestsData): ExecutionRequestsJson {
  const t = ssz.electra;
  return t.ExecutionRequests.toJson({
    deposits: t.DepositRequests.deserialize(hexToBytes(r.deposits)),
    withdrawals: t.WithdrawalRequests.deserialize(hexToBytes(r.withdrawals)),
    consolidations: t.ConsolidationRequests.deserialize(hexToBytes(r.consolidations)),
  }) as unknown as ExecutionRequestsJson;
}

/** The per-type request bytes (EIP-7685 order) of Electra `ExecutionRequests` in relay JSON. */
export function executionRequestsData(json: ExecutionRequestsJson): ExecutionRequestsData {
  const t = ssz.electra;
  const v = t.ExecutionRequests.fromJson(json);
  return {
    deposits: bytesToHex(t.DepositRequests.serialize(v.deposits)),
    withdrawals: bytesToHex(t.WithdrawalRequests.serialize(v.withdrawals)),
    consolidations: bytesToHex(t.ConsolidationRequests.serialize(v.consolidations)),
  };
}

/** The signed submission of a sealed block. */
export function submitBlockRequest(sealed: SealedBlock, message: BidTraceJson, signature: Hex): SubmitBlockRequest {
  return {
    message,
    execution_payload: executionPayloadJson(sealed),
    blobs_bundle: { commitments: [], proofs: [], blobs: [] },
    execution_requests: executionRequestsJson(sealed.requests),
    signature,
  };
}

/**
 * Checks a submission's `block_hash` the way a relay does: `@ethereumjs/block`'s
 * `createBlockFromExecutionPayload` rebuilds the Prague header (transactions and withdrawals roots
 * from the payload's lists, `requestsHash` from `execution_requests`, the slot's
 * `parentBeaconBlockRoot`, which the payload does not carry: the relay knows it from the beacon
 * chain) and compares its hash. Never throws.
 *
 * @returns `{ok: true}`, or `{ok: false, reason}` (the library's message, one line).
 */
export async function verifyPayloadBlockHash(
  request: Pick<SubmitBlockRequest, 'execution_payload' | 'execution_requests'>,
  parentBeaconBlockRoot: Hash,
  chainId: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const p = request.execution_payload;
  const q = (s: string) => toHex(BigInt(s));
  try {
    const common = createCustomCommon({ chainId }, Mainnet, { hardfork: Hardfork.Prague });
    await createBlockFromExecutionPayload(
      {
        parentHash: p.parent_hash,
        feeRecipient: p.fee_recipient,
        stateRoot: p.state_root,
        receiptsRoot: p.receipts_root,
        logsBloom: p.logs_bloom,
        prevRandao: p.prev_randao,
        blockNumber: q(p.block_number),
        gasLimit: q(p.gas_limit),
        gasUsed: q(p.gas_used),
        timestamp: q(p.timestamp),
        extraData: p.extra_data,
        baseFeePerGas: q(p.base_fee_per_gas),
        blockHash: p.block_hash,
        transactions: p.transactions,
        withdrawals: p.withdrawals.map((w) => ({ index: q(w.index), validatorIndex: q(w.validator_index), address: w.address, amount: q(w.amount) })),
        blobGasUsed: q(p.blob_gas_used),
        excessBlobGas: q(p.excess_blob_gas),
        parentBeaconBlockRoot,
        requestsHash: requestsHash(executionRequestsData(request.execution_requests)),
      },
      { common },
    );
    return { ok: true };
  } catch (e) {
    return {
      ok: false,
      reason: String((e as Error)?.message ?? e)
        .split('\n')[0]
        .slice(0, 200),
    };
  }
}
