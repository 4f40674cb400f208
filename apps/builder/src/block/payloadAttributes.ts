import { concat, keccak256, stringToHex, type Hash } from 'viem';
import type { WithdrawalData } from './tries.js';

/**
 * What the consensus layer fixes for the block of a slot (the beacon node's `payload_attributes`
 * event): `timestamp` (UNIX seconds), `prevRandao`, the `withdrawals` to credit and the
 * `parentBeaconBlockRoot` (EIP-4788). The execution payload commits to all four.
 */
export interface PayloadAttributes {
  timestamp: bigint;
  prevRandao: Hash;
  withdrawals: WithdrawalData[];
  parentBeaconBlockRoot: Hash;
}

/**
 * The dev chain has no beacon chain: its stand-in `parentBeaconBlockRoot` for the block after
 * `parentHash` is keccak256("acg-dev-beacon-root" ++ parentHash). The builder and the dev relays
 * derive it the same way, so a relay can recompute the block hash of a dev payload.
 */
export function devParentBeaconBlockRoot(parentHash: Hash): Hash {
  return keccak256(concat([stringToHex('acg-dev-beacon-root'), parentHash]));
}

/** The dev chain's stand-in `prevRandao` for the block after `parentHash`: keccak256("acg-dev-prev-randao" ++ parentHash). */
export function devPrevRandao(parentHash: Hash): Hash {
  return keccak256(concat([stringToHex('acg-dev-prev-randao'), parentHash]));
}

/** Payload attributes of the dev chain (no beacon chain): derived from the parent hash, no withdrawals. */
export function devPayloadAttributes(parentHash: Hash, timestamp: bigint): PayloadAttributes {
  return { timestamp, prevRandao: devPrevRandao(parentHash), withdrawals: [], parentBeaconBlockRoot: devParentBeaconBlockRoot(parentHash) };
}
