import { decodePaymentResponseHeader, encodePaymentResponseHeader } from './headerCodec.js';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import type { OfferReceipts } from './offerReceipt.js';
import { SIGN_IN_WITH_X } from '@x402/extensions/sign-in-with-x';
import type { SignInWithXChallenges } from '@acg/identity';
import { type PaymentRequiredResponse, withPaymentRequiredExtension } from './paymentRequiredExtension.js';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { isRedisUnavailable, releaseLease, retryWhileRedisUnavailable, takeLease, type RedisKeys, type ReplicaAcks } from '@acg/redis';
import { randomUUID } from 'node:crypto';
import type { AuthorizationRecord, AuthorizationState } from './commands/index.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import type { PaymentChainMonitor } from './chainHealth.js';
import { Challenges, type ChallengedResource, type PaidResponse, type PaymentTerms } from './challenge.js';
import { PaymentChainUnavailableError, PaymentConflictError, PaymentError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
import { ProblemError } from '@acg/schemas';
import type { PaymentObserver } from './observer.js';
import { canonicalHash } from './hashing.js';
import type { CreditReversal, RefundQueue } from '@acg/treasury';
import { parsePaymentPayload, PAYMENT_HEADERS, readPaymentPayload } from './paymentHeader.js';
import { PaymentIdentifiers, readPaymentIdentifier } from './paymentIdentifier.js';
import { reconcile, settlementInPool } from './reconcile.js';
import { Replays, type StoredResponse } from './replay.js';
import { Reservations, type AuthorizationRef } from './reservation.js';
import { Settlement, type SettledPayment } from './settle.js';
import { inSpan } from '@acg/tracing';
import { answerWithinStoreOutage } from './storeOutage.js';
import { paymentKeys } from './commands/keys.js';
import { ExactScheme } from './schemes/exact.js';
import type { PaymentScheme, PaymentSchemeFactory, SchemeAuthorization, SchemeContext } from './schemes/strategy.js';

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
  /**
   * Payment schemes offered besides `exact` (always registered, always first in `accepts`), each a
   * strategy behind the same decision (schemes/strategy.ts, README "Payment schemes"), e.g.
   * `uptoScheme`. A resource offers the ones its {@link ChallengedResource.schemes} names.
   */
  schemes?: readonly PaymentSchemeFactory[];
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

/**
 * What the paid operation produced; `refund: true` on failure returns the payment (a refund
 * transaction for a payment settled before the run; for a deferred one, nothing is settled).
 * `charge` (integer string, USDC base units) is what a deferred payment settles
 * ({@link SettlementPlan.deferred}: the amount the operation used, at most the authorized amount;
 * "0" settles nothing); default the whole authorized amount. Ignored for a payment settled before the run.
 * `settleLater` (a success of a deferred payment only): the operation goes on after this answer (a
 * job) and is settled when it ends: the answer is stored now without a `PAYMENT-RESPONSE`, and the
 * reservation is held `pending` until the authorization's deadline
 * ({@link SettledPayment.authorization}); the operation's owner then records what to settle
 * (`recordDeferredCharge` of `@acg/payments/commands`) and the gateway settles it
 * ({@link Paywall.settleRecorded}, or {@link Paywall.recoverDeferred}). Ignored otherwise.
 */
export type Outcome =
  | { ok: true; status?: number; body: unknown; headers?: Record<string, string>; charge?: string; settleLater?: boolean }
  | { ok: false; status: number; body: Record<string, unknown>; refund: boolean; headers?: Record<string, string>; charge?: string };

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
  /** The price charged, integer string in USDC base units: for a {@link deferred} payment, the authorized ceiling (the most `complete` may settle). */
  readonly amount: string;
  /**
   * Whether the settlement is deferred (a `deferred` scheme, e.g. `upto`): the payment is verified
   * and reserved, {@link settlement} is `settled` at once (`payment.deferred`, no transaction yet),
   * and {@link Paywall.complete} settles the amount the operation used (`Outcome.charge`); 0, or a
   * failure, settles nothing and releases the authorization (no refund transaction). false: settled
   * before the run (`exact`).
   */
  readonly deferred: boolean;
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

/**
 * What {@link Paywall.complete} needs of a settled payment besides the plan: the reservation, the
 * facilitator's answer (undefined while a deferred payment is not settled), the `settled` mark
 * being written, the paid resource, and for a deferred payment what its settlement needs.
 */
interface SettledRecord {
  payment: SettledPayment;
  authKey: string;
  settle?: SettleResponse;
  marked: Promise<unknown>;
  resourceUrl?: string;
  deferred?: DeferredSettlement;
  /**
   * A deferred payment settled by `complete` itself (the outcome known): no separate `settled` mark
   * is written, the `completed` write that follows moves it from `settling` (one Redis round trip
   * fewer per voucher; docs/decisions.md "batch-settlement": Redis round trips).
   */
  completesFromSettling?: boolean;
}

/** A payment verified and reserved whose settlement waits for the operation's outcome (`PaymentScheme.settles` `deferred`). */
interface DeferredSettlement {
  scheme: PaymentScheme;
  ref: AuthorizationRef;
  payload: PaymentPayload;
  matched: PaymentRequirements;
  bindings: string[];
  req: PaidRequest;
  /** The settlement once started ({@link Paywall.settleUsed} or `complete`): the answer of a refusal, or undefined once settled. */
  settling?: Promise<PaidAnswer | undefined>;
}

/** How long the 402 of an unpaid request is reused, ms (see {@link Paywall.plainChallenge}). */
const CHALLENGE_CACHE_MS = 30_000;

/** How long one gateway holds a reservation's deferred settlement (`paymentKeys.deferredSettleLock`), ms: longer than a facilitator settlement waits for its receipt. */
const DEFERRED_SETTLE_LOCK_MS = 120_000;

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
  /** The payment schemes by x402 name, each a strategy (schemes/strategy.ts); `exact` first. */
  private readonly schemes = new Map<string, PaymentScheme>();

  constructor(private readonly opts: PaywallOptions) {
    this.server = new x402ResourceServer(opts.facilitator);
    this.challenges = new Challenges(opts.terms);
    this.replays = new Replays(opts.redis, opts.keys, opts.duplicateWaitMs);
    this.reservations = new Reservations(opts.redis, opts.keys, opts.log, opts.retentionSeconds ?? 7 * 24 * 3600);
    this.identifiers = new PaymentIdentifiers(opts.redis, opts.keys, this.reservations.retentionSeconds);
    this.settlement = new Settlement(this.server, this.reservations, opts.log, opts.chain, opts.terms.paymentFlow === 'upfront');
    const ctx: SchemeContext = {
      terms: opts.terms,
      server: this.server,
      settlement: this.settlement,
      redis: opts.redis,
      keys: opts.keys,
      publicClient: opts.publicClient,
      log: opts.log,
      facilitatorExtra: (scheme) => this.server.getSupportedKind(2, opts.terms.network, scheme)?.extra,
    };
    // `exact` always, first; then the configured schemes, each registered with the resource server
    const schemes = [new ExactScheme(ctx, (price) => this.challenges.requirements(price)), ...(opts.schemes ?? []).map((f) => f(ctx))];
    for (const scheme of schemes) {
      if (this.schemes.has(scheme.scheme)) throw new Error(`payment scheme ${scheme.scheme} registered twice`);
      this.schemes.set(scheme.scheme, scheme);
      this.server.register(opts.terms.network, scheme.server);
    }
  }

  /** The schemes this paywall accepts, by x402 name (`exact` first). */
  get schemeNames(): string[] {
    return [...this.schemes.keys()];
  }

  /** The requirements `req` offers: `exact` first, then each of `req.schemes` this paywall has a strategy for and whose facilitator supports it. */
  /**
   * The `accepts` of `req`'s 402 (x402 v2 PaymentRequirements, in order): `exact` for `req.price`
   * first, then each other scheme `req.schemes` names that this paywall accepts (a strategy for it,
   * and a facilitator that supports it; `upto` needs the facilitator's supported kinds, so call
   * {@link init} first), a deferred one with `req.deferredMaxTimeoutSeconds`. The same list the
   * resource's live 402 offers, e.g. for a discovery listing (`GET /discovery/resources`).
   */
  accepts(req: Pick<ChallengedResource, 'price' | 'schemes' | 'deferredMaxTimeoutSeconds'>): PaymentRequirements[] {
    const accepts = [this.challenges.requirements(req.price)];
    for (const name of req.schemes ?? []) {
      if (name === 'exact') continue;
      const r = this.schemes.get(name)?.requirements(req.price, { maxTimeoutSeconds: req.deferredMaxTimeoutSeconds });
      if (r) accepts.push(r);
    }
    return accepts;
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
    return this.signInOffered(error ? this.offered(this.challenges.challenge(req, error, this.accepts(req))) : this.plainChallenge(req));
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
    const key = `${req.resourceUrl}\n${req.price}\n${req.description}\n${req.paymentRequiredMessage ?? ''}\n${req.schemes?.join(',') ?? ''}\n${req.deferredMaxTimeoutSeconds ?? ''}\n${JSON.stringify(req.extensions ?? {})}`;
    const now = Date.now();
    const hit = this.challengeCache.get(key);
    if (hit && hit.expiresAt > now) return hit.response;
    const response = this.offered(this.challenges.challenge(req, undefined, this.accepts(req)));
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
    const accepts = this.accepts(req);

    let payload: PaymentPayload | undefined;
    let paymentId: string | undefined;
    try {
      payload =
        req.paymentPayload === undefined
          ? readPaymentPayload((name) => req.paymentHeaders?.[name as (typeof PAYMENT_HEADERS)[number]], accepts)
          : req.paymentPayload === null
            ? undefined
            : parsePaymentPayload(req.paymentPayload, accepts);
      if (payload) paymentId = readPaymentIdentifier(payload);
    } catch (e) {
      if (e instanceof PaymentError) {
        this.opts.observer?.refused?.({ reason: e.reason });
        return {
          kind: 'refused',
          response: await this.signInOffered(this.offered(this.challenges.challenge(req, { reason: e.reason, message: e.message }, accepts))),
        };
      }
      throw e;
    }
    if (!payload) return { kind: 'challenge', response: await this.signInOffered(this.plainChallenge(req)) };
    // x402 payment-identifier: an id bound to another payload is a conflict (409) before anything
    // is verified; the same payload goes on and finds its reservation (the stored response).
    const identifierHash = paymentId ? canonicalHash(payload) : undefined;
    if (paymentId) await this.identifiers.check(paymentId, identifierHash!);

    // dispatch by scheme: the payload matched one offered entry (`accepted`), whose strategy reads it
    const matched = this.server.findMatchingRequirements(accepts, payload);
    const scheme = matched && this.schemes.get(matched.scheme);
    if (!matched || !scheme) return this.refuse(req, 'requirements_mismatch');
    const authorized = scheme.authorize(payload, matched);
    if (!authorized.ok) return this.refuse(req, authorized.reason);
    const auth: SchemeAuthorization = authorized.auth;

    const ref: AuthorizationRef = {
      authKey: paymentKeys.authorization(this.opts.keys, matched.network, auth.nonceSpace, auth.payer, auth.nonce),
      asset: matched.asset as `0x${string}`,
      from: auth.payer,
      nonce: auth.nonce,
    };
    const payloadHash = canonicalHash(payload.payload);
    const proof: ReplayProof = { paymentId, payer: auth.payer, authKey: ref.authKey };

    // Idempotency-Key: scoped to the payer, looked up only once the payment is read. A key bound
    // to this very authorization goes on like any replay of it (below: the stored answer only with
    // proof of being the payer); a key bound to another of this payer's payments answers that
    // payment's stored response only to a fresh authorization signed by the payer (never seen
    // here, so never public), which is not charged.
    const idempotencyKey = req.idempotencyKey ? this.idempotencyKeyOf(req.route, auth.payer, req.idempotencyKey) : undefined;
    if (idempotencyKey) {
      const bound = await this.replays.byIdempotencyKey(idempotencyKey, req.requestHash);
      if (bound && bound.authKey !== ref.authKey) {
        if (!scheme.signedByPayer(payload, matched, auth)) return this.refuse(req, scheme.reasons.invalidSignature);
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
    // verifies and simulates); the reservation below finds a payment seen before. A deferred scheme
    // (`upto`) is always verified first: it is settled only after the operation ran.
    const deferred = scheme.settles === 'deferred';
    const upfront = this.opts.terms.paymentFlow === 'upfront' && !deferred;
    if (!upfront) {
      // a scheme whose verify takes a hold (PaymentScheme.verifyHolds) is verified only once no
      // reservation was found: a resent copy never holds what the first request's settlement needs
      const verify = () =>
        this.settlement.verify(payload, matched).then(
          (v) => ({ v }),
          (e: unknown) => ({ e }),
        );
      const verifying = scheme.verifyHolds ? undefined : verify();
      const prior = await this.reservations.read(ref.authKey);
      if (prior) return this.resume(scheme, ref, prior, req, payload, payloadHash, matched.amount, proof);
      const verified = await (verifying ?? verify());
      if ('e' in verified) throw verified.e;
      if (!verified.v.isValid) {
        // a scheme whose verify holds is verified after the lookup: a copy whose first reserved (and
        // may have finished, spending the voucher) between the two is a resend, not a refused payment
        const late = scheme.verifyHolds ? await this.reservations.read(ref.authKey) : undefined;
        if (late) return this.resume(scheme, ref, late, req, payload, payloadHash, matched.amount, proof);
        // two copies of one payment at the same instant (a scheme whose verify holds): the first
        // holds it and is about to reserve it; this copy waits for that reservation and is answered
        // as a resend (the first's answer), instead of being refused as busy
        const first = verified.v.invalidReason === scheme.reasons.busy && scheme.reasons.busy ? await this.firstCopy(scheme, ref, payload) : undefined;
        if (first) return this.resume(scheme, ref, first, req, payload, payloadHash, matched.amount, proof);
        return this.refuse(req, verified.v.invalidReason, { scheme, payload });
      }
    }

    const reserved = await this.reservations.reserve(ref, {
      requestHash: req.requestHash,
      payloadHash,
      operationId: req.operationId,
      amount: matched.amount,
      scheme: scheme.scheme,
    });
    if (!reserved.reserved) return this.resume(scheme, ref, reserved.existing, req, payload, payloadHash, matched.amount, proof);

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
    const earlyStart = !upfront || scheme.signedByPayer(payload, matched, auth);
    if (deferred) {
      // verified and reserved: the operation runs now, and complete() settles what it used
      const voucher = scheme.voucherOf?.(payload);
      const payment: SettledPayment = {
        operationId: req.operationId,
        payer: auth.payer,
        amount: matched.amount,
        txHash: '0x',
        network: matched.network,
        deferred: true,
        authorization: { key: ref.authKey, scheme: scheme.scheme, ...(scheme.deadline?.(payload) ? { deadline: scheme.deadline(payload) } : {}) },
        ...(voucher ? { voucher } : {}),
      };
      const settled = this.settledStep({
        payment,
        authKey: ref.authKey,
        marked: Promise.resolve(true),
        resourceUrl: req.resourceUrl,
        deferred: { scheme, ref, payload, matched, bindings, req },
      });
      const plan: SettlementPlan = {
        operationId: req.operationId,
        payer: auth.payer,
        amount: matched.amount,
        earlyStart,
        deferred: true,
        settlement: Promise.resolve(settled),
      };
      return { kind: 'proceed', plan };
    }
    const settlement = this.settleReserved(scheme, req, ref, bindings, payload, matched);
    return { kind: 'proceed', plan: { operationId: req.operationId, payer: auth.payer, amount: matched.amount, earlyStart, deferred: false, settlement } };
  }

  /**
   * An x402 `batch-settlement` cooperative refund requested by the client (the official client's
   * `refund(url)`; scheme spec "Refund Payload"), on a resource that offers only `batch-settlement`
   * at `req.price`: without a payment, the 402 (`accepts`: the batch-settlement requirements alone);
   * with a `refund` payload (a zero-charge voucher at the channel's charged total, optional `amount`),
   * verified by the official scheme (the channel's charged total, the facilitator) and then settled:
   * the facilitator claims the channel's outstanding voucher and refunds the rest of its escrow (or
   * `amount`) to the payer in one transaction, the receiver authorizer signing both. No operation runs.
   * Answers `refunded` with the official settle response (`transaction`, refunded `amount`,
   * `extra.channelState`), or the 402 with x402's reason: another payload type
   * `invalid_batch_settlement_evm_payload_type`, a stale voucher
   * `invalid_batch_settlement_evm_cumulative_amount_mismatch` (with the corrective channel state), a
   * channel with nothing left `invalid_batch_settlement_evm_refund_no_balance`, two requests on one
   * channel at once `invalid_batch_settlement_evm_channel_busy`. Replay-safe: the contract's refund
   * nonce advances on each refund, and a repeat finds nothing left to refund. Throws a ProblemError
   * (404 when the paywall does not accept `batch-settlement`; 503 when the chain or facilitator is
   * unavailable). docs/decisions.md "batch-settlement": cooperative refunds.
   */
  async channelRefund(
    req: ChallengedResource & { paymentHeaders?: PaidRequest['paymentHeaders'] },
  ): Promise<{ kind: 'challenge' | 'refused'; response: PaymentRequiredResponse } | { kind: 'refunded'; settlement: SettleResponse }> {
    if (!this.ready) await this.init();
    const scheme = this.schemes.get('batch-settlement');
    const requirements = scheme?.requirements(req.price);
    if (!scheme || !requirements)
      throw ProblemError.answer(404, { type: 'about:blank', title: 'Not Found', status: 404, detail: 'This gateway does not accept x402 batch-settlement.' });
    const accepts = [requirements];
    const refused = async (reason: string | undefined, payload?: PaymentPayload) => {
      this.opts.observer?.refused?.({ reason: reason ?? 'invalid_payment' });
      const list = accepts.map((a) => ({ ...a }));
      if (reason && payload) await scheme.enrichRefusal?.(reason, payload, list).catch(() => undefined);
      return { kind: 'refused' as const, response: this.challenges.refuse(req, reason, list) };
    };
    let payload: PaymentPayload | undefined;
    try {
      payload = readPaymentPayload((name) => req.paymentHeaders?.[name as (typeof PAYMENT_HEADERS)[number]], accepts);
    } catch (e) {
      if (e instanceof PaymentError) return refused(e.reason);
      throw e;
    }
    if (!payload) return { kind: 'challenge', response: this.challenges.challenge(req, undefined, accepts) };
    const matched = this.server.findMatchingRequirements(accepts, payload);
    if (!matched) return refused('requirements_mismatch');
    if ((payload.payload as { type?: unknown }).type !== 'refund') return refused('invalid_batch_settlement_evm_payload_type');
    const verified = await this.settlement.verify(payload, matched);
    if (!verified.isValid) return refused(verified.invalidReason, payload);
    let settlement: SettleResponse;
    try {
      settlement = await this.server.settlePayment(payload, matched);
    } catch (e) {
      // the channel's hold is dropped (as for a failed run): the client may ask again
      await scheme.unsettled?.(payload, matched);
      const reason = (e as { errorReason?: string }).errorReason ?? String((e as Error).message ?? '').match(/invalid_batch_settlement_evm_\w+/)?.[0];
      this.opts.log.warn({ reason, err: String((e as Error)?.message).slice(0, 200) }, 'batch-settlement refund not settled');
      return refused(reason ?? 'unexpected_settle_error', payload);
    }
    if (!settlement.success) {
      await scheme.unsettled?.(payload, matched);
      return refused(settlement.errorReason, payload);
    }
    return { kind: 'refunded', settlement };
  }

  /**
   * The reservation of `ref` made by the first copy of a payment refused here as busy
   * ({@link PaymentScheme.heldByCopy}): polled every 10 ms while the scheme says the hold is this
   * payment's, up to {@link PaywallOptions.duplicateWaitMs}; undefined when the hold is another
   * payment's, or was dropped without a reservation (then the busy refusal stands).
   */
  private async firstCopy(scheme: PaymentScheme, ref: AuthorizationRef, payload: PaymentPayload): Promise<AuthorizationRecord | undefined> {
    if (!scheme.heldByCopy) return undefined;
    const deadline = Date.now() + (this.opts.duplicateWaitMs ?? 30_000);
    for (;;) {
      const prior = await this.reservations.read(ref.authKey);
      if (prior) return prior;
      // the hold gone: read once more (the first may have reserved and finished in between)
      if (Date.now() > deadline || !(await scheme.heldByCopy(payload))) return this.reservations.read(ref.authKey);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * Settles a payment reserved for `req` (settle.ts; refused → the identifier and the key are
   * unbound again): `settled` with the payment, its `settled` mark being written and its settlement
   * watched until final (finality.ts); `refused` with the 402 or the problem (chain unavailable).
   */
  private settleReserved(
    scheme: PaymentScheme,
    req: PaidRequest,
    ref: AuthorizationRef,
    bindings: string[],
    payload: PaymentPayload,
    matched: PaymentRequirements,
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
        payer: ref.from,
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
        scheme.track({ operationId: req.operationId, txHash: payment.txHash, amount: payment.amount, ref, payload }),
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
    if (settled.deferred && outcome.ok && outcome.settleLater && !settled.deferred.settling) return this.storeHeld(settled, settled.deferred, outcome);
    if (settled.deferred) {
      const d = settled.deferred;
      // settled already by the operation (settleUsed), or now with what the outcome says it used
      d.settling ??= this.settleDeferred(settled, d, chargeOf(outcome, settled.payment.amount), outcome);
      const refused = await d.settling;
      if (refused) return refused;
    }
    const { payment, authKey } = settled;
    const settledResponse = settled.settle as SettleResponse;
    // a successful answer's settlement response carries a signed receipt (x402 offer-receipt)
    const settle =
      outcome.ok && this.opts.offerReceipts && settled.resourceUrl
        ? await this.opts.offerReceipts.withReceipt(settled.resourceUrl, settledResponse).catch(() => settledResponse)
        : settledResponse;
    const headers: Record<string, string> = { 'PAYMENT-RESPONSE': encodePaymentResponseHeader(settle), 'Cache-Control': 'no-store' };
    let stored: StoredResponse;
    if (outcome.ok) {
      stored = { status: outcome.status ?? 200, body: outcome.body, headers: { ...outcome.headers, ...headers } };
    } else {
      let body = outcome.body;
      if (outcome.refund) {
        // one decision: whatever the operation credited is reversed before the refund is queued
        // (a crash in between: the reservation is still open, and the recovery sweep does both);
        // a deferred payment is not settled for a failure (0): nothing to refund, unless the
        // operation settled what it used (settleUsed) before it failed
        const reversal = await this.reverseCredits(payment.operationId, payment.payer, payment.amount);
        if (reversal !== 'already_refunded' && BigInt(payment.amount) > 0n) {
          await retryWhileRedisUnavailable(() =>
            this.opts.refunds.enqueue({ operationId: payment.operationId, payer: payment.payer, amount: payment.amount, paymentTxHash: payment.txHash }),
          );
          body = { ...body, refund: { status: 'pending', amount: payment.amount } };
        }
      }
      stored = { status: outcome.status, body, headers: { ...outcome.headers, ...headers, 'Content-Type': 'application/problem+json' } };
    }
    await settled.marked.catch(() => undefined);
    // from `pending` too: the settlement fields go with the answer if the mark could not be written;
    // from `settling` when settled just now in store() (no `settled` mark: see settleDeferred)
    const done = await this.reservations.transition(
      authKey,
      payment.operationId,
      settled.completesFromSettling ? ['settling'] : ['pending', 'settled'],
      'completed',
      {
        response: JSON.stringify(stored),
        tx_hash: payment.txHash,
        payer: payment.payer,
        amount: payment.amount,
      },
    );
    if (!done) {
      // the crash-recovery sweep took this payment over (it refunded it): answer what it stored
      return replay(await this.replays.waitForStored(authKey)).response;
    }
    // the `completed` mark is the call's last money write: on a replicated store the answer waits for the replicas
    await this.replicated(payment.operationId);
    return { kind: 'response', ...stored, replayed: false, settlement: settle };
  }

  /**
   * The answer of an operation that goes on after it and is settled when it ends (`Outcome.settleLater`:
   * a job paid with `upto`). Nothing is settled now and the answer carries no `PAYMENT-RESPONSE` (a
   * client keeps counting the ceiling until the job's record shows what was settled). The reservation
   * stays `pending`, held for the operation until the authorization's deadline: the answer, the
   * signed payload and the ceiling's requirements are stored with it (`hold_until`, unix seconds),
   * and its place in the in-flight set is the deadline, so neither the crash-recovery sweep nor the
   * deferred recovery looks at it before (docs/decisions.md "Payment schemes", jobs). A replay gets
   * this answer. The operation's owner later records what to settle (`recordDeferredCharge`).
   */
  private async storeHeld(settled: SettledRecord, d: DeferredSettlement, outcome: Extract<Outcome, { ok: true }>): Promise<PaidAnswer> {
    const { payment } = settled;
    const deadline = payment.authorization?.deadline;
    if (!deadline) throw new Error(`settleLater: the payment of ${payment.operationId} has no deadline`);
    const stored: StoredResponse = { status: outcome.status ?? 200, body: outcome.body, headers: { ...outcome.headers, 'Cache-Control': 'no-store' } };
    const held = await this.reservations.transition(
      d.ref.authKey,
      payment.operationId,
      ['pending'],
      'pending',
      {
        response: JSON.stringify(stored),
        payload: JSON.stringify(d.payload),
        requirements: JSON.stringify(d.matched),
        hold_until: String(deadline),
      },
      deadline * 1000,
    );
    if (!held) return replay(await this.replays.waitForStored(d.ref.authKey)).response;
    await this.replicated(payment.operationId);
    return { kind: 'response', ...stored, replayed: false };
  }

  /**
   * Settles a deferred payment ({@link SettlementPlan.deferred}) now, with `amount` (integer USDC
   * base units, 0..the authorized ceiling) the operation used, for an operation that must name the
   * settlement in its answer (e.g. an execution's `payment.tx_hash`). Idempotent per payment: later
   * calls, and {@link complete}, reuse the first settlement. Returns `payment` with the settlement's
   * `txHash` and `amount`; throws a ProblemError for a refused settlement (402 body: nothing
   * charged, the result must be withheld) or a chain problem (503), which `complete` then answers.
   * A payment settled before the run (`exact`) is returned as it is.
   */
  async settleUsed(payment: SettledPayment, amount: bigint | string): Promise<SettledPayment> {
    const record = this.settledRecords.get(payment);
    if (!record) throw new Error('settleUsed: not a payment of this paywall');
    const d = record.deferred;
    if (!d) return payment;
    d.settling ??= this.settleDeferred(record, d, BigInt(amount));
    const refused = await d.settling;
    if (refused) throw ProblemError.answer(refused.status, refused.body as Record<string, unknown>, refused.headers);
    return payment;
  }

  /**
   * Settles a deferred payment ({@link SettlementPlan.deferred}) once its operation ran, before its
   * answer is stored: the amount is `outcome.charge` (default the authorized ceiling; a refunded
   * failure settles 0), at most the ceiling. 0 → nothing is settled on chain (the authorization is
   * never used; the reservation still holds it, so the payload cannot run again) and the answer
   * carries a settlement of amount 0. Otherwise the scheme's facilitator settles that amount
   * (settle.ts, as for `exact`), the `settled` mark is written and the settlement tracked until
   * final. A refused settlement (e.g. the payer's balance or allowance is gone) reverses the
   * operation's credits, unbinds the payment identifier and Idempotency-Key, and is answered with
   * the 402 (the result is withheld; nothing was charged). A chain or facilitator problem is
   * answered with its problem (503), the reservation kept `settle_unknown` for reconciliation.
   * A scheme that takes an unsettled payload back (`PaymentScheme.unsettled`: batch-settlement)
   * is handed it when the charge is 0 and the operation's `outcome` is known (from
   * {@link complete}): the reservation is released and the answer carries no PAYMENT-RESPONSE.
   * Returns the answer of a refusal (or of a payload taken back), undefined once settled.
   */
  private async settleDeferred(record: SettledRecord, d: DeferredSettlement, charge: bigint, outcome?: Outcome): Promise<PaidAnswer | undefined> {
    const { payment } = record;
    const ceiling = BigInt(payment.amount);
    if (charge < 0n || charge > ceiling) throw new Error(`deferred charge ${charge} outside 0..${ceiling} for ${payment.operationId}`);
    const amount = charge.toString();
    let settle: SettleResponse;
    if (charge === 0n && d.scheme.unsettled && outcome) {
      // nothing settled and the scheme takes the payload back (batch-settlement: the channel's
      // reservation cancelled): the reservation is released, not stored, so the same payload runs
      // again on a retry; the answer carries no PAYMENT-RESPONSE (nothing was charged)
      await d.scheme.unsettled(d.payload, d.matched);
      if (!outcome.ok && outcome.refund) await this.reverseCredits(payment.operationId, payment.payer, payment.amount);
      await this.reservations.release(d.ref.authKey, payment.operationId, ['pending']);
      await this.reservations.unbind(d.bindings, d.ref.authKey);
      const headers = { ...outcome.headers, 'Cache-Control': 'no-store', ...(outcome.ok ? {} : { 'Content-Type': 'application/problem+json' }) };
      return { kind: 'response', status: outcome.status ?? 200, headers, body: outcome.body, replayed: false };
    }
    if (charge === 0n) {
      settle = { success: true, transaction: '', network: d.matched.network as SettleResponse['network'], payer: payment.payer, amount: '0' };
    } else {
      const requirements = { ...d.matched, amount };
      // the intent first: a crash from here on leaves `settling` with what to settle, which the
      // deferred recovery settles (never twice: the Permit2 nonce is spent once)
      const intent = await this.reservations.transition(d.ref.authKey, payment.operationId, ['pending'], 'settling', {
        settle_amount: amount,
        payload: JSON.stringify(d.payload),
        requirements: JSON.stringify(requirements),
      });
      if (!intent) throw new Error(`deferred settlement of ${payment.operationId}: its reservation is no longer pending`);
      let result: Awaited<ReturnType<Settlement['settle']>>;
      try {
        result = await this.settlement.settle(d.ref, payment.operationId, d.payload, requirements, ['settling']);
      } catch (e) {
        if (e instanceof ProblemError) {
          if (e instanceof PaymentChainUnavailableError && e.payment === 'not_charged') await this.reservations.unbind(d.bindings, d.ref.authKey);
          return { kind: 'response', status: e.status, headers: e.headers, body: e.body, replayed: false };
        }
        throw e;
      }
      if (result.kind === 'refused') {
        await this.reverseCredits(payment.operationId, payment.payer, amount);
        await this.reservations.unbind(d.bindings, d.ref.authKey);
        const refused = await this.refuse(d.req, result.reason, { scheme: d.scheme, payload: d.payload });
        const r = refused.kind === 'refused' && 'response' in refused ? refused.response : undefined;
        return { kind: 'response', status: 402, headers: r?.headers ?? {}, body: r?.body ?? {}, replayed: false };
      }
      settle = result.settle;
      this.opts.observer?.settled?.({ route: d.req.route, amount });
    }
    payment.amount = amount;
    payment.txHash = (settle.transaction || '0x') as `0x${string}`;
    record.settle = settle;
    if (charge > 0n) {
      // settled from complete() (the outcome known): its `completed` write follows at once, with no
      // Redis or chain step in between, so the `settled` mark is folded into it (settling →
      // completed, one compare-and-set). A crash before that write leaves `settling` with what was
      // settled, the state a crash just after the settlement left before the fold too (the mark was
      // written after the settlement returned). Settled by the operation (settleUsed), it goes on
      // running: `settled` is written now and says so while it runs.
      const marking = outcome
        ? Promise.resolve(true)
        : this.reservations.transition(d.ref.authKey, payment.operationId, ['settling'], 'settled', {
            tx_hash: payment.txHash,
            payer: payment.payer,
            amount,
          });
      if (outcome) record.completesFromSettling = true;
      const tracked = retryWhileRedisUnavailable(() =>
        d.scheme.track({ operationId: payment.operationId, txHash: payment.txHash, amount, ref: d.ref, payload: d.payload }),
      );
      record.marked = Promise.all([marking, tracked]).then(([ok]) => ok);
      record.marked.catch(() => undefined);
    }
    return undefined;
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
   * `invalid_exact_evm_nonce_already_used`; another request → PaymentConflictError (or the 402 of
   * the scheme's `reasons.reused`, with its corrective fields); unknown
   * settlement or no progress for 2 minutes → reconciled on chain; otherwise its stored answer
   * (waiting while the first request runs).
   */
  private async resume(
    scheme: PaymentScheme,
    ref: AuthorizationRef,
    prior: AuthorizationRecord,
    req: PaidRequest,
    payload: PaymentPayload,
    payloadHash: string,
    amount: string,
    proof: ReplayProof,
  ): Promise<Decision> {
    if (prior.payloadHash !== payloadHash) return this.refuse(req, scheme.reasons.nonceUsed, { scheme, payload });
    if (prior.requestHash !== req.requestHash) {
      if (scheme.reasons.reused) return this.refuse(req, scheme.reasons.reused, { scheme, payload });
      throw new PaymentConflictError('payment');
    }
    // a settled EIP-3009 authorization is public on-chain: without proof of being the payer, the
    // replay gets the receipt only (never the result, never a run taken over)
    const stale = Date.now() - prior.updatedAtMs > STALE_PENDING_MS;
    if (!(await this.provenPayer(req, proof))) {
      // a concurrent duplicate waits for the first, as before; an orphaned one is left to the payer or the recovery sweep
      if (prior.state !== 'settle_unknown' && !stale) {
        const stored = await this.replays.waitForStored(ref.authKey);
        // the first copy binds its payment identifier just after its reservation: a copy that arrived
        // in between proves the payer once the first answered
        if (proof.paymentId && (await this.provenPayer(req, proof))) return replay(stored);
      }
      return replay(await this.replays.receipt(ref.authKey, req.resourceUrl));
    }
    if (scheme.settles === 'deferred') {
      // a deferred payment settles after its operation ran: never "settled, run now". A settlement
      // it recorded and did not finish is finished here (then completed by the recovery sweep)
      if (prior.state === 'settle_unknown' || (prior.state === 'settling' && stale)) {
        await this.finishDeferred(scheme, ref, prior.operationId);
        throw new PaymentInProgressError();
      }
      return replay(await this.replays.waitForStored(ref.authKey));
    }
    if (prior.state === 'settle_unknown' || ((prior.state === 'pending' || prior.state === 'settled') && stale)) {
      const r = await reconcile(
        { redis: this.opts.redis, publicClient: this.opts.publicClient, reservations: this.reservations, log: this.opts.log, network: this.opts.terms.network },
        scheme,
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
          deferred: false,
          settlement: Promise.resolve(settled),
        };
        return { kind: 'proceed', plan };
      }
    }
    return replay(await this.replays.waitForStored(ref.authKey));
  }

  /**
   * Finishes the settlement a deferred payment recorded (`settling`: `settle_amount`, `payload`,
   * `requirements`) but did not see through (a crash, or an outcome not seen: `settle_unknown`):
   * its nonce used on chain → it settled: `settled` (with the stored `tx_hash`, if any); unused
   * while its transaction may still be mined → PaymentSettlementPendingError; unused → settled
   * again through the scheme's facilitator. Never twice: the nonce is spent once. Once `settled`,
   * the crash-recovery sweep of `@acg/reconciliation` completes it with the operation's stored
   * answer, or refunds it. Returns the reservation's state afterwards.
   */
  private async finishDeferred(scheme: PaymentScheme, ref: AuthorizationRef, operationId: string): Promise<string | undefined> {
    // one settlement at a time per reservation (a nudge, a recovery round and a replay may meet):
    // a second facilitator call for a spent nonce would be refused and release the reservation
    const lease = { leaseKey: paymentKeys.deferredSettleLock(ref.authKey), holder: randomUUID() };
    if (!(await takeLease(this.opts.redis, { ...lease, leaseMs: DEFERRED_SETTLE_LOCK_MS }))) return 'busy';
    try {
      return await this.finishDeferredLocked(scheme, ref, operationId);
    } finally {
      await releaseLease(this.opts.redis, lease).catch(() => undefined);
    }
  }

  private async finishDeferredLocked(scheme: PaymentScheme, ref: AuthorizationRef, operationId: string): Promise<string | undefined> {
    const h = await this.opts.redis.hgetall(ref.authKey);
    if (!h.settle_amount || !h.payload || !h.requirements || h.operation_id !== operationId) return h.state;
    if (h.state !== 'settling' && h.state !== 'settle_unknown') return h.state;
    // an answer stored before the settlement (a job's 202, `Outcome.settleLater`): settled is the last step
    const done: AuthorizationState = h.response ? 'completed' : 'settled';
    let used: boolean;
    try {
      used = await scheme.nonceUsed(ref);
    } catch {
      throw new PaymentChainUnavailableError('unknown');
    }
    if (used) {
      await this.reservations.transition(ref.authKey, operationId, ['settling', 'settle_unknown'], done, {
        amount: h.settle_amount,
        ...(h.tx_hash ? {} : { tx_hash: '0x' }),
      });
      return 'settled';
    }
    if (h.tx_hash && (await settlementInPool(this.opts.publicClient, h.tx_hash as `0x${string}`)))
      throw new PaymentSettlementPendingError({ txHash: h.tx_hash as `0x${string}`, authorization: { from: ref.from, nonce: ref.nonce } });
    const payload = JSON.parse(h.payload) as PaymentPayload;
    const requirements = JSON.parse(h.requirements) as PaymentRequirements;
    const result = await this.settlement.settle(ref, operationId, payload, requirements, ['settling', 'settle_unknown']);
    if (result.kind === 'refused') {
      this.opts.log.error({ operationId, reason: result.reason }, 'a recorded deferred settlement was refused: nothing charged');
      return undefined;
    }
    const txHash = (result.settle.transaction || '0x') as `0x${string}`;
    await this.reservations.transition(ref.authKey, operationId, ['settling', 'settle_unknown'], done, { tx_hash: txHash, amount: h.settle_amount });
    await retryWhileRedisUnavailable(() => scheme.track({ operationId, txHash, amount: h.settle_amount, ref, payload }));
    this.opts.observer?.settled?.({ route: 'recovered', amount: h.settle_amount });
    return 'settled';
  }

  /**
   * The deferred recovery (packages/payments README "Payment schemes"): finishes the settlement of
   * every deferred payment that recorded what to settle (`settling`) and made no progress for
   * `olderThanMs` (default 2 minutes), or whose outcome was not seen (`settle_unknown`): see
   * {@link finishDeferred}. Run by the gateway (it holds the facilitator the payer's witness
   * names) on a schedule, under a lock; the EIP-3009 crash-recovery sweep leaves these to it.
   * Returns the operation ids it moved to `settled`.
   */
  async recoverDeferred(o: { olderThanMs?: number; batch?: number } = {}): Promise<string[]> {
    const inflight = paymentKeys.authorizationsInFlight(this.opts.keys);
    const cutoff = Date.now() - (o.olderThanMs ?? STALE_PENDING_MS);
    const keys = await this.opts.redis.zrangebyscore(inflight, '-inf', cutoff, 'LIMIT', 0, o.batch ?? 100);
    const settled: string[] = [];
    for (const authKey of keys) {
      const operationId = await this.settleRecorded(authKey);
      if (operationId) settled.push(operationId);
    }
    return settled;
  }

  /**
   * Settles, now, what the deferred payment of reservation `authKey` recorded to settle (`settling`,
   * or `settle_unknown`), whatever its age: the prompt path of a job's settlement (the worker records
   * the amount with `recordDeferredCharge` and nudges the gateway, packages/payments README "Payment
   * schemes"; {@link recoverDeferred} is the safety net). Same rules as the recovery (nonce used on
   * chain → settled; never twice; one at a time per reservation under a Redis lock). Returns the
   * operation id once settled; undefined when there was nothing to settle, another gateway is
   * settling it, or it failed (logged; the recovery retries).
   */
  async settleRecorded(authKey: string): Promise<string | undefined> {
    const [schemeName, state, operationId, asset, payer, nonce] = await this.opts.redis.hmget(
      authKey,
      'scheme',
      'state',
      'operation_id',
      'asset',
      'payer',
      'nonce',
    );
    const scheme = schemeName ? this.schemes.get(schemeName) : undefined;
    if (scheme?.settles !== 'deferred' || (state !== 'settling' && state !== 'settle_unknown') || !operationId || !payer || !nonce) return undefined;
    const ref: AuthorizationRef = { authKey, asset: asset as `0x${string}`, from: payer as `0x${string}`, nonce: nonce as `0x${string}` };
    try {
      return (await this.finishDeferred(scheme, ref, operationId)) === 'settled' ? operationId : undefined;
    } catch (e) {
      this.opts.log.warn({ operationId, err: String((e as Error)?.message).slice(0, 200) }, 'deferred settlement not finished; retried next round');
      return undefined;
    }
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

  /** The 402 refusing a payment with `reason`; with the refused `payload` and its scheme, the scheme's corrective fields in `accepts` ({@link PaymentScheme.enrichRefusal}). */
  private async refuse(req: ChallengedResource, reason: string | undefined, refused?: { scheme: PaymentScheme; payload: PaymentPayload }): Promise<Refused> {
    this.opts.observer?.refused?.({ reason: reason ?? 'invalid_payment' });
    const accepts = this.accepts(req);
    let corrective = false;
    if (reason && refused?.scheme.enrichRefusal) {
      corrective = await refused.scheme.enrichRefusal(reason, refused.payload, accepts).catch((e: unknown) => {
        this.opts.log.warn({ err: String((e as Error)?.message).slice(0, 200) }, 'corrective 402 fields could not be added');
        return false;
      });
    }
    return { kind: 'refused', response: await this.signInOffered(this.offered(this.challenges.refuse(req, reason, accepts, { errorIsCode: corrective }))) };
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

/** What a deferred payment settles for `outcome` (integer base units): `charge`, else the whole `ceiling`; a refunded failure 0. */
function chargeOf(outcome: Outcome, ceiling: string): bigint {
  if (!outcome.ok && outcome.refund) return 0n;
  return BigInt(outcome.charge ?? ceiling);
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
