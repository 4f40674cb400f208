import { invalidParams, singleParamsObject, type BundleStatsStore } from '@acg/bundles';
import type { Hash, Hex, PublicClient } from 'viem';
import type { RpcContext } from './context.js';

/** One builder's time for a bundle (Flashbots shape): the builder's BLS public key and an RFC 3339 time. */
export interface BuilderAt {
  pubkey: Hex;
  timestamp: string;
}

/**
 * `flashbots_getBundleStatsV2` result: Flashbots' fields (`isHighPriority`, `isSimulated`,
 * `simulatedAt`, `receivedAt`, `consideredByBuildersAt`, `sealedByBuildersAt`) plus this builder's
 * `sentToRelaysAt` and landing. Times are RFC 3339 UTC with milliseconds.
 */
export interface BundleStatsV2 {
  /** Always true: one queue, and every bundle is simulated in every attempt for its block (what Flashbots' high-priority queue gets). */
  isHighPriority: boolean;
  isSimulated: boolean;
  simulatedAt?: string;
  receivedAt: string;
  /** When this builder chose the bundle for a block of the target height. */
  consideredByBuildersAt: BuilderAt[];
  /** When this builder sealed a block holding the bundle. */
  sealedByBuildersAt: BuilderAt[];
  /** The last submission of a block holding the bundle, per relay, and whether the relay accepted it. */
  sentToRelaysAt: { relay: string; timestamp: string; accepted: boolean }[];
  /** The canonical block at the target height holds every transaction of the bundle (all but droppingTxHashes). */
  landed: boolean;
  /**
   * When landed: that block's hash and timestamp, and whether it is the block this builder sealed (on the
   * dev chain: the same block as anvil mined it, which has anvil's own state root and so its own hash).
   */
  landedBlockHash?: Hash;
  landedAt?: string;
  landedInSealedBlock?: boolean;
  /** When this searcher's copy was received, UNIX ms (BuilderNet's `receivedTimestampMs`; `receivedAt` as a number). */
  receivedTimestampMs: number;
  /**
   * Once landed in the block this builder sealed: ms from receipt to the first seal of a block holding the bundle
   * (the block's own timestamp has second precision; the seal is when the builder included it).
   */
  inclusionLatencyMs?: number;
}

/** Flashbots' answer for a bundle it has not seen; also what another searcher's bundle reads as. */
export type UnknownBundleStats = { isSimulated: false };

const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `flashbots_getBundleStatsV2` params `[{bundleHash, blockNumber}]` (`blockNumber` a hex quantity or
 * an integer): the life of a bundle this searcher (the X-Flashbots-Signature signer) sent for that
 * block (docs/decisions.md: received, simulated, considered, sealed, sent to relays, landed). A bundle the
 * signer did not send, or unknown, answers Flashbots' `{isSimulated: false}`, so no searcher learns
 * about another's bundles. Landing is read from the node when the block exists.
 *
 * @throws {RpcError} -32602 naming `bundleHash` or `blockNumber`.
 */
export async function flashbots_getBundleStatsV2(
  deps: { stats: BundleStatsStore; client: PublicClient; blsPublicKey: Hex },
  params: unknown,
  ctx: RpcContext,
): Promise<BundleStatsV2 | UnknownBundleStats> {
  const obj = singleParamsObject(params, 'flashbots_getBundleStatsV2');
  for (const key of Object.keys(obj)) if (key !== 'bundleHash' && key !== 'blockNumber') throw invalidParams(key, 'unknown field');
  if (typeof obj.bundleHash !== 'string' || !HASH32.test(obj.bundleHash)) throw invalidParams('bundleHash', 'required: a 0x-prefixed 32-byte hash');
  let block: bigint;
  if (typeof obj.blockNumber === 'string' && HEX_QUANTITY.test(obj.blockNumber)) block = BigInt(obj.blockNumber);
  else if (typeof obj.blockNumber === 'number' && Number.isSafeInteger(obj.blockNumber) && obj.blockNumber >= 0) block = BigInt(obj.blockNumber);
  else throw invalidParams('blockNumber', 'required: the target block as a hex quantity such as "0x1361bd3"');

  const life = await deps.stats.read(ctx.searcher, obj.bundleHash as Hash, block);
  if (!life) return { isSimulated: false };
  const at = (ms: number | undefined): BuilderAt[] => (ms === undefined ? [] : [{ pubkey: deps.blsPublicKey, timestamp: iso(ms) }]);
  const out: BundleStatsV2 = {
    isHighPriority: true,
    isSimulated: life.simulatedAt !== undefined,
    ...(life.simulatedAt !== undefined ? { simulatedAt: iso(life.simulatedAt) } : {}),
    receivedAt: iso(life.receivedAt),
    receivedTimestampMs: life.receivedAt,
    consideredByBuildersAt: at(life.consideredAt),
    sealedByBuildersAt: at(life.sealedAt),
    sentToRelaysAt: life.relays,
    landed: false,
  };
  const onChain = await deps.client.getBlock({ blockNumber: block }).catch(() => undefined);
  if (onChain && life.requiredTxs.length > 0) {
    const inBlock = new Set((onChain.transactions as Hash[]).map((h) => h.toLowerCase()));
    if (life.requiredTxs.every((h) => inBlock.has(h.toLowerCase()))) {
      out.landed = true;
      out.landedBlockHash = onChain.hash!;
      out.landedAt = iso(Number(onChain.timestamp) * 1000);
      const canonical = onChain.hash?.toLowerCase();
      out.landedInSealedBlock = [life.sealedBlockHash, life.minedBlockHash].some((h) => h !== undefined && h.toLowerCase() === canonical);
      if (out.landedInSealedBlock && life.sealedAt !== undefined) out.inclusionLatencyMs = life.sealedAt - life.receivedAt;
    }
  }
  return out;
}
