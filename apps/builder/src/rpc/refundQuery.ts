import { invalidParams, type RefundLedger, type RefundRecord } from '@acg/bundles';
import { getAddress, hexToString, isAddress, isHex, stringToHex, toHex, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import { settleLandedRefunds } from '../refunds.js';
import type { RpcContext } from './context.js';

/** What the `buildernet_*` refund methods use. */
export interface RefundDeps {
  refunds: RefundLedger;
  client: PublicClient;
}

/** One refund as BuilderNet's refund methods answer it (wei and block as hex quantities), plus this builder's details. */
export interface BuilderNetRefund {
  /** The bundle hash. */
  hash: Hash;
  /** Wei, hex quantity. */
  amount: Hex;
  blockNumber: Hex;
  /** `received`: paid by a transaction of the landed block; `pending`: a delayed refund not paid out yet. */
  status: 'pending' | 'received';
  /** The identity credited (`refundIdentity`, else the bundle's signer); for `buildernet_getDelayedRefunds`, where the ETH goes. */
  recipient: Address;
  /** Where the ETH goes: `refundRecipient`, else the sender of the bundle's first transaction. */
  refundRecipient: Address;
  delayed: boolean;
  /** The refund transaction in the landed block (in-block refunds). */
  txHash?: Hash;
}

/** Refunds per page of the paginated methods. */
export const REFUND_PAGE_SIZE = 100;

const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;
const CURSOR_MEMBER = /^\d+:0x[0-9a-f]{64}$/;

/** A refund record in BuilderNet's shape; `recipientIs: 'payee'` reports the ETH recipient as `recipient` (delayed refunds). */
export function builderNetRefund(r: RefundRecord, recipientIs: 'identity' | 'payee' = 'identity'): BuilderNetRefund {
  return {
    hash: r.bundle_hash,
    amount: toHex(BigInt(r.value)),
    blockNumber: toHex(BigInt(r.block_number)),
    status: r.status,
    recipient: recipientIs === 'identity' ? r.identity : r.recipient,
    refundRecipient: r.recipient,
    delayed: r.delayed,
    ...(r.tx_hash ? { txHash: r.tx_hash } : {}),
  };
}

/**
 * The `recipient` asked about: a 20-byte address that must be the request's signer (refunds are private to the
 * identity they are credited to, as bundle stats are to their sender).
 * @throws {RpcError} -32602 naming `field`.
 */
export function ownRecipient(v: unknown, field: string, ctx: RpcContext): Address {
  if (typeof v !== 'string' || !isAddress(v, { strict: false })) throw invalidParams(field, 'required: a 20-byte 0x address');
  const a = getAddress(v);
  if (a !== getAddress(ctx.searcher))
    throw invalidParams(field, 'must be the address that signed the request (X-Flashbots-Signature): refunds are read by their identity');
  return a;
}

/** A bundle hash param. @throws {RpcError} -32602 naming `field`. */
export function bundleHashParam(v: unknown, field: string): Hash {
  if (typeof v !== 'string' || !HASH32.test(v)) throw invalidParams(field, 'required: a 0x-prefixed 32-byte bundle hash');
  return v.toLowerCase() as Hash;
}

/** An optional hex block number. @throws {RpcError} -32602 naming `field`. */
export function optionalBlock(v: unknown, field: string): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !HEX_QUANTITY.test(v)) throw invalidParams(field, 'must be a hex block number such as "0x13ddaa4"');
  return BigInt(v);
}

/** The opaque cursor of a page: the last entry's `<block>:<bundle_hash>`, hex-encoded. */
export const encodeCursor = (member: string | undefined): Hex | undefined => (member === undefined ? undefined : stringToHex(member));

/** Decodes a cursor from {@link encodeCursor}. @throws {RpcError} -32602 naming `field`. */
export function decodeCursor(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' && isHex(v)) {
    try {
      const member = hexToString(v);
      if (CURSOR_MEMBER.test(member)) return member;
    } catch {
      // falls through to the error below
    }
  }
  throw invalidParams(field, 'not a cursor this builder returned');
}

/** Only these fields in `obj`. @throws {RpcError} -32602 naming the first other field. */
export function onlyFields(obj: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(obj)) if (!allowed.includes(key)) throw invalidParams(key, 'unknown field');
}

/** The single object of `params` (`[{...}]`). @throws {RpcError} -32602 naming `params`. */
export function objectParam(params: unknown, method: string): Record<string, unknown> {
  if (!Array.isArray(params) || params.length < 1 || params.length > 2 || typeof params[0] !== 'object' || params[0] === null || Array.isArray(params[0]))
    throw invalidParams('params', `${method} takes an array holding one object`);
  return params[0] as Record<string, unknown>;
}

/** The single string of `params` (`["0x..."]`). @throws {RpcError} -32602 naming `field`. */
export function stringParam(params: unknown, method: string, field: string): unknown {
  if (!Array.isArray(params) || params.length !== 1) throw invalidParams('params', `${method} takes an array holding one value (${field})`);
  return params[0];
}

/** Settles landed blocks first, so the answer holds every refund of the canonical chain. */
export async function settled(deps: RefundDeps): Promise<void> {
  await settleLandedRefunds(deps.refunds, deps.client);
}
