import { decodePaymentResponseHeader, encodePaymentResponseHeader } from './headerCodec.js';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import type { OfferReceipts } from './offerReceipt.js';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import type { SignInWithXChallenges } from '@acg/identity';
import { type PaymentRequiredResponse, withPaymentRequiredExtension } from './paymentRequiredExtension.js';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { isRedisUnavailable, retryWhileRedisUnavailable, type RedisKeys, type ReplicaAcks } from '@acg/redis';
import type { AuthorizationRecord } from './commands/index.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import { authorizationWindowProblem } from './authorizationWindow.js';
import type { PaymentChainMonitor } from './chainHealth.js';
import { Challenges, type ChallengedResource, type PaidResponse, type PaymentTerms } from './challenge.js';
import { PaymentChainUnavailableError, PaymentConflictError, PaymentError } from './errors.js';
import { ProblemError } from '@acg/schemas';
import type { PaymentObserver } from './observer.js';
import { signedByPayer } from './eip3009.js';
import { canonicalHash } from './hashing.js';
import { type CreditReversal, type RefundQueue, trackSettlement } from '@acg/treasury';
import { eip3009Authorization, parsePaymentPayload, PAYMENT_HEADERS, readPaymentPayload, type Eip3009Authorization } from './paymentHeader.js';
import { PaymentIdentifiers, readPaymentIdentifier } from './paymentIdentifier.js';
import { reconcile } from './reconcile.js';
import { Replays, type StoredResponse } from './replay.js';
import { Reservations, type AuthorizationRef } from './reservation.js';
import { Settlement, type SettledPayment } from './settle.js';
import { inSpan } from '@acg/tracing';
import { answerWithinStoreOutage } from './storeOutage.js';
import { paymentKeys } from './commands/keys.js';

export type { ChallengedResource, PaidResponse, PaymentChallengeBody, PaymentTerms } from './challenge.js';
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
  /** Told of each settlement and refusal (metrics). */
  observer?: PaymentObserver;
  /** Signs x402 offers into every 402 and a receipt into every successful PAYMENT-RESPONSE (offer-receipt extension); see {@link Paywall.useOfferReceipts}. */
  offerReceipts?: OfferReceipts;
  /** Reverses what a paid operation credited (a provider's share, a deposit) in the same step that decides its refund. */
  reversals?: CreditReversal;
  /** Adds a fresh x402 `sign-in-with-x` challenge to every 402 (never reused between 402s: its nonce is single use). */
  signInWithX?: SignInWithXChallenges;
  /**
   * On a replicated store (REDIS_WAIT_REPLICAS): a paid call's answer waits until its money records
   * (reservation, execution record, credit, refund intent) reached that many replicas (`WAIT`),
   * docs/durability.md "Replicas". Unset: no WAIT (`appendfsync always` makes each write durable).
   */
  replicaAcks?: ReplicaAcks;
}

/** A paid request as the paywall sees it (built by the edge: apps/gateway/src/paidRoute/paidCall.ts `paidRequest`). */
export interface PaidRequest extends ChallengedResource {
  /** Route name, scoping Idempotency-Key. */
  route: string;
  /** {@link requestHash} of method, path and body. */
  requestHash: string;
  /** Client's `Idempotency-Key` header, if any. */
  idempotencyKey?: string;
  /** Operation id created for this request (e.g. `exe_...`); a replay returns the stored one. */
  operationId: string;
  /** The request's payment headers by lower-case name (`payment-signature`, `x-payment`), read when no {@link paymentPayload} is given. */
  paymentHeaders?: Partial<Record<(typeof PAYMENT_HEADERS)[number], string>>;
  /**
   * The payment as an object from a transport that carries it decoded, e.g. MCP's
   * `_meta["x402/payment"]` (x402 transports-v2/mcp.md); when present (not undefined) the headers
   * are not read. null means "no payment" (answered with the challenge).
   */
  paymentPayload?: unknown;
  /**
   * The wallet the request's credentials prove (its bearer token, Sign-In with Ethereum, or its
   * `SIGN-IN-WITH-X` proof), resolved by the edge; undefined without valid ones. A proof of being
   * the payer when a settled payment is sent again (README "x402 payments": replays).
   */
  caller?: string;
}

/** What the paid operation produced; `refund: true` on failure returns the payment. */
export type Outcome =
  | { ok: true; status?: number; body: unknown; headers?: Record<string, string> }
  | { ok: false; status: number; body: Record<string, unknown>; refund: boolean; headers?: Record<string, string> };

/** A paid call's answer (fresh or `replayed`), with the settlement its `PAYMENT-RESPONSE` header encodes, when it has one. */
export type PaidAnswer = Extract<PaidResponse, { kind: 'response' }> & { settlement?: SettleResponse };

/** The payment settled for one run of the operation: run it once with `payment`, then {@link Paywall.complete}. */
export interface Settled {
  kind: 'settled';
  payment: SettledPayment;
}

/** A payment refused: the 402 to answer (`response`, with the x402 reason), or a problem (409 conflict or in progress, 503 chain or facilitator unavailable). Nothing was charged, unless the problem says so (`payment.status`). */
export type Refused = { kind: 'refused'; response: PaymentRequiredResponse } | { kind: 'refused'; problem: ProblemError };

/**
 * The settlement plan of a payment the paywall lets through ({@link Decision} `proceed`): the
 * reserved authorization's payer and price, the operation id reserved with it, whether a
 * read-only operation may start now, and the settlement in flight.
 */
export interface SettlementPlan {
  /** The operation id reserved with the payment: the request's own, or the first request's when a replay reconciles a stale payment. */
  readonly operationId: string;
  /** The payer (the EIP-3009 authorization's `from`). */
  readonly payer: `0x${string}`;
  /** The price charged, integer string in USDC base units. */
  readonly amount: string;
  /**
   * Whether a read-only operation may start now and overlap the on-chain settlement: the payment
   * is reserved for this request (identifiers bound) and verified by the facilitator
   * (`authorization` flow) or signed by the payer (`upfront` flow). Its result is used only once
   * {@link settlement} is `settled` (dropped otherwise: nothing was charged).
   */
  readonly earlyStart: boolean;
  /** The settlement: `settled` (run once, then {@link Paywall.complete}) or `refused` (answer it). Rejects only for a store error. */
  readonly settlement: Promise<Settled | Refused>;
}

/**
 * What {@link Paywall.decide} decided (x402's `processHTTPRequest` shape):
 * - `challenge`: no payment: answer the 402;
 * - `refused`: a payment that cannot be accepted: the 402 with its reason, or a problem (409, 503);
 * - `replay`: this payment or Idempotency-Key ran before: answer its stored response;
 * - `proceed`: the payment is reserved for this request: act on the {@link SettlementPlan}.
 */
export type Decision =
  | { kind: 'challenge'; response: PaymentRequiredResponse }
  | Refused
  | { kind: 'replay'; response: PaidAnswer }
  | { kind: 'proceed'; plan: SettlementPlan };

/** What {@link Paywall.complete} needs of a settled payment besides the plan: the reservation, the facilitator's answer, the `settled` mark being written, the paid resource. */
interface SettledRecord {
  payment: SettledPayment;
  authKey: string;
  settle: SettleResponse;
  marked: Promise<unknown>;
  resourceUrl?: string;
}

/** How long the 402 of an unpaid request is reused, ms (see {@link Paywall.plainChallenge}). */
const CHALLENGE_CACHE_MS = 30_000;

/** A reservation older than this with no progress is treated as orphaned by a crashed process. */
const STALE_PENDING_MS = 120_000;

/**
 * The x402 paywall (docs/decisions.md "x402 payments"), shared by every paid route, in two calls so data flows
 * one way (request → pay → execute → record → respond):
 * 1. {@link begin}: challenge (402 + `PAYMENT-REQUIRED`, challenge.ts; every challenge carries the
 *    resource's `extensions` and the `payment-identifier` declaration) → read `PAYMENT-SIGNATURE`
 *    / `X-PAYMENT` (or the decoded `paymentPayload` of MCP's `_meta["x402/payment"]`) → payment
 *    identifier bound to another payload → 409 (paymentIdentifier.ts) → stored answer of a replay
 *    (replay.ts) → verify (x402 `authorization` flow only; in the `upfront` flow settle verifies) → reserve (from, nonce) atomically in Redis → bind the payment
 *    identifier and Idempotency-Key → settle on-chain (settle.ts; refused → unbound again);
 *    orphaned or unknown reservations are reconciled on chain (reconcile.ts);
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
  private readonly identifiers: PaymentIdentifiers;
  private initialized?: Promise<void>;
  private ready = false;
  private readonly challengeCache = new Map<string, { response: Promise<PaymentRequiredResponse>; expiresAt: number }>();
  /** What {@link complete} needs of each settled payment handed out (released with it). */
  private readonly settledRecords = new WeakMap<SettledPayment, SettledRecord>();

  constructor(private readonly opts: PaywallOptions) {
    this.server = new x402ResourceServer(opts.facilitator);
    this.server.register(opts.terms.network, new ExactEvmScheme());
    this.challenges = new Challenges(opts.terms);
    this.replays = new Replays(opts.redis, opts.keys, opts.duplicateWaitMs);
    this.reservations = new Reservations(opts.redis, opts.keys, opts.log, opts.retentionSeconds ?? 7 * 24 * 3600);
    this.identifiers = new PaymentIdentifiers(opts.redis, opts.keys, this.reservations.retentionSeconds);
    this.settlement = new Settlement(this.server, this.reservations, opts.log, opts.chain, opts.terms.paymentFlow === 'upfront');
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

  /** Builds the 402 answer for `req`, with an optional x402 `error` code and its sentence, and signed offers when configured. */
  challenge(req: ChallengedResource, error?: { reason: string; message: string }): Promise<PaidResponse> {
    return this.signInOffered(error ? this.offered(this.challenges.challenge(req, error)) : this.plainChallenge(req));
  }

  /** `response` with a fresh sign-in-with-x challenge when configured (after the challenge cache: a nonce is for one 402). */
  private async signInOffered(response: Promise<PaymentRequiredResponse>): Promise<PaymentRequiredResponse> {
    const s = this.opts.signInWithX;
    const offer =
      s &&
      (async (r: PaymentRequiredResponse) => {
        const challenge = await s.challengeFor(r.paymentRequired);
        return challenge ? withPaymentRequiredExtension(r, SIGN_IN_WITH_X, challenge) : r;
      });
    return this.extended(await response, offer, 'sign-in-with-x challenge failed; 402 sent without it');
  }

  /**
   * The 402 of an unpaid request, reused for {@link CHALLENGE_CACHE_MS} per resource, price,
   * texts and extensions: building it encodes the `PAYMENT-REQUIRED` header twice (with and without
   * the signed offers), the largest part of an unpaid request's work. Signed offers stay valid
   * (5 min) well beyond the reuse (their own cache refreshes them after 150 s).
   */
  private plainChallenge(req: ChallengedResource): Promise<PaymentRequiredResponse> {
    const key = `${req.resourceUrl}\n${req.price}\n${req.description}\n${req.paymentRequiredMessage ?? ''}\n${JSON.stringify(req.extensions ?? {})}`;
    const now = Date.now();
    const hit = this.challengeCache.get(key);
    if (hit && hit.expiresAt > now) return hit.response;
    const response = this.offered(this.challenges.challenge(req));
    if (this.challengeCache.size >= 1_000) this.challengeCache.clear();
    this.challengeCache.set(key, { response, expiresAt: now + CHALLENGE_CACHE_MS });
    // a 402 whose offers could not be signed is not reused: the next request tries again
    response.then(
      (r) => this.opts.offerReceipts && !(OFFER_RECEIPT in (r.paymentRequired.extensions ?? {})) && this.challengeCache.delete(key),
      () => this.challengeCache.delete(key),
    );
    return response;
  }

  /** From now on, 402s carry signed offers and successful settlements a signed receipt (x402 offer-receipt). */
  useOfferReceipts(offerReceipts: OfferReceipts): void {
    this.opts.offerReceipts = offerReceipts;
    this.challengeCache.clear();
  }

  /** `response` with signed offers, when configured; unchanged if signing fails (a 402 must still be answered). */
  private offered(response: PaymentRequiredResponse): Promise<PaymentRequiredResponse> {
    const o = this.opts.offerReceipts;
    return this.extended(response, o && ((r) => o.withOffers(r)), 'offer signing failed; 402 sent without offers');
  }

  /**
   * `response` as `extend` returns it (an x402 extension added: signed offers, a sign-in challenge);
   * `response` itself without `extend`, or when it throws (logged as `failed`: a 402 must still be answered).
   */
  private async extended(
    response: PaymentRequiredResponse,
    extend: ((r: PaymentRequiredResponse) => Promise<PaymentRequiredResponse>) | undefined,
    failed: string,
  ): Promise<PaymentRequiredResponse> {
    if (!extend) return response;
    try {
      return await extend(response);
    } catch (e) {
      this.opts.log.warn({ err: String((e as Error).message).slice(0, 200) }, failed);
      return response;
    }
  }

  /**
   * Step 1: decides what to do with a paid request (see {@link Decision}). The paywall's typed
   * errors (ProblemError: 409 conflict or in progress, 503 chain or facilitator unavailable) come
   * back as `refused` with their problem; a store error is thrown.
   */
  async decide(req: PaidRequest): Promise<Decision> {
    try {
      return await this.decision(req);
    } catch (e) {
      if (e instanceof ProblemError) return { kind: 'refused', problem: e };
      throw e;
    }
  }

  private async decision(req: PaidRequest): Promise<Decision> {
    if (!this.ready) await this.init();
    const requirements = this.challenges.requirements(req.price);

    let payload: PaymentPayload | undefined;
    let paymentId: string | undefined;
    try {
      payload =
        req.paymentPayload === undefined
          ? readPaymentPayload((name) => req.paymentHeaders?.[name as (typeof PAYMENT_HEADERS)[number]], [requirements])
          : req.paymentPayload === null
            ? undefined
            : parsePaymentPayload(req.paymentPayload, [requirements]);
      if (payload) paymentId = readPaymentIdentifier(payload);
    } catch (e) {
      if (e instanceof PaymentError) {
        this.opts.observer?.refused?.({ reason: e.reason });
        return { kind: 'refused', response: await this.signInOffered(this.offered(this.challenges.challenge(req, { reason: e.reason, message: e.message }))) };
      }
      throw e;
    }
    if (!payload) return { kind: 'challenge', response: await this.signInOffered(this.plainChallenge(req)) };
    // x402 payment-identifier: an id bound to another payload is a conflict (409) before anything
    // is verified; the same payload goes on and finds its reservation (the stored response).
    const identifierHash = paymentId ? canonicalHash(payload) : undefined;
    if (paymentId) await this.identifiers.check(paymentId, identifierHash!);

    const matched = this.server.findMatchingRequirements([requirements], payload);
    if (!matched) return this.refuse(req, 'requirements_mismatch');
    const auth = eip3009Authorization(payload);
    if (!auth) return this.refuse(req, 'unsupported_transfer_method');
    const windowProblem = authorizationWindowProblem(auth, matched.maxTimeoutSeconds, { skewSeconds: this.opts.terms.clockSkewSeconds });
    if (windowProblem) return this.refuse(req, windowProblem);

    const ref: AuthorizationRef = {
      authKey: paymentKeys.authorization(this.opts.keys, matched.network, matched.asset, auth.from, auth.nonce),
      asset: matched.asset as `0x${string}`,
      from: auth.from,
      nonce: auth.nonce,
    };
    const payloadHash = canonicalHash(payload.payload);
    const proof: ReplayProof = { paymentId, payer: auth.from, authKey: ref.authKey };

    // Idempotency-Key: scoped to the payer, looked up only once the payment is read. A key bound
    // to this very authorization goes on like any replay of it (below: the stored answer only with
    // proof of being the payer); a key bound to another of this payer's payments answers that
    // payment's stored response only to a fresh authorization signed by the payer (never seen
    // here, so never public), which is not charged.
    const idempotencyKey = req.idempotencyKey ? this.idempotencyKeyOf(req.route, auth.from, req.idempotencyKey) : undefined;
    if (idempotencyKey) {
      const bound = await this.replays.byIdempotencyKey(idempotencyKey, req.requestHash);
      if (bound && bound.authKey !== ref.authKey) {
        if (!signedByPayer(payload, matched, auth)) return this.refuse(req, 'invalid_exact_evm_signature');
        if (!(await this.reservations.read(ref.authKey))) {
          // the fresh authorization only proved the payer: it is never settled, and the answer says
          // so (`Idempotent-Replayed: true`) so that a client does not count it as spent
          const stored = await this.replays.waitForStored(bound.authKey);
          return replay({ ...stored, headers: { ...stored.headers, [IDEMPOTENT_REPLAYED]: 'true' } });
        }
      }
    }

    // `authorization` flow: the replay lookup and the facilitator's verify are both read-only, so
    // they run side by side; a payment seen before is answered from its reservation (never run or
    // charged twice), and the verdict of its verify is ignored. `upfront` flow: no verify (settle
    // verifies and simulates); the reservation below finds a payment seen before.
    const upfront = this.opts.terms.paymentFlow === 'upfront';
    if (!upfront) {
      const verifying = this.settlement.verify(payload, matched).then(
        (v) => ({ v }),
        (e: unknown) => ({ e }),
      );
      const prior = await this.reservations.read(ref.authKey);
      if (prior) return this.resume(ref, prior, req, payloadHash, matched.amount, proof);
      const verified = await verifying;
      if ('e' in verified) throw verified.e;
      if (!verified.v.isValid) return this.refuse(req, verified.v.invalidReason);
    }

    const reserved = await this.reservations.reserve(ref, { requestHash: req.requestHash, payloadHash, operationId: req.operationId, amount: matched.amount });
    if (!reserved.reserved) return this.resume(ref, reserved.existing, req, payloadHash, matched.amount, proof);

    // bind the payment identifier and the Idempotency-Key to this payment before it is charged
    const bindings: string[] = [];
    if (paymentId) {
      if (!(await this.reservations.beforeSettlement(ref.authKey, req.operationId, () => this.identifiers.claim(paymentId, identifierHash!, ref.authKey)))) {
        await this.reservations.release(ref.authKey, req.operationId, ['pending']);
        throw new PaymentConflictError('payment_identifier');
      }
      bindings.push(this.identifiers.key(paymentId));
    }
    if (idempotencyKey) {
      if (!(await this.reservations.claimIdempotencyKey(idempotencyKey, req.requestHash, ref.authKey, req.operationId))) {
        await this.reservations.release(ref.authKey, req.operationId, ['pending']);
        await this.reservations.unbind(bindings, ref.authKey);
        throw new PaymentConflictError('idempotency');
      }
      bindings.push(idempotencyKey);
    }

    // a read-only operation may start before settlement on a payment the facilitator verified
    // (`authorization` flow), or, in the `upfront` flow, whose signature is the payer's (checked
    // here; settle verifies the rest). Its result is used only once settlement succeeded.
    const earlyStart = !upfront || signedByPayer(payload, matched, auth);
    const settlement = this.settleReserved(req, ref, bindings, payload, matched, auth);
    return { kind: 'proceed', plan: { operationId: req.operationId, payer: auth.from, amount: matched.amount, earlyStart, settlement } };
  }

  /**
   * Settles a payment reserved for `req` (settle.ts; refused → the identifier and the key are
   * unbound again): `settled` with the payment, its `settled` mark being written and its settlement
   * watched until final (finality.ts); `refused` with the 402 or the problem (chain unavailable).
   */
  private settleReserved(
    req: PaidRequest,
    ref: AuthorizationRef,
    bindings: string[],
    payload: PaymentPayload,
    matched: PaymentRequirements,
    auth: Eip3009Authorization,
  ): Promise<Settled | Refused> {
    const settling = (async (): Promise<Settled | Refused> => {
      const settled = await this.settlement.settle(ref, req.operationId, payload, matched).catch(async (e: unknown) => {
        // released without a charge (chain down before anything was broadcast): the identifier and the key are free again
        if (e instanceof PaymentChainUnavailableError && e.payment === 'not_charged') await this.reservations.unbind(bindings, ref.authKey);
        throw e;
      });
      if (settled.kind === 'refused') {
        // nothing was charged: the identifier and the key may be used again
        await this.reservations.unbind(bindings, ref.authKey);
        return this.refuse(req, settled.reason);
      }
      const payment: SettledPayment = {
        operationId: req.operationId,
        payer: auth.from,
        amount: matched.amount,
        txHash: settled.settle.transaction as `0x${string}`,
        network: matched.network,
      };
      // The `settled` mark is written while the operation runs; complete() waits for it.
      const marking = this.reservations.transition(ref.authKey, req.operationId, ['pending'], 'settled', {
        tx_hash: payment.txHash,
        payer: payment.payer,
        amount: payment.amount,
      });
      // and the settlement is watched until final, with what it takes to resubmit it after a reorg (finality.ts)
      const tracked = retryWhileRedisUnavailable(() =>
        trackSettlement(this.opts.redis, this.opts.keys, {
          operationId: req.operationId,
          txHash: payment.txHash,
          authKey: ref.authKey,
          asset: ref.asset,
          authorization: auth,
          signature: (payload.payload as { signature: `0x${string}` }).signature,
        }),
      );
      const marked = Promise.all([marking, tracked]).then(([ok]) => ok);
      marked.catch(() => undefined);
      this.opts.observer?.settled?.({ route: req.route, amount: payment.amount });
      return this.settledStep({ payment, authKey: ref.authKey, settle: settled.settle, marked, resourceUrl: req.resourceUrl });
    })().catch((e: unknown): Refused => {
      if (e instanceof ProblemError) return { kind: 'refused', problem: e };
      throw e;
    });
    // the edge may be busy with an early start when a store error rejects this: never unhandled
    settling.catch(() => undefined);
    return settling;
  }

  /** The `settled` step handed to the edge, its record kept for {@link complete}. */
  private settledStep(record: SettledRecord): Settled {
    const step: Settled = { kind: 'settled', payment: record.payment };
    this.settledRecords.set(step.payment, record);
    return step;
  }

  /**
   * Step 2, after the edge ran the operation once with the settled payment: records what it
   * produced and gives the answer. `outcome` is the operation's run (a rejection is a refunded
   * failure: {@link failedOutcome}). A failure with `refund` reverses what it credited and enqueues
   * the durable refund first; the response, with a signed receipt when configured, is stored with
   * the reservation (`completed`) before it is returned, retried through a Redis outage. When the
   * crash-recovery sweep took the payment over meanwhile, its stored answer is returned
   * (`replayed: true`). Within the Redis outage bound: once Redis is down the answer is a 503 at
   * once and the rest goes on in the background (`answerWithinStoreOutage`, docs/operating.md).
   */
  async complete(settled: Settled, outcome: Promise<Outcome>): Promise<PaidAnswer> {
    const record = this.settledRecords.get(settled.payment);
    if (!record) throw new Error('complete: not a payment settled by this paywall');
    const { payment } = record;
    const work = outcome
      .catch((e: unknown) => this.failedOutcome(e, payment.operationId))
      // span `store`: the refund queued for a failure, then the answer stored with the reservation
      .then((o) =>
        inSpan('@acg/payments', 'store', { 'acg.operation_id': payment.operationId, 'acg.outcome': o.ok ? 'succeeded' : 'failed' }, () =>
          this.store(record, o),
        ),
      );
    // settled: while Redis is down the client gets a 503 at once and the answer is stored in the background (issue 28)
    return answerWithinStoreOutage(work, this.opts.redis, payment, this.opts.log);
  }

  private async store(settled: SettledRecord, outcome: Outcome): Promise<PaidAnswer> {
    const { payment, authKey } = settled;
    // a successful answer's settlement response carries a signed receipt (x402 offer-receipt)
    const settle =
      outcome.ok && this.opts.offerReceipts && settled.resourceUrl
        ? await this.opts.offerReceipts.withReceipt(settled.resourceUrl, settled.settle).catch(() => settled.settle)
        : settled.settle;
    const headers: Record<string, string> = { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(settle), 'Cache-Control': 'no-store' };
    let stored: StoredResponse;
    if (outcome.ok) {
      stored = { status: outcome.status ?? 200, body: outcome.body, headers: { ...outcome.headers, ...headers } };
    } else {
      let body = outcome.body;
      if (outcome.refund) {
        // one decision: whatever the operation credited is reversed before the refund is queued
        // (a crash in between: the reservation is still open, and the recovery sweep does both)
        const reversal = await this.reverseCredits(payment.operationId, payment.payer, payment.amount);
        if (reversal !== 'already_refunded') {
          await retryWhileRedisUnavailable(() =>
            this.opts.refunds.enqueue({ operationId: payment.operationId, payer: payment.payer, amount: payment.amount, paymentTxHash: payment.txHash }),
          );
          body = { ...body, refund: { status: 'pending', amount: payment.amount } };
        }
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
    // the `completed` mark is the call's last money write: on a replicated store the answer waits for the replicas
    await this.replicated(payment.operationId);
    return { kind: 'response', ...stored, replayed: false, settlement: settle };
  }

  /**
   * Waits until the replicas acknowledged every write so far (`WAIT`, {@link PaywallOptions.replicaAcks}).
   * A shortfall (the timeout passed) or a failed WAIT is logged and the answer still goes out: the
   * payment settled and the records are on the primary, whose `appendfsync always` keeps them.
   */
  private async replicated(operationId: string): Promise<void> {
    const acks = this.opts.replicaAcks;
    if (!acks) return;
    const acknowledged = await acks.wait().catch((e: unknown) => {
      this.opts.log.error({ operationId, err: String((e as Error)?.message).slice(0, 200) }, 'WAIT for the replicas failed');
      return -1;
    });
    if (acknowledged >= 0 && acknowledged < acks.replicas) {
      this.opts.log.error(
        { operationId, acknowledged, replicas: acks.replicas, timeoutMs: acks.timeoutMs },
        'paid answer sent before its money records reached the replicas (WAIT timed out); a failover now could lose them',
      );
    }
  }

  /**
   * decide → `run` → complete in one call, for tests and scripts (the gateway's edges drive the
   * steps themselves: apps/gateway/src/paidRoute/paidCall.ts). `payerAccount` is read first (the
   * request's {@link PaidRequest.caller}), `getHeader` gives the payment headers; `run` is called at
   * most once per payment, only after the payment settled; a throw is a refunded failure. The
   * paywall's problems are thrown (ProblemError).
   */
  async handle(
    req: Omit<PaidRequest, 'paymentHeaders' | 'caller'> & {
      getHeader?: (name: string) => string | undefined;
      payerAccount?: () => Promise<string | undefined>;
    },
    run: (payment: SettledPayment) => Promise<Outcome>,
  ): Promise<PaidResponse> {
    const { getHeader, payerAccount, ...rest } = req;
    const caller = payerAccount ? await payerAccount().catch(() => undefined) : undefined;
    const paymentHeaders = getHeader ? Object.fromEntries(PAYMENT_HEADERS.map((n) => [n, getHeader(n)])) : undefined;
    const request: PaidRequest = { ...rest, ...(paymentHeaders ? { paymentHeaders } : {}), ...(caller ? { caller } : {}) };
    const decision = await this.decide(request);
    if (decision.kind === 'proceed') {
      const settled = await decision.plan.settlement;
      if (settled.kind === 'settled')
        return this.complete(
          settled,
          Promise.resolve().then(() => run(settled.payment)),
        );
      if ('problem' in settled) throw settled.problem;
      return settled.response;
    }
    if (decision.kind === 'refused' && 'problem' in decision) throw decision.problem;
    return decision.response;
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
  private async resume(
    ref: AuthorizationRef,
    prior: AuthorizationRecord,
    req: PaidRequest,
    payloadHash: string,
    amount: string,
    proof: ReplayProof,
  ): Promise<Decision> {
    if (prior.payloadHash !== payloadHash) return this.refuse(req, 'invalid_exact_evm_nonce_already_used');
    if (prior.requestHash !== req.requestHash) throw new PaymentConflictError('payment');
    // a settled EIP-3009 authorization is public on-chain: without proof of being the payer, the
    // replay gets the receipt only (never the result, never a run taken over)
    const stale = Date.now() - prior.updatedAtMs > STALE_PENDING_MS;
    if (!(await this.provenPayer(req, proof))) {
      // a concurrent duplicate waits for the first, as before; an orphaned one is left to the payer or the recovery sweep
      if (prior.state !== 'settle_unknown' && !stale) await this.replays.waitForStored(ref.authKey);
      return replay(await this.replays.receipt(ref.authKey, req.resourceUrl));
    }
    if (prior.state === 'settle_unknown' || ((prior.state === 'pending' || prior.state === 'settled') && stale)) {
      const r = await reconcile(
        { redis: this.opts.redis, publicClient: this.opts.publicClient, reservations: this.reservations, log: this.opts.log, network: this.opts.terms.network },
        ref,
        prior.operationId,
        amount,
      );
      if (r.kind === 'settled') {
        // a settlement whose outcome was not seen, found on chain: counted now
        this.opts.observer?.settled?.({ route: req.route, amount: r.payment.amount });
        const settled = this.settledStep({
          payment: r.payment,
          authKey: ref.authKey,
          settle: r.settle,
          marked: Promise.resolve(true),
          resourceUrl: req.resourceUrl,
        });
        const plan: SettlementPlan = {
          operationId: r.payment.operationId,
          payer: r.payment.payer,
          amount: r.payment.amount,
          earlyStart: false,
          settlement: Promise.resolve(settled),
        };
        return { kind: 'proceed', plan };
      }
    }
    return replay(await this.replays.waitForStored(ref.authKey));
  }

  /** {@link CreditReversal.reverse} of the operation, retried through a Redis outage; `none` without reversals. */
  private async reverseCredits(operationId: string, payer: `0x${string}`, amount: string) {
    const reversals = this.opts.reversals;
    if (!reversals) return 'none' as const;
    const r = await retryWhileRedisUnavailable(() => reversals.reverse({ operationId, payer, amount }));
    if (r === 'paid_out' || r === 'already_refunded') this.opts.log.error({ operationId, reversal: r }, "a refunded payment's credit could not be reversed");
    return r;
  }

  /** Redis key of `Idempotency-Key` `key` on `route` for `payer` (keys are per payer: one payer's key never answers another). */
  private idempotencyKeyOf(route: string, payer: string, key: string): string {
    return paymentKeys.idempotency(this.opts.keys, route, `${payer.toLowerCase()}:${key}`);
  }

  /**
   * Whether a request resending a settled payment proves it comes from the payer: the x402
   * `payment-identifier` it carries is bound to this very authorization (the id never goes
   * on-chain), or its bearer token is the payer's wallet.
   */
  private async provenPayer(req: PaidRequest, proof: ReplayProof): Promise<boolean> {
    if (proof.paymentId && (await this.identifiers.boundTo(proof.paymentId)) === proof.authKey) return true;
    return req.caller !== undefined && req.caller.toLowerCase() === proof.payer.toLowerCase();
  }

  private async refuse(req: ChallengedResource, reason: string | undefined): Promise<Refused> {
    this.opts.observer?.refused?.({ reason: reason ?? 'invalid_payment' });
    return { kind: 'refused', response: await this.signInOffered(this.offered(this.challenges.refuse(req, reason))) };
  }
}

/** What a resent payment may prove its payer with: the payment identifier it carries, and the payment's payer and reservation. */
interface ReplayProof {
  paymentId?: string;
  payer: `0x${string}`;
  authKey: string;
}

/**
 * Header on the stored answer returned for an `Idempotency-Key` bound to an earlier payment of the
 * same payer: the authorization sent with this request proved the payer and was not settled
 * (docs/decisions.md "x402 payments", "Idempotency-Key replays").
 */
export const IDEMPOTENT_REPLAYED = 'Idempotent-Replayed';

/** A stored answer as a `replay`, with the settlement its `PAYMENT-RESPONSE` header carries (decoded here, once, for transports that answer it as an object). */
function replay(stored: StoredResponse): { kind: 'replay'; response: PaidAnswer } {
  const settlement = settlementOf(stored.headers);
  return { kind: 'replay', response: { kind: 'response', ...stored, replayed: true, ...(settlement ? { settlement } : {}) } };
}

/** The SettleResponse of a stored answer's `PAYMENT-RESPONSE` header, if it has one. */
function settlementOf(headers: Record<string, string>): SettleResponse | undefined {
  const h = headers['PAYMENT-RESPONSE'];
  if (!h) return undefined;
  try {
    return decodePaymentResponseHeader(h);
  } catch {
    return undefined;
  }
}
