import { encodePaymentResponseHeader } from '@x402/core/http';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { isRedisUnavailable, retryWhileRedisUnavailable, type AuthorizationRecord, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import { authorizationWindowProblem } from './authorizationWindow.js';
import type { PaymentChainMonitor } from './chainHealth.js';
import { Challenges, type ChallengedResource, type PaidResponse, type PaymentTerms } from './challenge.js';
import { PaymentConflictError, PaymentError } from './errors.js';
import { canonicalHash } from './hashing.js';
import { eip3009Authorization, readPaymentPayload } from './paymentHeader.js';
import { reconcile } from './reconcile.js';
import type { RefundQueue } from './refunds.js';
import { Replays, type StoredResponse } from './replay.js';
import { Reservations, type AuthorizationRef } from './reservation.js';
import { Settlement, type SettledPayment } from './settle.js';

export type { PaidResponse, PaymentChallengeBody, PaymentTerms } from './challenge.js';
export { PaymentVerificationUnavailableError, type SettledPayment } from './settle.js';

export interface PaywallOptions {
  redis: Redis;
  keys: RedisKeys;
  facilitator: FacilitatorClient;
  terms: PaymentTerms;
  /** Reads the payment chain, to reconcile a settlement whose outcome was not seen. */
  publicClient: PublicClient;
  refunds: RefundQueue;
  log: Logger;
  /** How long a duplicate request waits for the first one's result, ms (default 30 000). */
  duplicateWaitMs?: number;
  /** How long reservations and stored results are kept, seconds (default 7 days). */
  retentionSeconds?: number;
  /**
   * Watches the payment chain's RPC transport: a verify or settle failure while the node is
   * unreachable becomes a 503 (PaymentChainUnavailableError), never a 402 blaming the payment.
   */
  chain?: PaymentChainMonitor;
}

/** A paid request as the paywall sees it. */
export interface PaidRequest extends ChallengedResource {
  /** Route name, scoping Idempotency-Key. */
  route: string;
  /** {@link requestHash} of method, path and body. */
  requestHash: string;
  /** Client's `Idempotency-Key` header, if any. */
  idempotencyKey?: string;
  /** Operation id created for this request (e.g. `exe_...`); a replay returns the stored one. */
  operationId: string;
  /** Request header reader (case-insensitive names). */
  getHeader: (name: string) => string | undefined;
}

/** What the paid operation produced; `refund: true` on failure returns the payment. */
export type Outcome =
  | { ok: true; status?: number; body: unknown; headers?: Record<string, string> }
  | { ok: false; status: number; body: Record<string, unknown>; refund: boolean; headers?: Record<string, string> };

/** A payment settled and reserved for one run of the operation: hand it to {@link Paywall.complete}. */
export interface Settled {
  kind: 'settled';
  payment: SettledPayment;
  /** @internal the reservation, the facilitator's answer, and the `settled` mark being written */
  readonly authKey: string;
  readonly settle: SettleResponse;
  readonly marked: Promise<unknown>;
}

/**
 * What {@link Paywall.begin} decided (x402's `processHTTPRequest` shape):
 * - `challenge`: no payment: answer the 402;
 * - `refused`: a payment that cannot be accepted: answer the 402 (with `reason`);
 * - `replay`: this payment or Idempotency-Key ran before: answer its stored response;
 * - `settled`: run the operation once with `payment`, then {@link Paywall.complete}.
 */
export type PaywallStep =
  | { kind: 'challenge'; response: Extract<PaidResponse, { kind: 'payment_required' }> }
  | { kind: 'refused'; response: Extract<PaidResponse, { kind: 'payment_required' }> }
  | { kind: 'replay'; response: Extract<PaidResponse, { kind: 'response' }> }
  | Settled;

/** A reservation older than this with no progress is treated as orphaned by a crashed process. */
const STALE_PENDING_MS = 120_000;

/**
 * The x402 paywall (DESIGN "x402 payments"), shared by every paid route, in two calls so data flows
 * one way (request → pay → execute → record → respond):
 * 1. {@link begin}: challenge (402 + `PAYMENT-REQUIRED`, challenge.ts) → read `PAYMENT-SIGNATURE`
 *    / `X-PAYMENT` → stored answer of a replay (replay.ts) → verify → reserve (from, nonce)
 *    atomically in Redis → settle on-chain (settle.ts); orphaned or unknown reservations are
 *    reconciled on chain (reconcile.ts);
 * 2. the caller runs the operation once with the settled payment;
 * 3. {@link complete}: refund a failure (durable BullMQ job), store the response, answer with
 *    `PAYMENT-RESPONSE`.
 *
 * Guarantees: one authorization runs the operation at most once and is charged at most once; a
 * replay (same payment, same request) or a concurrent duplicate gets the stored response; an
 * operation that fails after settlement is refunded; caller-visible messages never carry raw
 * facilitator or RPC text. Throws PaymentConflictError (409), PaymentInProgressError (409),
 * PaymentChainUnavailableError and PaymentVerificationUnavailableError (503) and Redis errors (503).
 */
export class Paywall {
  private readonly server: x402ResourceServer;
  private readonly challenges: Challenges;
  private readonly replays: Replays;
  private readonly reservations: Reservations;
  private readonly settlement: Settlement;
  private initialized?: Promise<void>;
  private ready = false;

  constructor(private readonly opts: PaywallOptions) {
    this.server = new x402ResourceServer(opts.facilitator);
    this.server.register(opts.terms.network, new ExactEvmScheme());
    this.challenges = new Challenges(opts.terms);
    this.replays = new Replays(opts.redis, opts.keys, opts.duplicateWaitMs);
    this.reservations = new Reservations(opts.redis, opts.keys, opts.log, opts.retentionSeconds ?? 7 * 24 * 3600);
    this.settlement = new Settlement(this.server, this.reservations, opts.log, opts.chain);
  }

  /** Fetches the facilitator's supported kinds; call once at startup (idempotent). */
  init(): Promise<void> {
    this.initialized ??= this.server.initialize().then(() => {
      this.ready = true;
    });
    return this.initialized;
  }

  get terms(): PaymentTerms {
    return this.opts.terms;
  }

  /** The exact-scheme PaymentRequirements for `price` (integer USDC base units). */
  requirements(price: bigint): PaymentRequirements {
    return this.challenges.requirements(price);
  }

  /** Builds the 402 answer for `req`, with an optional x402 `error` code and its sentence. */
  challenge(req: ChallengedResource, error?: { reason: string; message: string }): PaidResponse {
    return this.challenges.challenge(req, error);
  }

  /** Step 1: decides what to do with a paid request (see {@link PaywallStep}). */
  async begin(req: PaidRequest): Promise<PaywallStep> {
    if (!this.ready) await this.init();
    const requirements = this.challenges.requirements(req.price);

    if (req.idempotencyKey) {
      const stored = await this.replays.byIdempotencyKey(req.route, req.idempotencyKey, req.requestHash);
      if (stored) return replay(stored);
    }

    let payload: PaymentPayload | undefined;
    try {
      payload = readPaymentPayload(req.getHeader, [requirements]);
    } catch (e) {
      if (e instanceof PaymentError) return { kind: 'refused', response: this.challenges.challenge(req, { reason: e.reason, message: e.message }) };
      throw e;
    }
    if (!payload) return { kind: 'challenge', response: this.challenges.challenge(req) };

    const matched = this.server.findMatchingRequirements([requirements], payload);
    if (!matched) return this.refuse(req, 'requirements_mismatch');
    const auth = eip3009Authorization(payload);
    if (!auth) return this.refuse(req, 'unsupported_transfer_method');
    const windowProblem = authorizationWindowProblem(auth, matched.maxTimeoutSeconds, { skewSeconds: this.opts.terms.clockSkewSeconds });
    if (windowProblem) return this.refuse(req, windowProblem);

    const ref: AuthorizationRef = {
      authKey: this.opts.keys.authorization(matched.network, matched.asset, auth.from, auth.nonce),
      asset: matched.asset as `0x${string}`,
      from: auth.from,
      nonce: auth.nonce,
    };
    const payloadHash = canonicalHash(payload.payload);

    // The replay lookup and the facilitator's verify are both read-only: run them side by side.
    // A payment seen before is answered from its reservation (never run or charged twice), and
    // the verdict of its verify is ignored.
    const verifying = this.settlement.verify(payload, matched).then(
      (v) => ({ v }),
      (e: unknown) => ({ e }),
    );
    const prior = await this.reservations.read(ref.authKey);
    if (prior) return this.resume(ref, prior, req, payloadHash, matched.amount);
    const verified = await verifying;
    if ('e' in verified) throw verified.e;
    if (!verified.v.isValid) return this.refuse(req, verified.v.invalidReason);

    const reserved = await this.reservations.reserve(ref, { requestHash: req.requestHash, payloadHash, operationId: req.operationId, amount: matched.amount });
    if (!reserved.reserved) return this.resume(ref, reserved.existing, req, payloadHash, matched.amount);

    if (req.idempotencyKey && !(await this.reservations.claimIdempotencyKey(req.route, req.idempotencyKey, req.requestHash, ref.authKey, req.operationId))) {
      await this.reservations.release(ref.authKey, req.operationId, ['pending']);
      throw new PaymentConflictError('idempotency');
    }

    const settled = await this.settlement.settle(ref, req.operationId, payload, matched);
    if (settled.kind === 'refused') return this.refuse(req, settled.reason);
    const payment: SettledPayment = {
      operationId: req.operationId,
      payer: auth.from,
      amount: matched.amount,
      txHash: settled.settle.transaction as `0x${string}`,
      network: matched.network,
    };
    // The `settled` mark is written while the operation runs; complete() waits for it.
    const marked = this.reservations.transition(ref.authKey, req.operationId, ['pending'], 'settled', {
      tx_hash: payment.txHash,
      payer: payment.payer,
      amount: payment.amount,
    });
    marked.catch(() => undefined);
    return { kind: 'settled', payment, authKey: ref.authKey, settle: settled.settle, marked };
  }

  /**
   * Step 3: records what the operation produced and gives the answer: a failure with `refund`
   * enqueues the durable refund first; the response is stored with the reservation (`completed`)
   * before it is returned, retried through a Redis outage. When the crash-recovery sweep took the
   * payment over meanwhile, its stored answer is returned (`replayed: true`).
   */
  async complete(settled: Settled, outcome: Outcome): Promise<Extract<PaidResponse, { kind: 'response' }>> {
    const { payment, authKey } = settled;
    const headers: Record<string, string> = { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(settled.settle), 'Cache-Control': 'no-store' };
    let stored: StoredResponse;
    if (outcome.ok) {
      stored = { status: outcome.status ?? 200, body: outcome.body, headers: { ...outcome.headers, ...headers } };
    } else {
      let body = outcome.body;
      if (outcome.refund) {
        await retryWhileRedisUnavailable(() =>
          this.opts.refunds.enqueue({ operationId: payment.operationId, payer: payment.payer, amount: payment.amount, paymentTxHash: payment.txHash }),
        );
        body = { ...body, refund: { status: 'pending', amount: payment.amount } };
      }
      stored = { status: outcome.status, body, headers: { ...outcome.headers, ...headers, 'Content-Type': 'application/problem+json' } };
    }
    await settled.marked.catch(() => undefined);
    // from `pending` too: the settlement fields go with the answer if the mark could not be written
    const done = await this.reservations.transition(authKey, payment.operationId, ['pending', 'settled'], 'completed', {
      response: JSON.stringify(stored),
      tx_hash: payment.txHash,
      payer: payment.payer,
      amount: payment.amount,
    });
    if (!done) {
      // the crash-recovery sweep took this payment over (it refunded it): answer what it stored
      return replay(await this.replays.waitForStored(authKey)).response;
    }
    return { kind: 'response', ...stored, replayed: false };
  }

  /**
   * begin → `run` → complete in one call, for callers without a pipeline of their own (tests,
   * scripts). `run` is called at most once per payment, only after the payment settled; a throw
   * is a refunded failure ({@link failedOutcome}).
   */
  async handle(req: PaidRequest, run: (payment: SettledPayment) => Promise<Outcome>): Promise<PaidResponse> {
    const step = await this.begin(req);
    if (step.kind !== 'settled') return step.response;
    let outcome: Outcome;
    try {
      outcome = await run(step.payment);
    } catch (e) {
      outcome = this.failedOutcome(e, step.payment.operationId);
    }
    return this.complete(step, outcome);
  }

  /** The refunded failure of an operation that threw after payment: 503 (Retry-After) when Redis was unavailable, else 500. */
  failedOutcome(e: unknown, operationId: string): Outcome {
    this.opts.log.error({ err: (e as Error)?.message?.slice(0, 200), operationId }, 'paid operation threw');
    const unavailable = isRedisUnavailable(e);
    return {
      ok: false,
      status: unavailable ? 503 : 500,
      refund: true,
      headers: unavailable ? { 'Retry-After': '5' } : {},
      body: {
        type: 'about:blank',
        title: unavailable ? 'Service Unavailable' : 'Internal Server Error',
        status: unavailable ? 503 : 500,
        detail: 'The operation failed after payment; the payment is being refunded.',
      },
    };
  }

  /**
   * An authorization that already has a reservation: another payload with its nonce → 402
   * `invalid_exact_evm_nonce_already_used`; another request → PaymentConflictError; unknown
   * settlement or no progress for 2 minutes → reconciled on chain; otherwise its stored answer
   * (waiting while the first request runs).
   */
  private async resume(ref: AuthorizationRef, prior: AuthorizationRecord, req: PaidRequest, payloadHash: string, amount: string): Promise<PaywallStep> {
    if (prior.payloadHash !== payloadHash) return this.refuse(req, 'invalid_exact_evm_nonce_already_used');
    if (prior.requestHash !== req.requestHash) throw new PaymentConflictError('payment');
    const stale = Date.now() - prior.updatedAtMs > STALE_PENDING_MS;
    if (prior.state === 'settle_unknown' || ((prior.state === 'pending' || prior.state === 'settled') && stale)) {
      const r = await reconcile(
        { redis: this.opts.redis, publicClient: this.opts.publicClient, reservations: this.reservations, log: this.opts.log, network: this.opts.terms.network },
        ref,
        prior.operationId,
        amount,
      );
      if (r.kind === 'settled') return { kind: 'settled', payment: r.payment, authKey: ref.authKey, settle: r.settle, marked: Promise.resolve(true) };
    }
    return replay(await this.replays.waitForStored(ref.authKey));
  }

  private refuse(req: ChallengedResource, reason: string | undefined): PaywallStep {
    return { kind: 'refused', response: this.challenges.refuse(req, reason) };
  }
}

function replay(stored: StoredResponse): { kind: 'replay'; response: Extract<PaidResponse, { kind: 'response' }> } {
  return { kind: 'replay', response: { kind: 'response', ...stored, replayed: true } };
}
