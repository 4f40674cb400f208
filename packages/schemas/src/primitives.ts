import { z } from 'zod';
import { getAddress } from 'viem';

/**
 * Shared wire primitives. Every one is JSON-friendly (big integers travel as decimal strings)
 * and survives `z.toJSONSchema` as plain `type`/`pattern`/`format` keywords that strict Ajv
 * accepts (docs/pitfalls.md: regexes, never `.startsWith()`, no `z.date()`/`z.bigint()`).
 */

/** Capability id `<product>.<name>`, each part `[a-z][a-z0-9_]*` (docs/spec-notes.md 2.2 `id`). */
export const CAPABILITY_ID_PATTERN = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** Capability id string, e.g. `intelligence.wallet_balances` (docs/spec-notes.md 2.2). */
export const CapabilityId = z.string().regex(CAPABILITY_ID_PATTERN, 'must be <product>.<name>, lowercase letters, digits or _');
export type CapabilityId = z.infer<typeof CapabilityId>;

/** SemVer restricted to three dot-separated integers without leading zeros, e.g. `1.0.0` (docs/spec-notes.md 2.1, 9). */
export const SemVer = z.string().regex(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/, 'must be MAJOR.MINOR.PATCH');
export type SemVer = z.infer<typeof SemVer>;

/**
 * RFC 3339 date-time in UTC (`Z` suffix, optional fractional seconds), e.g. `2025-01-01T00:00:00.000Z`
 * (what `Date#toISOString()` emits). JSON Schema: `format: date-time` plus a pattern (docs/spec-notes.md 2.1 `generated_at`).
 */
export const DateTime = z.iso.datetime();
export type DateTime = z.infer<typeof DateTime>;

/** Absolute URI string (JSON Schema `format: uri`) (docs/spec-notes.md 2.2 `endpoint`, `docs_url`, ...). */
export const Uri = z.url();
export type Uri = z.infer<typeof Uri>;

/** SHA-256 digest as 64 lowercase hex characters, no `0x` (docs/spec-notes.md 2.2 `evidence.probe.body_sha256`). */
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');
export type Sha256Hex = z.infer<typeof Sha256Hex>;

/** EVM address: `0x` + 40 hex characters, any case (checksum not enforced). */
export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex characters');
export type Address = z.infer<typeof Address>;

/**
 * EIP-55 checksummed EVM address, as returned by viem `getAddress`. The JSON Schema carries
 * only the hex pattern (a checksum is not expressible there); zod parsing also checks EIP-55.
 */
export const ChecksumAddress = Address.refine(isChecksummed, 'must be an EIP-55 checksummed address');
export type ChecksumAddress = z.infer<typeof ChecksumAddress>;

/**
 * Addresses already found checksummed (up to 65,536, then forgotten at once). Output validation
 * checks the same addresses on every answer (a liquidation search answer holds 200), and viem's own
 * checksum cache (an LRU of 8,192 that deletes and re-inserts on every hit) thrashes over a larger
 * set: that was a fifth of a cached liquidation query's CPU.
 */
const checksummed = new Set<string>();

function isChecksummed(value: string): boolean {
  if (checksummed.has(value)) return true;
  let ok: boolean;
  try {
    ok = getAddress(value) === value;
  } catch {
    return false;
  }
  if (ok) {
    if (checksummed.size >= 65_536) checksummed.clear();
    checksummed.add(value);
  }
  return ok;
}

/** 32-byte hash (transaction or block hash): `0x` + 64 hex characters. */
export const Hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x followed by 64 hex characters');
export type Hash32 = z.infer<typeof Hash32>;

/** Hex data of any even length: `0x` + hex pairs (signed raw transactions, signatures). */
export const HexData = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex bytes');
export type HexData = z.infer<typeof HexData>;

/** Hex quantity (JSON-RPC `QUANTITY`): `0x0` or `0x` + hex without leading zeros, e.g. a block number. */
export const HexQuantity = z.string().regex(/^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/, 'must be a 0x-prefixed hex quantity');
export type HexQuantity = z.infer<typeof HexQuantity>;

/**
 * Non-negative integer as a decimal string without leading zeros, e.g. `"1000"`. Used for token
 * amounts in base units (USDC: 6 decimals, ETH: wei) and block numbers (docs/spec-notes.md 2.7 `payment.amount`, 2.9).
 */
export const UintString = z.string().regex(/^(0|[1-9]\d*)$/, 'must be a non-negative integer in decimal');
export type UintString = z.infer<typeof UintString>;

/** Non-negative decimal string in currency units, e.g. `"0.001"` USDC (/registry `price`). */
export const DecimalString = z.string().regex(/^(0|[1-9]\d*)(\.\d+)?$/, 'must be a non-negative decimal number');
export type DecimalString = z.infer<typeof DecimalString>;

/**
 * A {@link DecimalString} that USDC can pay exactly: at most 6 decimals (USDC's base unit), e.g.
 * `"0.001"` (an offer's `price_usdc`, a route's `max_price_usdc`). The bound is a zod refinement:
 * the JSON Schema is {@link DecimalString}'s.
 */
export const UsdcDecimalString = DecimalString.refine((s) => (s.split('.')[1]?.length ?? 0) <= 6, 'must have at most 6 decimals');
export type UsdcDecimalString = z.infer<typeof UsdcDecimalString>;

/** CAIP-2 EVM chain id `eip155:<chain_id>`, e.g. `eip155:8453` for Base (docs/spec-notes.md 2.9 `network`). */
export const Caip2Network = z.string().regex(/^eip155:(0|[1-9]\d*)$/, 'must be eip155:<chain_id>');
export type Caip2Network = z.infer<typeof Caip2Network>;

/** Crockford base32 ULID body: 26 characters (used after a type prefix such as `exe_`). */
export const ULID_PATTERN_SOURCE = '[0-9A-HJKMNP-TV-Z]{26}';

/** Build a schema for `<prefix>_<ULID>` ids, e.g. `prefixedUlid('exe')` accepts `exe_01J...`. */
export function prefixedUlid(prefix: string) {
  return z.string().regex(new RegExp(`^${prefix}_${ULID_PATTERN_SOURCE}$`), `must be ${prefix}_ followed by a ULID`);
}

/** UNIX timestamp in whole seconds (docs/spec-notes.md 2.6 `expires_at`). */
export const UnixSeconds = z.int().nonnegative();
export type UnixSeconds = z.infer<typeof UnixSeconds>;

/** A latency percentile in milliseconds (e.g. p50, p99), null before the first sample it could come from. */
export const LatencyPercentileMs = z.number().nonnegative().nullable();
export type LatencyPercentileMs = z.infer<typeof LatencyPercentileMs>;

/** Chains the intelligence and MEV products read: `ethereum`, `base`, `arbitrum` (docs/spec-notes.md 4 wallet monitor, docs/decisions.md). */
export const ChainName = z.enum(['ethereum', 'base', 'arbitrum']);
export type ChainName = z.infer<typeof ChainName>;

/** Arbitrary JSON object (capability `input`/`result`, JSON Schema documents). */
export const JsonObject = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObject>;
