import { concat, decodeAbiParameters, sha256, toHex, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import type { ReceiptLog } from './tries.js';

/** Mainnet deposit contract (EIP-6110 reads its `DepositEvent` logs). */
export const MAINNET_DEPOSIT_CONTRACT: Address = '0x00000000219ab540356cBB839Cbe05303d7705Fa';
/** EIP-7002 withdrawal request predeploy. */
export const WITHDRAWAL_REQUEST_PREDEPLOY: Address = '0x00000961Ef480Eb55e80D19ad83579A64c007002';
/** EIP-7251 consolidation request predeploy. */
export const CONSOLIDATION_REQUEST_PREDEPLOY: Address = '0x0000BBdDc7CE488642fb579F8B00f3a590007251';
/** The system address that calls the predeploys at the end of a block (EIP-7002, EIP-7251). */
export const SYSTEM_ADDRESS: Address = '0xfffffffffffffffffffffffffffffffffffffffe';
/** keccak256("DepositEvent(bytes,bytes,bytes,bytes,bytes)"). */
export const DEPOSIT_EVENT_TOPIC: Hash = '0x649bbc62d0e31342afea4e5cd82d4049e7e1ee912fc0889aa790803be39038c5';

/**
 * A block's execution requests (EIP-7685) by type, each the concatenated SSZ encoding of its
 * requests as the consensus layer reads them: `0x00` deposits (EIP-6110), `0x01` withdrawals
 * (EIP-7002), `0x02` consolidations (EIP-7251). `0x` when there are none of that type.
 */
export interface ExecutionRequestsData {
  deposits: Hex;
  withdrawals: Hex;
  consolidations: Hex;
}

export const NO_REQUESTS: ExecutionRequestsData = { deposits: '0x', withdrawals: '0x', consolidations: '0x' };

/**
 * The deposit requests of a block (EIP-6110): for each `DepositEvent` of the deposit contract,
 * `pubkey ++ withdrawal_credentials ++ amount ++ signature ++ index` (amount and index are the
 * event's 8 little-endian bytes), in log order.
 */
export function depositRequests(logs: readonly ReceiptLog[], depositContract: Address = MAINNET_DEPOSIT_CONTRACT): Hex {
  const parts: Hex[] = [];
  for (const log of logs) {
    if (log.address.toLowerCase() !== depositContract.toLowerCase() || log.topics[0] !== DEPOSIT_EVENT_TOPIC) continue;
    const [pubkey, credentials, amount, signature, index] = decodeAbiParameters(
      [{ type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }],
      log.data,
    );
    parts.push(concat([pubkey, credentials, amount, signature, index]));
  }
  return parts.length ? concat(parts) : '0x';
}

/**
 * The withdrawal and consolidation requests the predeploys would dequeue: the system call of
 * EIP-7002 / EIP-7251 (an empty call from {@link SYSTEM_ADDRESS}) as `eth_call` on the parent
 * state. A node without the predeploys answers `0x` (no requests). Requests added by the block's
 * own transactions are not seen here; the node's `requestsHash`, when it returns one, catches that.
 */
export async function systemRequests(client: PublicClient, parent: bigint): Promise<Pick<ExecutionRequestsData, 'withdrawals' | 'consolidations'>> {
  const read = async (to: Address): Promise<Hex> => {
    const res = await client.call({ account: SYSTEM_ADDRESS, to, data: '0x', blockNumber: parent, gas: 30_000_000n });
    return res.data ?? '0x';
  };
  const [withdrawals, consolidations] = await Promise.all([read(WITHDRAWAL_REQUEST_PREDEPLOY), read(CONSOLIDATION_REQUEST_PREDEPLOY)]);
  return { withdrawals, consolidations };
}

/**
 * `requestsHash` (EIP-7685): sha256 of the concatenated sha256(type ++ data) of each non-empty
 * request type, in type order. No requests: sha256("").
 */
export function requestsHash(r: ExecutionRequestsData): Hash {
  const parts = ([r.deposits, r.withdrawals, r.consolidations] as Hex[]).flatMap((data, type) =>
    data === '0x' ? [] : [sha256(concat([toHex(type, { size: 1 }), data]))],
  );
  return sha256(parts.length ? concat(parts) : '0x');
}
