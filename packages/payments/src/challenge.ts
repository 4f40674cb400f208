import type { PaymentChallenge } from '@acg/schemas';
import { encodePaymentRequiredHeader } from './headerCodec.js';
import { LRUCache } from 'lru-cache';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { PAYMENT_IDENTIFIER, PAYMENT_IDENTIFIER_DECLARATION } from './paymentIdentifier.js';
import { describePaymentFailure } from './sanitize.js';

/** Where payments go: docs/spec-notes.md 2.9 `network`, `asset`, `payTo`, plus the asset's EIP-712 domain. */
export interface PaymentTerms {
  /** CAIP-2 network, `eip155:8453` for Base. */
  network: `${string}:${string}`;
  /** USDC contract address on that network. */
  asset: `0x${string}`;
  /** Treasury that receives payments (docs/spec-notes.md 2.9 payTo). */
  payTo: `0x${string}`;
  /** EIP-712 domain name and version of the asset (USDC: "USD Coin", "2"). */
  assetName: string;
  assetVersion: string;
  /** Seconds an authorization may take to settle (PaymentRequirements.maxTimeoutSeconds, default 300). */
  maxTimeoutSeconds?: number;
  /** Clock skew tolerated on validBefore, seconds (default 120, `DEFAULT_CLOCK_SKEW_SECONDS`; validAfter follows the facilitator: none). */
  clockSkewSeconds?: number;
  /**
   * The x402 payment flow offered (`PaymentRequirements.extra.paymentFlow`, @x402/core
   * `PAYMENT_FLOWS`): `authorization` (default, not written on the wire) verifies with the
   * facilitator before the operation runs; `upfront` settles without a separate verify, the
   * facilitator's settle verifying (and simulating) the payment itself. The paywall settles before
   * the operation runs in both; `upfront` needs a facilitator that simulates in settle
   * (`createInProcessFacilitator({ simulateInSettle: true })`). docs/decisions.md "x402 payments".
   */
  paymentFlow?: 'authorization' | 'upfront';
}

/**
 * The 402 body: docs/spec-notes.md 2.9's flat fields (`scheme`, `network`, `payTo`, `maxAmountRequired`,
 * `asset`, `x402Version: 2`) plus the x402 v2 PaymentRequired fields (`error`, `resource`,
 * `accepts`), so a reader of the spec (docs/spec-notes.md) and an official x402 client both work (docs/decisions.md); the wire
 * schema is `PaymentChallenge` of @acg/schemas.
 */
export type PaymentChallengeBody = PaymentChallenge;

/**
 * The HTTP answer to give: a 402 challenge (its `body`, and `paymentRequired`, the x402 v2
 * `PaymentRequired` the `PAYMENT-REQUIRED` header encodes, which MCP puts in `structuredContent`),
 * or the (possibly replayed) operation's response.
 */
export type PaidResponse =
  | { kind: 'payment_required'; status: 402; headers: Record<string, string>; body: PaymentChallengeBody; paymentRequired: PaymentRequired }
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown; replayed: boolean };

/** What a challenge names: the resource, its description, and the price (integer USDC base units). */
export interface ChallengedResource {
  resourceUrl: string;
  description: string;
  price: bigint;
  /**
   * x402 `PaymentRequired.extensions` of this resource, e.g. `{bazaar: ...}` (`@x402/extensions/bazaar`:
   * how to call it, input and output schemas). `payment-identifier` is always added: every paid
   * route honours it.
   */
  extensions?: Record<string, unknown>;
  /** `PaymentRequired.error` of an unpaid call; default: how to retry over HTTP (`PAYMENT-SIGNATURE`). */
  paymentRequiredMessage?: string;
  /**
   * The x402 schemes offered for this resource, in `accepts` order (default `['exact']`; `exact` is
   * always offered and always first). A scheme the paywall has no strategy for, or whose
   * facilitator does not support it, is left out. `upto` fits a resource whose cost is known only
   * afterwards: `price` is then its ceiling (docs/decisions.md "Payment schemes").
   */
  schemes?: readonly string[];
  /**
   * `maxTimeoutSeconds` of this resource's deferred-scheme requirements (`upto`), seconds; default the
   * terms' (300). A resource settled long after it starts (a job, settled when it ends) asks for a
   * longer window: the official upto client signs the Permit2 `deadline` as its now plus this, and
   * the paywall's window check (`authorization_validity_too_long`) reads it from the matched
   * requirements, so the longer window is accepted for this resource only (docs/decisions.md
   * "Payment schemes", jobs).
   */
  deferredMaxTimeoutSeconds?: number;
}

/**
 * Most prices whose PaymentRequirements {@link Challenges} keeps built. Callers choose prices
 * (deposits, job budgets): the cache keeps the most recently used ones (LRU) and never grows past
 * this, whatever the number of distinct prices asked for.
 */
export const REQUIREMENTS_CACHE_MAX = 512;

/**
 * The 402 side of the paywall (x402 v2 `PaymentRequired`, docs/spec-notes.md 2.9): the exact-scheme
 * requirements for a price (built once per price while among the {@link REQUIREMENTS_CACHE_MAX}
 * most recently used), the challenge, and the refusal of a payment with a stable reason and a safe
 * sentence (never facilitator text).
 */
export class Challenges {
  private readonly requirementsCache = new LRUCache<bigint, PaymentRequirements>({ max: REQUIREMENTS_CACHE_MAX });

  constructor(readonly terms: PaymentTerms) {}

  /** How many prices have their requirements cached (at most {@link REQUIREMENTS_CACHE_MAX}). */
  get cachedPrices(): number {
    return this.requirementsCache.size;
  }

  /** The exact-scheme PaymentRequirements for `price` (integer USDC base units); one object per price while it stays cached. */
  requirements(price: bigint): PaymentRequirements {
    let r = this.requirementsCache.get(price);
    if (!r) {
      const t = this.terms;
      r = {
        scheme: 'exact',
        network: t.network,
        asset: t.asset,
        amount: price.toString(),
        payTo: t.payTo,
        maxTimeoutSeconds: t.maxTimeoutSeconds ?? 300,
        extra: { name: t.assetName, version: t.assetVersion, ...(t.paymentFlow === 'upfront' ? { paymentFlow: 'upfront' } : {}) },
      };
      this.requirementsCache.set(price, r);
    }
    return r;
  }

  /**
   * The 402 answer for `req`, with an optional x402 `error` code and its sentence; `accepts`: the
   * requirements of every offered scheme, `exact` first (default: the exact requirements alone).
   */
  challenge(
    req: ChallengedResource,
    error?: { reason: string; message: string },
    accepts: PaymentRequirements[] = [this.requirements(req.price)],
  ): Extract<PaidResponse, { kind: 'payment_required' }> {
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      error: error ? error.message : (req.paymentRequiredMessage ?? 'Payment required: sign an x402 exact payment and retry with PAYMENT-SIGNATURE.'),
      resource: { url: req.resourceUrl, description: req.description, mimeType: 'application/json' },
      accepts,
      extensions: { ...req.extensions, [PAYMENT_IDENTIFIER]: PAYMENT_IDENTIFIER_DECLARATION },
    };
    const a = accepts[0];
    const body: PaymentChallengeBody = {
      ...paymentRequired,
      x402Version: 2,
      scheme: 'exact',
      network: a.network,
      payTo: a.payTo,
      maxAmountRequired: a.amount,
      asset: a.asset,
      // `exact` first (the flat spec fields mirror it), then the other offered schemes
      accepts: accepts.map((r) => ({ ...r, extra: r.extra ?? {} })) as PaymentChallengeBody['accepts'],
      ...(error ? { reason: error.reason } : {}),
    };
    return {
      kind: 'payment_required',
      status: 402,
      headers: { 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired), 'Cache-Control': 'no-store' },
      body,
      paymentRequired,
    };
  }

  /**
   * A 402 refusing a payment: `reason` is an x402 code (default `invalid_payment`), the message is
   * {@link describePaymentFailure}'s. `errorIsCode`: a corrective 402 (its `accepts` carry the scheme's
   * state to resynchronise from, e.g. a batch-settlement channel's): the `PAYMENT-REQUIRED` header's
   * `PaymentRequired.error` is the code itself, as the official x402 server writes it and as the official
   * client (which reads the header) compares it to recover; the body keeps the sentence in `error`, the
   * code in `reason` (docs/decisions.md "batch-settlement").
   */
  refuse(
    req: ChallengedResource,
    reason: string | undefined,
    accepts?: PaymentRequirements[],
    opts: { errorIsCode?: boolean } = {},
  ): Extract<PaidResponse, { kind: 'payment_required' }> {
    const code = reason ?? 'invalid_payment';
    const r = this.challenge(req, { reason: code, message: describePaymentFailure(code) }, accepts);
    if (!opts.errorIsCode) return r;
    const paymentRequired: PaymentRequired = { ...r.paymentRequired, error: code };
    return {
      ...r,
      headers: { ...r.headers, 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired) },
      paymentRequired,
    };
  }
}
