import { ProblemError } from '@acg/schemas';
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import type { Logger } from 'pino';
import { chainFailedDuring, unlessChainLost, type PaymentChainMonitor } from './chainHealth.js';
import { PaymentChainUnavailableError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
import type { AuthorizationState } from './commands/index.js';
import type { AuthorizationRef, Reservations } from './reservation.js';
import { inSpan } from '@acg/tracing';

/** The settled payment handed to the paid operation. */
export interface SettledPayment {
  /** The operation id reserved with this payment: the request's own, or the first request's when a replay reconciles it. */
  operationId: string;
  payer: `0x${string}`;
  /** integer string, USDC base units */
  amount: string;
  /** settlement transaction hash on the payment chain; `0x` while a {@link deferred} payment is not settled */
  txHash: `0x${string}`;
  network: string;
  /**
   * A deferred payment (`upto`): verified and reserved, settled only by `Paywall.complete` with the
   * amount used; `amount` is then the authorized ceiling and `txHash` `0x` while the operation runs.
   */
  deferred?: boolean;
  /**
   * A deferred payment's reservation: its key (`paymentKeys.authorization`), its scheme, and the last
   * moment it can be settled (`deadline`, unix seconds: the Permit2 `deadline` of `upto`). What an
   * operation that goes on after its answer (a job, `Outcome.settleLater`) needs to record, when it
   * ends, what to settle (`recordDeferredCharge` of `@acg/payments/commands`).
   */
  authorization?: { key: string; scheme: string; deadline?: number };
  /**
   * An x402 `batch-settlement` voucher (or deposit): its channel (`bytes32`, lower case) and signed
   * cumulative amount (`maxClaimableAmount`, integer string, base units), which is the channel's charged
   * total once this call is charged. A provider's share of the call is recorded against it and credited
   * only once the chain's claimed total reaches it (`recordChannelCredit` of @acg/channels).
   */
  voucher?: { channelId: `0x${string}`; cumulative: string };
}

/** What {@link Settlement.settle} found: settled on chain, or refused with an x402 reason (reservation released). */
export type SettleResult = { kind: 'settled'; settle: SettleResponse } | { kind: 'refused'; reason: string | undefined };

/** The facilitator or the chain could not be reached to verify a payment (503). */
export class PaymentVerificationUnavailableError extends ProblemError {
  override name = 'PaymentVerificationUnavailableError';
  constructor() {
    super(
      503,
      'Payment verification is temporarily unavailable; retry shortly. Nothing was charged.',
      { reason: 'payment_verification_unavailable' },
      { 'Retry-After': '5' },
    );
  }
}

/**
 * Verify and settle through the facilitator, telling a bad payment from a lost payment chain
 * (docs/decisions.md "x402 payments"; README "Payment chain unreachable"): the x402 EVM facilitator swallows
 * RPC failures into payment reasons, so every failure is checked against the chain monitor.
 * - verify: lost chain → PaymentChainUnavailableError('not_charged'); facilitator unreachable →
 *   PaymentVerificationUnavailableError; otherwise the facilitator's verdict.
 * - settle (after the reservation): refused → reservation released; chain lost, receipt not seen
 *   or `settlement_pending` → `settle_unknown` (kept, reconciled later) and
 *   PaymentChainUnavailableError('unknown'); outcome unknown otherwise → `settle_unknown` and
 *   PaymentInProgressError.
 */
export class Settlement {
  /**
   * @param upfront the x402 `upfront` flow: settle is the first facilitator call, so a refusal
   *   while the chain was failing may come from settle's own verification; when the monitor saw no
   *   transaction handed to the node since the settlement began, nothing was broadcast and the
   *   reservation is released with PaymentChainUnavailableError('not_charged').
   */
  constructor(
    private readonly server: x402ResourceServer,
    private readonly reservations: Reservations,
    private readonly log: Logger,
    private readonly chain?: PaymentChainMonitor,
    private readonly upfront = false,
  ) {}

  /** Asks the facilitator whether the payment is valid (span `verify`). */
  verify(payload: PaymentPayload, matched: PaymentRequirements): Promise<VerifyResponse> {
    return inSpan('@acg/payments', 'verify', { 'x402.network': matched.network }, async (span) => {
      const verified = await this.verifyOnce(payload, matched);
      span.setAttribute('x402.valid', verified.isValid);
      if (!verified.isValid && verified.invalidReason) span.setAttribute('x402.reason', verified.invalidReason);
      return verified;
    });
  }

  private async verifyOnce(payload: PaymentPayload, matched: PaymentRequirements): Promise<VerifyResponse> {
    const started = Date.now();
    try {
      const verified = await unlessChainLost(this.chain, started, this.server.verifyPayment(payload, matched));
      if (!verified || (!verified.isValid && (await chainFailedDuring(this.chain, started)))) {
        this.log.warn({ reason: verified?.invalidReason }, 'payment not verifiable: payment chain unreachable');
        throw new PaymentChainUnavailableError('not_charged');
      }
      return verified;
    } catch (e) {
      if (e instanceof PaymentChainUnavailableError) throw e;
      const reason = (e as { invalidReason?: string }).invalidReason;
      if (reason) return { isValid: false, invalidReason: reason };
      this.log.error({ err: (e as Error).message?.slice(0, 200) }, 'payment verification failed to run');
      throw new PaymentVerificationUnavailableError();
    }
  }

  /**
   * Settles a payment reserved by `operationId` (see the class comment for each outcome; span
   * `settle`). `holding`: the reservation's states while it settles (`pending`; a deferred
   * payment's `settling`, and `settle_unknown` when its recovery settles it again).
   */
  settle(
    ref: AuthorizationRef,
    operationId: string,
    payload: PaymentPayload,
    matched: PaymentRequirements,
    holding: Exclude<AuthorizationState, 'completed'>[] = ['pending'],
  ): Promise<SettleResult> {
    return inSpan(
      '@acg/payments',
      'settle',
      { 'x402.network': matched.network, 'acg.operation_id': operationId, 'x402.amount': matched.amount },
      async (span) => {
        const result = await this.settleOnce(ref, operationId, payload, matched, holding);
        if (result.kind === 'settled') span.setAttribute('x402.transaction', result.settle.transaction);
        else span.setAttribute('x402.reason', result.reason ?? 'refused');
        return result;
      },
    );
  }

  private async settleOnce(
    ref: AuthorizationRef,
    operationId: string,
    payload: PaymentPayload,
    matched: PaymentRequirements,
    holding: Exclude<AuthorizationState, 'completed'>[],
  ): Promise<SettleResult> {
    const { authKey } = ref;
    const started = Date.now();
    let settle: SettleResponse;
    try {
      // a node that dies mid-settle leaves the facilitator polling for a receipt (60 s and more): stop waiting once it is gone
      const first = await unlessChainLost(this.chain, started, this.server.settlePayment(payload, matched));
      if (!first) return this.unknown(authKey, operationId, 'payment chain lost during settlement', holding);
      settle = first;
    } catch (e) {
      const reason = (e as { errorReason?: string }).errorReason;
      if (reason && (await chainFailedDuring(this.chain, started))) return this.chainFailed(authKey, operationId, reason, started, holding);
      if (reason) {
        await this.reservations.release(authKey, operationId, holding);
        return { kind: 'refused', reason };
      }
      // Unknown outcome (RPC or facilitator unreachable): keep the reservation; a retry reconciles on-chain.
      this.log.error({ err: (e as Error).message?.slice(0, 200), operationId }, 'settlement outcome unknown');
      await this.reservations.transition(authKey, operationId, holding, 'settle_unknown');
      throw new PaymentInProgressError();
    }
    if (!settle.success) {
      // broadcast but unconfirmed, or failed while the node was unreachable: the outcome is unknown, keep the reservation
      if (settle.errorReason === 'settlement_pending') {
        if (await chainFailedDuring(this.chain, started)) return this.unknown(authKey, operationId, settle.errorReason, holding);
        return this.pending(ref, operationId, settle.transaction, holding);
      }
      if (await chainFailedDuring(this.chain, started)) return this.chainFailed(authKey, operationId, settle.errorReason, started, holding);
      await this.reservations.release(authKey, operationId, holding);
      return { kind: 'refused', reason: settle.errorReason };
    }
    return { kind: 'settled', settle };
  }

  /**
   * A refusal that ended while the chain was failing: in the `upfront` flow with no transaction
   * handed to the node since `started`, nothing was broadcast (the facilitator's settle has
   * returned, so it will not broadcast later): released, 503 `not_charged`. Otherwise unknown.
   */
  private async chainFailed(
    authKey: string,
    operationId: string,
    why: string | undefined,
    started: number,
    holding: Exclude<AuthorizationState, 'completed'>[],
  ): Promise<never> {
    if (this.upfront && this.chain && !this.chain.broadcastSince(started)) {
      this.log.warn({ operationId, reason: why?.slice(0, 100) }, 'payment not settled: payment chain unreachable, nothing broadcast');
      await this.reservations.release(authKey, operationId, holding);
      throw new PaymentChainUnavailableError('not_charged');
    }
    return this.unknown(authKey, operationId, why, holding);
  }

  /**
   * Broadcast, the chain answering, but not confirmed in the facilitator's wait (a stuck or dropped
   * settlement): kept for reconciliation like {@link unknown}, answered 503 `settlement_pending`
   * naming the settlement transaction and the authorization (issue 33), not "chain unreachable".
   */
  private async pending(
    ref: AuthorizationRef,
    operationId: string,
    transaction: string | undefined,
    holding: Exclude<AuthorizationState, 'completed'>[],
  ): Promise<never> {
    const txHash = /^0x[0-9a-fA-F]{64}$/.test(transaction ?? '') ? (transaction as `0x${string}`) : undefined;
    this.log.error({ operationId, tx_hash: txHash, payer: ref.from }, 'settlement broadcast but not confirmed; kept for reconciliation');
    await this.reservations.transition(ref.authKey, operationId, holding, 'settle_unknown', txHash ? { tx_hash: txHash } : undefined);
    throw new PaymentSettlementPendingError({ txHash, authorization: { from: ref.from, nonce: ref.nonce } });
  }

  /** Settlement outcome not seen (chain lost, or broadcast but unconfirmed): keep the reservation for reconciliation, answer 503. */
  private async unknown(authKey: string, operationId: string, why: string | undefined, holding: Exclude<AuthorizationState, 'completed'>[]): Promise<never> {
    this.log.error({ operationId, reason: why?.slice(0, 100) }, 'settlement outcome unknown: payment chain unreachable');
    await this.reservations.transition(authKey, operationId, holding, 'settle_unknown');
    throw new PaymentChainUnavailableError('unknown');
  }
}
