import type { RedisKeys } from '@acg/redis';
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SchemeNetworkServer } from '@x402/core/types';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import type { PaymentTerms } from '../challenge.js';
import type { AuthorizationRef } from '../reservation.js';
import type { Settlement } from '../settle.js';

/**
 * The payer and single-use nonce of a payment, as its scheme reads them from the PaymentPayload
 * (README "Payment schemes"): what the paywall reserves (one reservation per payer and nonce, so
 * a payload never runs twice nor settles twice) and what a replay must prove.
 */
export interface SchemeAuthorization {
  /** The payer's address (EIP-3009 `from`, Permit2 `owner`). */
  payer: `0x${string}`;
  /** The single-use nonce, `0x` + 64 lowercase hex digits (EIP-3009 `nonce`, a Permit2 nonce as a uint256). */
  nonce: `0x${string}`;
  /**
   * The contract whose nonce it is, lowercase (EIP-3009: the asset; Permit2: the Permit2 contract):
   * part of the reservation key, so two schemes' nonces never collide.
   */
  nonceSpace: `0x${string}`;
}

/** What a scheme's {@link PaymentScheme.authorize} read: the authorization, or the x402 reason refusing the payload (402). */
export type AuthorizeResult = { ok: true; auth: SchemeAuthorization } | { ok: false; reason: string };

/**
 * A settlement to watch until final (`trackSettlement` of `@acg/treasury`), as the paywall hands it
 * to the scheme that settled it.
 */
export interface SettledOnChain {
  operationId: string;
  txHash: `0x${string}`;
  /** integer string, USDC base units: the amount settled (for `upto`, the amount used, not the ceiling) */
  amount: string;
  ref: AuthorizationRef;
  payload: PaymentPayload;
}

/** What every scheme gets from the paywall that registers it: the shared facilitator calls, the chain, the store and the terms. */
export interface SchemeContext {
  terms: PaymentTerms;
  /** The x402 resource server the paywall matches payloads with (the scheme's {@link PaymentScheme.server} is registered on it). */
  server: x402ResourceServer;
  /** verify / settle through the facilitator with the chain-unavailable classification (settle.ts). */
  settlement: Settlement;
  redis: Redis;
  keys: RedisKeys;
  publicClient: PublicClient;
  log: Logger;
  /** The facilitator's signing addresses for `scheme` on the terms' network, from its `/supported` kinds (after `init`). */
  facilitatorExtra(scheme: string): Record<string, unknown> | undefined;
}

/**
 * One x402 payment scheme behind the one {@link Paywall} (docs/decisions.md "x402 payments",
 * "Payment schemes"; README "Payment schemes"). The paywall keeps what every scheme shares: the 402
 * (one `accepts` entry per offered scheme), reading the payload, `payment-identifier`,
 * Idempotency-Key, the replay store, the (payer, nonce) reservation, offer receipts, sign-in-with-x
 * and Redis-outage handling; it dispatches a payload by `accepted.scheme` to its strategy, which
 * says how a payment of that scheme is read, checked, settled and reconciled.
 *
 * The order of a decision, for every scheme: {@link requirements} (the 402) → the payload matched
 * to one of them → {@link authorize} (payer, nonce, time window) → verify (facilitator, read-only,
 * beside the replay lookup) → reserve (payer, nonce) → bind the payment identifier and
 * Idempotency-Key → settle: {@link settles} `before_run` settles now (the operation runs only once
 * it settled); `deferred` settles in `Paywall.complete` with the amount the operation used
 * (`Outcome.charge`), 0 settling nothing and releasing the authorization.
 *
 * Stable: a new scheme (e.g. `batch-settlement`) implements this interface and is added to
 * `PaywallOptions.schemes`; nothing in the routes changes. Every method must not throw for a bad
 * payload (answer a reason instead); a store or chain error may throw.
 */
export interface PaymentScheme {
  /** The x402 scheme name on the wire (`PaymentRequirements.scheme`, `PaymentPayload.accepted.scheme`): `exact`, `upto`, ... */
  readonly scheme: string;
  /**
   * When the payment is settled: `before_run` (the operation runs once it settled; a failure is
   * refunded) or `deferred` (verified and reserved before the run, settled by `complete` with
   * the amount used, at most the authorized amount; a failure is simply not settled).
   */
  readonly settles: 'before_run' | 'deferred';
  /**
   * Whether this scheme's verify takes a hold (batch-settlement: the official server scheme marks a
   * pending request on the channel until the charge is committed or cancelled). The paywall then looks
   * the payment up first and never verifies a payment it has seen: a resent copy must not hold the
   * channel that the first request's settlement needs. Default false (verify is read-only, and runs
   * beside the lookup).
   */
  readonly verifyHolds?: boolean;
  /** The official x402 server scheme (`SchemeNetworkServer` of `@x402/evm`), registered on the resource server for the terms' network. */
  readonly server: SchemeNetworkServer;
  /**
   * The PaymentRequirements of this scheme for `price` (integer USDC base units: the exact price,
   * or the ceiling of a deferred scheme). Called once the paywall is initialized; a scheme the
   * facilitator does not support returns undefined (then not offered). `o.maxTimeoutSeconds`: a
   * deferred scheme's window for this resource (`ChallengedResource.deferredMaxTimeoutSeconds`;
   * default the terms'); a scheme settled before the run ignores it.
   */
  requirements(price: bigint, o?: { maxTimeoutSeconds?: number }): PaymentRequirements | undefined;
  /**
   * Optional, deferred schemes: the last moment the payload can be settled, unix seconds (`upto`: the
   * Permit2 `deadline`); undefined when the payload has none. A payment settled when a long
   * operation ends (a job) is held until then, and the operation must end before it.
   */
  deadline?(payload: PaymentPayload): number | undefined;
  /**
   * Reads the payer and nonce of `payload` (already matched to `matched`, one of this scheme's
   * requirements) and checks its validity window locally: never throws; a refusal carries the
   * x402 reason of the 402 (e.g. `unsupported_transfer_method`, `authorization_validity_too_long`).
   */
  authorize(payload: PaymentPayload, matched: PaymentRequirements): AuthorizeResult;
  /**
   * Whether the payload's signature recovers to `auth.payer` (local, no chain call): the proof of
   * being the payer that an Idempotency-Key replay needs, and the gate of an early start in the
   * `upfront` flow. false for anything it cannot check; never throws.
   */
  signedByPayer(payload: PaymentPayload, matched: PaymentRequirements, auth: SchemeAuthorization): boolean;
  /**
   * The x402 reasons this scheme answers with: another payload with a reserved nonce, and a signature
   * that is not the payer's; `reused`, when set: the same payload sent for another request is refused
   * (402) with it instead of 409 `payment_conflict` (a `batch-settlement` voucher: the official scheme's
   * cumulative mismatch, whose corrective 402 lets the client resync).
   */
  readonly reasons: { nonceUsed: string; invalidSignature: string; reused?: string; busy?: string };
  /**
   * Optional, with {@link verifyHolds}: whether the hold that made verify refuse `payload` with
   * `reasons.busy` is this very payment's (a copy sent at the same instant, whose first copy is being
   * verified and reserved). The paywall then waits for the first copy's reservation and answers as
   * for a resend, instead of refusing.
   */
  heldByCopy?(payload: PaymentPayload): Promise<boolean>;
  /**
   * Optional, deferred schemes: a payment that settles nothing (a failed run) is handed back here
   * (e.g. `batch-settlement` cancels its channel reservation), and the paywall then releases its
   * reservation instead of storing the answer, so the same payload may be sent again.
   */
  unsettled?(payload: PaymentPayload, matched: PaymentRequirements): Promise<void>;
  /** Optional: the channel and cumulative amount of a `batch-settlement` payload (`SettledPayment.voucher`). */
  voucherOf?(payload: PaymentPayload): { channelId: `0x${string}`; cumulative: string } | undefined;
  /**
   * Optional: adds the scheme's corrective fields to the `accepts` of a 402 refusing `payload` with
   * `reason` (in place; e.g. `batch-settlement`'s channel state on a cumulative mismatch). Resolves
   * `true` when it did: that 402 is corrective, and its `PaymentRequired.error` is then the x402 code
   * itself, which an x402 client compares to recover (x402 batch-settlement EVM "corrective 402").
   */
  enrichRefusal?(reason: string, payload: PaymentPayload, accepts: PaymentRequirements[]): Promise<boolean>;
  /** Starts watching a settlement until final (`trackSettlement` of `@acg/treasury`, finality.ts); durable before it resolves. */
  track(settled: SettledOnChain): Promise<void>;
  /**
   * Reads the chain for a reservation whose settlement outcome was not seen (reconcile.ts, and the
   * recovery sweep): whether its nonce was used, and by which transaction (undefined: not found).
   * Throws when the chain cannot be read.
   */
  nonceUsed(ref: AuthorizationRef): Promise<boolean>;
  settlementTx(ref: AuthorizationRef): Promise<`0x${string}` | undefined>;
  /** Tracks a settlement found on chain by reconciliation until final, when it can (logged and left untracked otherwise). */
  trackReconciled(ref: AuthorizationRef, operationId: string, txHash: `0x${string}`): Promise<void>;
}

/** Builds a {@link PaymentScheme} for one paywall (`PaywallOptions.schemes`). */
export type PaymentSchemeFactory = (ctx: SchemeContext) => PaymentScheme;
