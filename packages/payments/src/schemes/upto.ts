import { recoverTypedDataSigner } from '@acg/secp256k1';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { PERMIT2_ADDRESS, uptoPermit2WitnessTypes, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/server';
import { LRUCache } from 'lru-cache';
import { getAddress, isAddressEqual } from 'viem';
import { DEFAULT_CLOCK_SKEW_SECONDS } from '../authorizationWindow.js';
import { REQUIREMENTS_CACHE_MAX } from '../challenge.js';
import { permit2NonceUsed, trackSettlement } from '@acg/treasury';
import type { AuthorizationRef } from '../reservation.js';
import { signedTransaction } from './signedTransaction.js';
import type { AuthorizeResult, PaymentScheme, SchemeAuthorization, SchemeContext, SettledOnChain } from './strategy.js';

const UINT256_MAX = (1n << 256n) - 1n;

/** The Permit2 authorization of an `upto` payload (x402 `specs/schemes/upto/scheme_upto_evm.md`): the signed `PermitWitnessTransferFrom`. */
export interface UptoPermit2Authorization {
  from: `0x${string}`;
  permitted: { token: `0x${string}`; amount: string };
  spender: `0x${string}`;
  /** uint256, decimal string */
  nonce: string;
  /** Unix seconds, decimal string */
  deadline: string;
  witness: { to: `0x${string}`; facilitator: `0x${string}`; validAfter: string };
}

/**
 * The `upto` payload's Permit2 authorization and signature, checked for shape (addresses, integer
 * strings, a hex signature); undefined when it is not one (e.g. an EIP-3009 payload sent as `upto`).
 */
export function uptoPermit2Authorization(payload: PaymentPayload): { authorization: UptoPermit2Authorization; signature: `0x${string}` } | undefined {
  const p = payload.payload as { signature?: unknown; permit2Authorization?: Record<string, unknown> };
  const a = p.permit2Authorization;
  if (!a || typeof a !== 'object' || typeof p.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(p.signature)) return undefined;
  const addr = (v: unknown) => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v);
  const uint = (v: unknown) => typeof v === 'string' && /^[0-9]{1,78}$/.test(v) && BigInt(v) <= UINT256_MAX;
  const permitted = a.permitted as Record<string, unknown> | undefined;
  const witness = a.witness as Record<string, unknown> | undefined;
  if (!permitted || typeof permitted !== 'object' || !witness || typeof witness !== 'object') return undefined;
  if (!addr(a.from) || !addr(a.spender) || !uint(a.nonce) || !uint(a.deadline)) return undefined;
  if (!addr(permitted.token) || !uint(permitted.amount) || !addr(witness.to) || !addr(witness.facilitator) || !uint(witness.validAfter)) return undefined;
  return { authorization: a as unknown as UptoPermit2Authorization, signature: p.signature as `0x${string}` };
}

/** A Permit2 nonce (uint256, decimal) as the reservation's nonce: `0x` + 64 lowercase hex digits. */
export function permit2NonceHex(nonce: string): `0x${string}` {
  return `0x${BigInt(nonce).toString(16).padStart(64, '0')}`;
}

/**
 * The x402 `upto` scheme on EVM (Permit2, docs/decisions.md "Payment schemes"): the payer signs a
 * Permit2 `PermitWitnessTransferFrom` for a ceiling (the 402's `amount`), with the
 * `x402UptoPermit2Proxy` as spender and the witness `(to, facilitator, validAfter)`; the facilitator
 * named in the witness later settles any amount up to the ceiling, once. A deferred scheme: the
 * payment is verified (the official facilitator simulates a settlement of the whole ceiling) and
 * reserved per (Permit2, payer, nonce) before the operation runs, and `Paywall.complete` settles
 * what it used. Requirements carry `extra.assetTransferMethod: "permit2"` and the facilitator's
 * address (`extra.facilitatorAddress`, from its `/supported` kinds): without one the scheme is
 * not offered. The payer must have approved Permit2 for the asset (or sign the EIP-2612
 * gas-sponsoring extension the official client adds when the facilitator declares it).
 */
export class UptoScheme implements PaymentScheme {
  readonly scheme = 'upto';
  readonly settles = 'deferred' as const;
  readonly server = new UptoEvmScheme();
  readonly reasons = { nonceUsed: 'permit2_invalid_nonce', invalidSignature: 'invalid_permit2_signature' };
  /** Built requirements by `<price>:<maxTimeoutSeconds>`. */
  private readonly cache = new LRUCache<string, PaymentRequirements>({ max: REQUIREMENTS_CACHE_MAX });

  constructor(private readonly ctx: SchemeContext) {}

  requirements(price: bigint, o: { maxTimeoutSeconds?: number } = {}): PaymentRequirements | undefined {
    const maxTimeoutSeconds = o.maxTimeoutSeconds ?? this.ctx.terms.maxTimeoutSeconds ?? 300;
    const key = `${price}:${maxTimeoutSeconds}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const facilitator = this.ctx.facilitatorExtra(this.scheme)?.facilitatorAddress;
    if (typeof facilitator !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(facilitator)) return undefined;
    const t = this.ctx.terms;
    const r: PaymentRequirements = {
      scheme: this.scheme,
      network: t.network,
      asset: t.asset,
      amount: price.toString(),
      payTo: t.payTo,
      maxTimeoutSeconds,
      extra: { name: t.assetName, version: t.assetVersion, assetTransferMethod: 'permit2', facilitatorAddress: getAddress(facilitator) },
    };
    this.cache.set(key, r);
    return r;
  }

  /** The Permit2 `deadline` of the payload (unix seconds): after it the authorization can no longer be settled. */
  deadline(payload: PaymentPayload): number | undefined {
    const read = uptoPermit2Authorization(payload);
    return read ? Number(read.authorization.deadline) : undefined;
  }

  /**
   * Payer (`from`), Permit2 nonce and window: a `deadline` further than the matched requirements'
   * `maxTimeoutSeconds` (300, or a job's longer window: `ChallengedResource.deferredMaxTimeoutSeconds`) plus
   * the clock skew from now → `authorization_validity_too_long` (the gateway's cap, as for
   * `exact`); `witness.validAfter` in the future → `permit2_not_yet_valid` (the facilitator's code).
   * The rest (spender, recipient, facilitator, ceiling, token, signature, allowance, balance) is the
   * official facilitator's verify.
   */
  authorize(payload: PaymentPayload, matched: PaymentRequirements): AuthorizeResult {
    const read = uptoPermit2Authorization(payload);
    if (!read) return { ok: false, reason: 'unsupported_transfer_method' };
    const a = read.authorization;
    const now = BigInt(Math.floor(Date.now() / 1000));
    const skew = BigInt(Math.max(0, Math.floor(this.ctx.terms.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS)));
    if (BigInt(a.deadline) > now + BigInt(matched.maxTimeoutSeconds) + skew) return { ok: false, reason: 'authorization_validity_too_long' };
    if (BigInt(a.witness.validAfter) > now) return { ok: false, reason: 'permit2_not_yet_valid' };
    return {
      ok: true,
      auth: { payer: getAddress(a.from), nonce: permit2NonceHex(a.nonce), nonceSpace: PERMIT2_ADDRESS.toLowerCase() as `0x${string}` },
    };
  }

  /** Whether the Permit2 `PermitWitnessTransferFrom` signature recovers to the payer (native recovery; false for a smart wallet or anything malformed). */
  signedByPayer(payload: PaymentPayload, matched: PaymentRequirements, auth: SchemeAuthorization): boolean {
    try {
      const read = uptoPermit2Authorization(payload);
      const chainId = Number(matched.network.split(':')[1]);
      if (!read || !/^0x[0-9a-fA-F]{130}$/.test(read.signature) || !Number.isSafeInteger(chainId)) return false;
      const a = read.authorization;
      const signer = recoverTypedDataSigner(
        {
          domain: { name: 'Permit2', chainId, verifyingContract: PERMIT2_ADDRESS },
          types: uptoPermit2WitnessTypes,
          primaryType: 'PermitWitnessTransferFrom',
          message: {
            permitted: { token: getAddress(a.permitted.token), amount: BigInt(a.permitted.amount) },
            spender: getAddress(a.spender),
            nonce: BigInt(a.nonce),
            deadline: BigInt(a.deadline),
            witness: { to: getAddress(a.witness.to), facilitator: getAddress(a.witness.facilitator), validAfter: BigInt(a.witness.validAfter) },
          },
        },
        read.signature,
      );
      return isAddressEqual(signer, auth.payer) && isAddressEqual(getAddress(a.spender), x402UptoPermit2ProxyAddress);
    } catch {
      return false;
    }
  }

  /** Tracked until final as a Permit2 settlement (`trackSettlement` of `@acg/treasury`, `permit2`: owner, nonce, deadline, amount settled). */
  async track(s: SettledOnChain): Promise<void> {
    const read = uptoPermit2Authorization(s.payload);
    if (!read) return;
    // the facilitator's signed bytes, kept now: only the witness's facilitator may settle, so a reorg before
    // the worker's first finality round would otherwise leave nothing to broadcast again until it is unpaid
    const raw = /^0x[0-9a-fA-F]{64}$/.test(s.txHash) ? await signedTransaction(this.ctx.publicClient, s.txHash as `0x${string}`) : undefined;
    await trackSettlement(this.ctx.redis, this.ctx.keys, {
      operationId: s.operationId,
      txHash: s.txHash,
      authKey: s.ref.authKey,
      asset: s.ref.asset,
      ...(raw ? { raw } : {}),
      permit2: { owner: s.ref.from, nonce: s.ref.nonce, deadline: read.authorization.deadline, amount: s.amount },
    });
  }

  /** Permit2's `nonceBitmap`: the nonce's bit is set once a settlement used it (whatever the amount). */
  nonceUsed(ref: AuthorizationRef): Promise<boolean> {
    return permit2NonceUsed(this.ctx.publicClient, ref.from, ref.nonce);
  }

  /** Permit2 logs no event per nonce: a settlement's transaction is known only from the reservation's stored `tx_hash`. */
  async settlementTx(_ref: AuthorizationRef): Promise<`0x${string}` | undefined> {
    return undefined;
  }

  async trackReconciled(_ref: AuthorizationRef, operationId: string, txHash: `0x${string}`): Promise<void> {
    this.ctx.log.warn({ operationId, tx_hash: txHash }, 'a reconciled upto settlement is not tracked until final');
  }
}

/** The `upto` scheme for `PaywallOptions.schemes`. */
export const uptoScheme = (ctx: SchemeContext): UptoScheme => new UptoScheme(ctx);
