import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { isRedisUnavailable, RedisKeys, retryWhileRedisUnavailable, withScripts, type ScriptedRedis } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import { authorizationWindowProblem } from './authorizationWindow.js';
import { chainFailedDuring, unlessChainLost, type PaymentChainMonitor } from './chainHealth.js';
import { authorizationTx, authorizationUsed } from './eip3009.js';
import { PaymentChainUnavailableError, PaymentConflictError, PaymentError, PaymentInProgressError } from './errors.js';
import { canonicalHash } from './hashing.js';
import { eip3009Authorization, readPaymentPayload } from './paymentHeader.js';
import { withRefundState, type RefundQueue } from './refunds.js';
import { describePaymentFailure } from './sanitize.js';

/** Where payments go: SPEC 2.9 `network`, `asset`, `payTo`, plus the asset's EIP-712 domain. */
export interface PaymentTerms {
  /** CAIP-2 network, `eip155:8453` for Base. */
  network: `${string}:${string}`;
  /** USDC contract address on that network. */
  asset: `0x${string}`;
  /** Treasury that receives payments (SPEC 2.9 payTo). */
  payTo: `0x${string}`;
  /** EIP-712 domain name and version of the asset (USDC: "USD Coin", "2"). */
  assetName: string;
  assetVersion: string;
  /** Seconds an authorization may take to settle (PaymentRequirements.maxTimeoutSeconds, default 300). */
  maxTimeoutSeconds?: number;
  /** Clock skew tolerated on validBefore/validAfter, seconds (default 30; see authorizationWindow.ts). */
  clockSkewSeconds?: number;
}

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
export interface PaidRequest {
  /** Absolute URL of the resource, for PaymentRequired.resource.url. */
  resourceUrl: string;
  /** One sentence shown in the challenge. */
  description: string;
  /** Price, integer USDC base units (6 decimals). */
  price: bigint;
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

/** The settled payment handed to the paid operation. */
export interface SettledPayment {
  /** The operation id reserved with this payment: the request's own, or the first request's when a replay reconciles it. */
  operationId: string;
  payer: `0x${string}`;
  /** integer string, USDC base units */
  amount: string;
  /** settlement transaction hash on the payment chain */
  txHash: `0x${string}`;
  network: string;
}

/** What the paid operation produced; `refund: true` on failure returns the payment. */
export type Outcome =
  | { ok: true; status?: number; body: unknown; headers?: Record<string, string> }
  | { ok: false; status: number; body: Record<string, unknown>; refund: boolean; headers?: Record<string, string> };

/** The HTTP answer to give: a 402 challenge, or the (possibly replayed) operation's response. */
export type PaidResponse =
  | { kind: 'payment_required'; status: 402; headers: Record<string, string>; body: PaymentChallengeBody }
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown; replayed: boolean };

/**
 * The 402 body: SPEC 2.9's flat fields (`scheme`, `network`, `payTo`, `maxAmountRequired`,
 * `asset`, `x402Version: 2`) plus the x402 v2 PaymentRequired fields (`error`, `resource`,
 * `accepts`), so a reader of SPEC.md and an official x402 client both work (DESIGN).
 */
export interface PaymentChallengeBody extends PaymentRequired {
  scheme: string;
  network: string;
  payTo: string;
  maxAmountRequired: string;
  asset: string;
  x402Version: 2;
}

interface AuthorizationRef {
  authKey: string;
  asset: `0x${string}`;
  from: `0x${string}`;
  nonce: `0x${string}`;
}

interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}


/** A reservation older than this with no progress is treated as orphaned by a crashed process. */
const STALE_PENDING_MS = 120_000;

/**
 * The x402 paywall (DESIGN "x402 payments"), shared by every paid route:
 * challenge (402 + `PAYMENT-REQUIRED`) → read `PAYMENT-SIGNATURE` / `X-PAYMENT` (v2, or v1 lifted
 * to v2) → verify with the facilitator → reserve (from, nonce) atomically in Redis → settle
 * on-chain → run the operation once → store its response → answer with `PAYMENT-RESPONSE`.
 *
 * Guarantees: one authorization runs the operation at most once and is charged at most once; a
 * replay (same payment, same request) or a concurrent duplicate gets the stored response; an
 * operation that fails after settlement is refunded by a durable BullMQ job; caller-visible
 * messages never carry raw facilitator or RPC text.
 */
export class Paywall {
  private readonly redis: ScriptedRedis;
  private readonly server: x402ResourceServer;
  private readonly requirementsCache = new Map<bigint, PaymentRequirements>();
  private initialized?: Promise<void>;

  constructor(private readonly opts: PaywallOptions) {
    this.redis = withScripts(opts.redis);
    this.server = new x402ResourceServer(opts.facilitator);
    this.server.register(opts.terms.network, new ExactEvmScheme());
  }

  /** Fetches the facilitator's supported kinds; call once at startup (idempotent). */
  init(): Promise<void> {
    this.initialized ??= this.server.initialize();
    return this.initialized;
  }

  get terms(): PaymentTerms {
    return this.opts.terms;
  }

  /** The exact-scheme PaymentRequirements for `price` (integer USDC base units). */
  requirements(price: bigint): PaymentRequirements {
    let r = this.requirementsCache.get(price);
    if (!r) {
      const t = this.opts.terms;
      r = {
        scheme: 'exact',
        network: t.network,
        asset: t.asset,
        amount: price.toString(),
        payTo: t.payTo,
        maxTimeoutSeconds: t.maxTimeoutSeconds ?? 300,
        extra: { name: t.assetName, version: t.assetVersion },
      };
      this.requirementsCache.set(price, r);
    }
    return r;
  }

  /** Builds the 402 answer for `req`, with an optional x402 `error` code and its sentence. */
  challenge(req: Pick<PaidRequest, 'resourceUrl' | 'description' | 'price'>, error?: { reason: string; message: string }): PaidResponse {
    const accepts = [this.requirements(req.price)];
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      ...(error ? { error: error.message } : { error: 'Payment required: sign an x402 exact payment and retry with PAYMENT-SIGNATURE.' }),
      resource: { url: req.resourceUrl, description: req.description, mimeType: 'application/json' },
      accepts,
    };
    const a = accepts[0];
    const body: PaymentChallengeBody = {
      ...paymentRequired,
      x402Version: 2,
      scheme: a.scheme,
      network: a.network,
      payTo: a.payTo,
      maxAmountRequired: a.amount,
      asset: a.asset,
      ...(error ? { reason: error.reason } : {}),
    };
    return {
      kind: 'payment_required',
      status: 402,
      headers: { 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired), 'Cache-Control': 'no-store' },
      body,
    };
  }

  /**
   * Runs a paid request end to end. `run` is called at most once per payment, only after the
   * payment settled on-chain; it should not throw (a throw is treated as a refunded failure).
   * Throws PaymentConflictError (409) and PaymentInProgressError (409); every payment problem is
   * a 402 answer with a reason, not a throw.
   */
  async handle(req: PaidRequest, run: (payment: SettledPayment) => Promise<Outcome>): Promise<PaidResponse> {
    await this.init();
    const accepts = [this.requirements(req.price)];

    if (req.idempotencyKey) {
      const idem = await this.redis.hmget(this.opts.keys.idempotency(req.route, req.idempotencyKey), 'request_hash', 'authorization_key');
      if (idem[0]) {
        if (idem[0] !== req.requestHash) throw new PaymentConflictError('idempotency');
        const stored = await this.waitForStored(idem[1]!);
        return { kind: 'response', ...stored, replayed: true };
      }
    }

    let payload: PaymentPayload | undefined;
    try {
      payload = readPaymentPayload(req.getHeader, accepts);
    } catch (e) {
      if (e instanceof PaymentError) return this.challenge(req, { reason: e.reason, message: e.message });
      throw e;
    }
    if (!payload) return this.challenge(req);

    const matched = this.server.findMatchingRequirements(accepts, payload);
    if (!matched) return this.refuse(req, 'requirements_mismatch');
    const auth = eip3009Authorization(payload);
    if (!auth) return this.refuse(req, 'unsupported_transfer_method');
    const windowProblem = authorizationWindowProblem(auth, matched.maxTimeoutSeconds, { skewSeconds: this.opts.terms.clockSkewSeconds });
    if (windowProblem) return this.refuse(req, windowProblem);

    const authKey = this.opts.keys.authorization(matched.network, matched.asset, auth.from, auth.nonce);
    const payloadHash = canonicalHash(payload.payload);

    // A payment seen before: replay its stored response (never run or charge twice).
    const ref: AuthorizationRef = { authKey, asset: matched.asset as `0x${string}`, from: auth.from, nonce: auth.nonce };
    const prior = await this.lookup(ref, req, payloadHash, run);
    if (prior) return prior;

    const verified = await this.verify(payload, matched);
    if (!verified.isValid) return this.refuse(req, verified.invalidReason);

    const reserved = (await this.releasingOnRedisFailure(authKey, req.operationId, () => this.redis.reserve_authorization(
      authKey,
      this.opts.keys.authorizationsInFlight(),
      req.requestHash,
      payloadHash,
      req.operationId,
      Date.now(),
      this.retention(),
      matched.asset,
      auth.from,
      auth.nonce,
      matched.amount,
    ))) as string[];
    if (reserved[0] !== 'reserved') {
      const raced = await this.lookup(ref, req, payloadHash, run);
      if (raced) return raced;
      throw new PaymentInProgressError();
    }

    if (req.idempotencyKey) {
      const idemKey = this.opts.keys.idempotency(req.route, req.idempotencyKey);
      const claim = (await this.releasingOnRedisFailure(authKey, req.operationId, () =>
        this.redis.claim_idempotency_key(idemKey, req.requestHash, authKey, this.retention()),
      )) as string[];
      if (claim[0] !== 'claimed') {
        await this.transition(authKey, req.operationId, 'pending', '__delete__');
        throw new PaymentConflictError('idempotency');
      }
    }

    return this.settleAndRun(authKey, req, payload, matched, run);
  }

  private async settleAndRun(
    authKey: string,
    req: PaidRequest,
    payload: PaymentPayload,
    matched: PaymentRequirements,
    run: (payment: SettledPayment) => Promise<Outcome>,
  ): Promise<PaidResponse> {
    let settle: SettleResponse;
    const started = Date.now();
    try {
      // a node that dies mid-settle leaves the facilitator polling for a receipt (60 s and more): stop waiting once it is gone
      const first = await unlessChainLost(this.opts.chain, started, this.server.settlePayment(payload, matched));
      if (!first) return this.settleUnknown(authKey, req.operationId, 'payment chain lost during settlement');
      settle = first;
    } catch (e) {
      const reason = (e as { errorReason?: string }).errorReason;
      if (reason && (await chainFailedDuring(this.opts.chain, started))) return this.settleUnknown(authKey, req.operationId, reason);
      if (reason) {
        await this.transition(authKey, req.operationId, 'pending', '__delete__');
        return this.refuse(req, reason);
      }
      // Unknown outcome (RPC or facilitator unreachable): keep the reservation; a retry reconciles on-chain.
      this.opts.log.error({ err: (e as Error).message?.slice(0, 200), operationId: req.operationId }, 'settlement outcome unknown');
      await this.transition(authKey, req.operationId, 'pending', 'settle_unknown');
      throw new PaymentInProgressError();
    }
    if (!settle.success) {
      // broadcast but unconfirmed, or failed while the node was unreachable: the outcome is unknown, keep the reservation
      if (settle.errorReason === 'settlement_pending' || (await chainFailedDuring(this.opts.chain, started))) {
        return this.settleUnknown(authKey, req.operationId, settle.errorReason);
      }
      await this.transition(authKey, req.operationId, 'pending', '__delete__');
      return this.refuse(req, settle.errorReason);
    }
    const auth = eip3009Authorization(payload)!;
    const payment: SettledPayment = {
      operationId: req.operationId,
      payer: auth.from,
      amount: matched.amount,
      txHash: settle.transaction as `0x${string}`,
      network: matched.network,
    };
    await this.transition(authKey, req.operationId, 'pending,settle_unknown', 'settled', 'tx_hash', payment.txHash, 'payer', payment.payer, 'amount', payment.amount);
    return this.runSettled(authKey, req.operationId, payment, settle, run);
  }

  private async runSettled(
    authKey: string,
    operationId: string,
    payment: SettledPayment,
    settle: SettleResponse,
    run: (payment: SettledPayment) => Promise<Outcome>,
  ): Promise<PaidResponse> {
    let outcome: Outcome;
    try {
      outcome = await run(payment);
    } catch (e) {
      this.opts.log.error({ err: (e as Error).message?.slice(0, 200), operationId }, 'paid operation threw');
      const unavailable = isRedisUnavailable(e);
      outcome = {
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
    const headers: Record<string, string> = { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(settle), 'Cache-Control': 'no-store' };
    let stored: StoredResponse;
    if (outcome.ok) {
      stored = { status: outcome.status ?? 200, body: outcome.body, headers: { ...outcome.headers, ...headers } };
    } else {
      let body = outcome.body;
      if (outcome.refund) {
        await retryWhileRedisUnavailable(() => this.opts.refunds.enqueue({ operationId, payer: payment.payer, amount: payment.amount, paymentTxHash: payment.txHash }));
        body = { ...body, refund: { status: 'pending', amount: payment.amount } };
      }
      stored = { status: outcome.status, body, headers: { ...outcome.headers, ...headers, 'Content-Type': 'application/problem+json' } };
    }
    if (!(await this.transition(authKey, operationId, 'settled', 'completed', 'response', JSON.stringify(stored)))) {
      // the crash-recovery sweep took this payment over (it refunded it): answer what it stored
      return { kind: 'response', ...(await this.waitForStored(authKey)), replayed: true };
    }
    return { kind: 'response', ...stored, replayed: false };
  }

  /**
   * Handles an authorization that already has a reservation. Returns the stored response for a
   * replay, reconciles an orphaned or unknown settlement, or undefined when none exists.
   */
  private async lookup(
    ref: AuthorizationRef,
    req: PaidRequest,
    payloadHash: string,
    run: (payment: SettledPayment) => Promise<Outcome>,
  ): Promise<PaidResponse | undefined> {
    const authKey = ref.authKey;
    const [state, storedRequestHash, storedPayloadHash, operationId, updatedAt] = await this.redis.hmget(
      authKey,
      'state',
      'request_hash',
      'payload_hash',
      'operation_id',
      'updated_at',
    );
    if (!state) return undefined;
    if (storedPayloadHash !== payloadHash) return this.refuse(req, 'invalid_exact_evm_nonce_already_used');
    if (storedRequestHash !== req.requestHash) throw new PaymentConflictError('payment');
    const stale = Date.now() - Number(updatedAt ?? 0) > STALE_PENDING_MS;
    if (state === 'settle_unknown' || ((state === 'pending' || state === 'settled') && stale)) {
      return this.reconcile(ref, operationId!, req, run);
    }
    const stored = await this.waitForStored(authKey);
    return { kind: 'response', ...stored, replayed: true };
  }

  /**
   * A reservation left by a crash or an unseen settlement: read EIP-3009 `authorizationState` on
   * chain. Used → the payment settled: run the operation now (it never ran: the result would be
   * stored). Unused → nothing was charged: release the reservation and let the caller retry.
   */
  private async reconcile(
    ref: AuthorizationRef,
    operationId: string,
    req: PaidRequest,
    run: (payment: SettledPayment) => Promise<Outcome>,
  ): Promise<PaidResponse> {
    const { authKey, asset, from, nonce } = ref;
    const h = await this.redis.hgetall(authKey);
    let used: boolean;
    try {
      used = await authorizationUsed(this.opts.publicClient, asset, from, nonce);
    } catch (e) {
      this.opts.log.warn({ err: (e as Error).message?.slice(0, 200), operationId }, 'cannot reconcile a payment: payment chain unreachable');
      throw new PaymentChainUnavailableError('unknown');
    }
    if (!used) {
      await this.transition(authKey, operationId, 'pending,settle_unknown,settled', '__delete__');
      throw new PaymentInProgressError();
    }
    let txHash = h.tx_hash as `0x${string}` | undefined;
    txHash ??= await authorizationTx(this.opts.publicClient, asset, from, nonce);
    const amount = this.requirements(req.price).amount;
    const payment: SettledPayment = { operationId, payer: from as `0x${string}`, amount, txHash: (txHash ?? '0x') as `0x${string}`, network: this.opts.terms.network };
    const ok = await this.transition(authKey, operationId, 'pending,settle_unknown,settled', 'settled', 'tx_hash', payment.txHash, 'payer', payment.payer, 'amount', amount);
    if (!ok) {
      const stored = await this.waitForStored(authKey);
      return { kind: 'response', ...stored, replayed: true };
    }
    this.opts.log.warn({ operationId }, 'reconciled a settled payment whose operation had not run');
    const settle: SettleResponse = { success: true, transaction: payment.txHash, network: this.opts.terms.network as `${string}:${string}`, payer: payment.payer };
    return this.runSettled(authKey, operationId, payment, settle, run);
  }

  private async waitForStored(authKey: string): Promise<StoredResponse> {
    const deadline = Date.now() + (this.opts.duplicateWaitMs ?? 30_000);
    for (;;) {
      const [state, response, operationId] = await this.redis.hmget(authKey, 'state', 'response', 'operation_id');
      if (state === 'completed' && response) return withRefundState(this.opts.redis, this.opts.keys, operationId, JSON.parse(response) as StoredResponse);
      if (!state) throw new PaymentInProgressError();
      if (Date.now() > deadline) throw new PaymentInProgressError();
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async verify(payload: PaymentPayload, matched: PaymentRequirements) {
    const started = Date.now();
    try {
      const verified = await unlessChainLost(this.opts.chain, started, this.server.verifyPayment(payload, matched));
      if (!verified || (!verified.isValid && (await chainFailedDuring(this.opts.chain, started)))) {
        this.opts.log.warn({ reason: verified?.invalidReason }, 'payment not verifiable: payment chain unreachable');
        throw new PaymentChainUnavailableError('not_charged');
      }
      return verified;
    } catch (e) {
      if (e instanceof PaymentChainUnavailableError) throw e;
      const reason = (e as { invalidReason?: string }).invalidReason;
      if (reason) return { isValid: false, invalidReason: reason };
      this.opts.log.error({ err: (e as Error).message?.slice(0, 200) }, 'payment verification failed to run');
      throw new PaymentVerificationUnavailableError();
    }
  }

  /** Settlement outcome not seen (chain lost, or broadcast but unconfirmed): keep the reservation for reconciliation, answer 503. */
  private async settleUnknown(authKey: string, operationId: string, why: string | undefined): Promise<never> {
    this.opts.log.error({ operationId, reason: why?.slice(0, 100) }, 'settlement outcome unknown: payment chain unreachable');
    await this.transition(authKey, operationId, 'pending', 'settle_unknown');
    throw new PaymentChainUnavailableError('unknown');
  }

  private refuse(req: Pick<PaidRequest, 'resourceUrl' | 'description' | 'price'>, reason: string | undefined): PaidResponse {
    const code = reason ?? 'invalid_payment';
    return this.challenge(req, { reason: code, message: describePaymentFailure(code) });
  }

  /**
   * Compare-and-set of the reservation's state. Retried through a Redis outage up to the outage
   * tolerance (safe: a repeat of an applied transition is a no-op), so a process that settled or
   * ran a paid operation stores its outcome as soon as Redis is back, never leaving the
   * reservation pending until the crash-recovery sweep.
   */
  private async transition(authKey: string, operationId: string, from: string, to: string, ...fields: string[]): Promise<boolean> {
    const r = await retryWhileRedisUnavailable(() =>
      this.redis.transition_authorization(authKey, this.opts.keys.authorizationsInFlight(), operationId, from, to, Date.now(), ...fields),
    );
    return r === 1;
  }

  /**
   * Runs a Redis step taken before settlement. When it fails because Redis is unavailable, the
   * reservation may or may not exist: once Redis is back it is released (compare-and-set on this
   * operation id, in the background), so a retry of the payment is not held up; nothing was
   * charged. The error is rethrown (503).
   */
  private async releasingOnRedisFailure<T>(authKey: string, operationId: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (e) {
      if (isRedisUnavailable(e)) {
        void this.transition(authKey, operationId, 'pending', '__delete__').catch((err) =>
          this.opts.log.error({ err: (err as Error).message?.slice(0, 200), operationId }, 'could not release a reservation after a Redis outage'),
        );
      }
      throw e;
    }
  }

  private retention(): number {
    return this.opts.retentionSeconds ?? 7 * 24 * 3600;
  }
}

/** The facilitator or the chain could not be reached to verify a payment (503). */
export class PaymentVerificationUnavailableError extends Error {
  override name = 'PaymentVerificationUnavailableError';
  constructor() {
    super('Payment verification is temporarily unavailable; retry shortly. Nothing was charged.');
  }
}
