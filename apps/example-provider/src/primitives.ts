import { z } from 'zod';
import type { ChainName } from './chains.js';

/** EVM address: `0x` + 40 hex characters, any case (answers are EIP-55 checksummed). */
export const AddressInput = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be 0x followed by 40 hex characters');
/** EIP-55 address as this provider answers it (JSON Schema: the hex pattern). */
export const AddressOutput = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
/** Hex bytes: `0x` + pairs of hex digits. */
export const HexBytes = z.string().regex(/^0x(?:[0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex bytes');
/** Non-negative integer in decimal, no leading zeros (wei, token base units, block numbers). */
export const UintString = z.string().regex(/^(0|[1-9]\d*)$/, 'must be a non-negative integer in decimal');
/** Signed integer in decimal (a balance change). */
export const IntString = z.string().regex(/^(0|-?[1-9]\d*)$/, 'must be an integer in decimal');
/** Decimal amount in token units, e.g. `"1.5"` (for people; `*_base_units`/`balance` fields are exact). */
export const DecimalString = z.string().regex(/^-?(0|[1-9]\d*)(\.\d+)?$/);

/** zod enum of the configured chain names (the offer's JSON Schema then lists exactly the chains served). */
export function chainEnum(chains: readonly ChainName[]) {
  return z.enum(chains as [ChainName, ...ChainName[]]);
}
