import type { RedisKeys } from '@acg/redis';
import { retryWhileRedisUnavailable } from '@acg/redis';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { BatchSettlementEvmScheme, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { releaseAuthorization, reserveAuthorization, transitionAuthorization, type AuthorizationRecord } from './commands/index.js';
import { paymentKeys } from './commands/keys.js';
import { ProblemError } from '@acg/schemas';
import { canonicalHash } from './hashing.js';
import { Replays, type StoredResponse } from './replay.js';

/** The x402 scheme name (`PaymentRequirements.scheme`). */
export const BATCH_SETTLEMENT = 'batch-settlement';

/**
 * x402 `batch-settlement` EVM reasons this gateway answers with (the values @x402/evm's server and
 * facilitator use; x402 specs/schemes/batch-settlement/scheme_batch_settlement_evm.md), plus
 * `withdrawalPending`, the gateway's own: x402 has no code for a channel whose timed withdrawal
 * is about to complete (packages/payments README "batch-settlement").
 */
export const BatchSettlementReasons = {
  /** The voucher's `maxClaimableAmount` is not the channel's charged total plus this call's price: reused, reordered or stale (corrective 402). */
  cumulativeAmountMismatch: 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
  /** The voucher asks more than the channel holds (over the deposit). */
  cumulativeExceedsBalance: 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
  /** The voucher is below what was already claimed on chain. */
  cumulativeBelowClaimed: 'invalid_batch_settlement_evm_cumulative_below_claimed',
  /** Another voucher of this channel is being processed. */
  channelBusy: 'invalid_batch_settlement_evm_channel_busy',
  /** A payload type this route does not take (a `refund` is not a paid call). */
  payloadType: 'invalid_batch_settlement_evm_payload_type',
  /** The channel's timed withdrawal completes within the margin: no more vouchers on it. */
  withdrawalPending: 'invalid_batch_settlement_evm_withdrawal_pending',
} as const;

/**
 * Seconds before a channel's timed withdrawal can complete (`withdrawRequestedAt + withdrawDelay`)
 * from which its vouchers are refused (default 300): room for the worker's next claim run and its
 * confirmation, so that every voucher accepted is claimed before the payer can take the escrow back.
 */
export const DEFAULT_WITHDRAWAL_MARGIN_SECONDS = 300;

/**
 * How long a voucher's reservation of its channel (the official scheme's `pendingRequest`) lasts,
 * seconds (`PaymentRequirements.maxTimeoutSeconds`, clamped by @x402/evm to 5 s – 10 min): a
 * process that dies while running a call blocks the channel this long at most.
 */
export const DEFAULT_VOUCHER_TIMEOUT_SECONDS = 60;

/** Where channel payments go: the asset's network, contract, EIP-712 domain and the receiver (`payTo`). */
export interface BatchSettlementTerms {
  network: `${string}:${string}`;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  assetName: string;
  assetVersion: string;
}

/** Options of {@link BatchSettlementPayments}. */
export interface BatchSettlementOptions {
  /** A facilitator that verifies and settles `batch-settlement` (its `getSupported` kind carries `extra.receiverAuthorizer`). */
  facilitator: FacilitatorClient;
  /** The channels (official `ChannelStorage`): shared by every gateway and the worker (Redis), or in memory for one process. */
  storage: ChannelStorage;
  terms: BatchSettlementTerms;
  redis: Redis;
  keys: RedisKeys;
  log: Logger;
  /** `ChannelConfig.withdrawDelay` the 402 asks for, seconds (default 900, the minimum x402 allows). */
  withdrawDelaySeconds?: number;
  /** See {@link DEFAULT_WITHDRAWAL_MARGIN_SECONDS}. */
  withdrawalMarginSeconds?: number;
  /** See {@link DEFAULT_VOUCHER_TIMEOUT_SECONDS}. */
  voucherTimeoutSeconds?: number;
  /**
   * How long the channel's mirrored on-chain state (balance, claimed, withdrawal) is trusted to check a
   * voucher locally, ms; after it a voucher is verified by the facilitator (one chain read) and the
   * mirror refreshed. Default @x402/evm's: a third of the withdrawal delay, 30 s – 5 min.
   */
  onchainStateTtlMs?: number;
  /** How long a duplicate waits for the first request's answer, ms (default 30 000). */
  duplicateWaitMs?: number;
  /** How long voucher reservations and their stored answers are kept, seconds (default 7 days). */
  retentionSeconds?: number;
}

/** A `deposit` or `voucher` payload's parts this module reads (x402 batch-settlement EVM payload). */
interface ChannelPayload {
  type: 'deposit' | 'voucher' | 'refund';
  channelConfig: { payer: `0x${string}`; withdrawDelay: number };
  voucher: { channelId: `0x${string}`; maxClaimableAmount: string; signature: `0x${string}` };
}

/** One voucher accepted for one run of the operation: run it once, then {@link BatchSettlementPayments.complete}. */
export interface ChannelPayment {
  readonly operationId: string;
  /** `ChannelConfig.payer`. */
  readonly payer: `0x${string}`;
  /** This call's price, integer string in USDC base units. */
  readonly amount: string;
  readonly channelId: `0x${string}`;
  /** The voucher's cumulative `maxClaimableAmount`, integer string (base units). */
  readonly cumulative: string;
  /** `deposit`: opens or tops up the channel on chain (by {@link BatchSettlementPayments.complete}, with the charge); `voucher`: off-chain only. */
  readonly kind: 'deposit' | 'voucher';
}

/**
 * What {@link BatchSettlementPayments.decide} decided about a `batch-settlement` payment:
 * - `refused`: an x402 `reason`, and for a cumulative mismatch the corrective requirements
 *   (`accepts`, with the channel's `channelState` and `voucherState`, so the official client resyncs);
 * - `problem`: 409 `payment_in_progress` (the first request with this voucher did not answer in time, or failed);
 * - `replay`: this voucher ran before (or runs now) for this same request: its stored answer, or
 *   the receipt when the request does not prove it comes from the payer;
 * - `proceed`: run the operation once with `payment`.
 */
export type ChannelDecision =
  | { kind: 'refused'; reason: string; corrective?: PaymentRequirements }
  | { kind: 'problem'; problem: ProblemError }
  | { kind: 'replay'; stored: StoredResponse }
  | { kind: 'proceed'; payment: ChannelPayment };

/** A paid call's outcome as {@link BatchSettlementPayments.complete} takes it. */
export type ChannelOutcome =
  | { ok: true; status?: number; body: unknown; headers?: Record<string, string> }
  | { ok: false; status: number; body: Record<string, unknown>; headers?: Record<string, string> };

/** What {@link BatchSettlementPayments.complete} answers: the response, and the settlement its `PAYMENT-RESPONSE` carries (success only). */
export interface ChannelAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  settlement?: SettleResponse;
  /** Whether the call was charged (a failed run, or a settlement refused, is not). */
  charged: boolean;
  /** The x402 reason when the settlement was refused after the run (answer the 402 with it). */
  refusal?: string;
}

/** What {@link BatchSettlementPayments.complete} needs of an accepted voucher (the very payload object: the official scheme keys its request state by it). */
interface Accepted {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  authKey: string;
}

/**
 * The `batch-settlement` side of the paywall (packages/payments README "batch-settlement",
 * docs/decisions.md "batch-settlement"): the official `BatchSettlementEvmScheme` server, unchanged,
 * behind x402's `x402ResourceServer`, with the channels in a shared {@link ChannelStorage}.
 *
 * - `voucher`: checked off-chain (EIP-712 signature and the mirrored balance; no chain round trip
 *   while the mirror is fresh), the channel reserved for this call (`pendingRequest`); the operation
 *   runs; on success the charge is committed (`chargedCumulativeAmount += price`), on failure the
 *   reservation is cancelled and nothing is charged (x402: "on failure, state unchanged").
 * - `deposit` (opens or tops up the channel, with the first voucher): verified by the facilitator
 *   (signature, balance, simulation), the operation runs, then the deposit goes on chain and the
 *   charge is committed; a deposit refused on chain drops the result (402), nothing charged.
 * - Each voucher is also reserved under (channel, cumulative) in Redis: a resend of the same voucher
 *   for the same request waits for, and gets, the stored answer (never a second run); a reused
 *   (another request), reordered or over-deposit voucher is refused by the official scheme with its
 *   x402 reason ({@link BatchSettlementReasons}).
 * - A channel whose timed withdrawal completes within `withdrawalMarginSeconds` takes no more vouchers.
 */
export class BatchSettlementPayments {
  readonly scheme: BatchSettlementEvmScheme;
  private readonly server: x402ResourceServer;
  private readonly replays: Replays;
  private readonly requirementsByPrice = new Map<bigint, Promise<PaymentRequirements>>();
  private readonly accepted = new WeakMap<ChannelPayment, Accepted>();
  private initialized?: Promise<void>;
  private readonly retentionSeconds: number;
  private readonly marginSeconds: number;

  constructor(private readonly opts: BatchSettlementOptions) {
    this.scheme = new BatchSettlementEvmScheme(opts.terms.payTo, {
      storage: opts.storage,
      withdrawDelay: opts.withdrawDelaySeconds ?? 900,
      ...(opts.onchainStateTtlMs !== undefined ? { onchainStateTtlMs: opts.onchainStateTtlMs } : {}),
    });
    this.server = new x402ResourceServer(opts.facilitator).register(opts.terms.network, this.scheme);
    this.replays = new Replays(opts.redis, opts.keys, opts.duplicateWaitMs);
    this.retentionSeconds = opts.retentionSeconds ?? 7 * 24 * 3600;
    this.marginSeconds = opts.withdrawalMarginSeconds ?? DEFAULT_WITHDRAWAL_MARGIN_SECONDS;
  }

  /** Reads the facilitator's supported kinds (its `receiverAuthorizer`); once, at startup (idempotent). */
  init(): Promise<void> {
    this.initialized ??= this.server.initialize();
    return this.initialized;
  }

  /** The channel storage (the worker's claims read it). */
  get storage(): ChannelStorage {
    return this.opts.storage;
  }

  /**
   * The `batch-settlement` PaymentRequirements for `price` (integer USDC base units): the terms, the
   * facilitator's `extra.receiverAuthorizer`, `extra.withdrawDelay` and the official `extra.minDeposit`
   * hint (10 calls' worth). Built once per price.
   */
  requirements(price: bigint): Promise<PaymentRequirements> {
    let r = this.requirementsByPrice.get(price);
    if (!r) {
      const t = this.opts.terms;
      r = this.init()
        .then(() =>
          this.server.buildPaymentRequirements({
            scheme: BATCH_SETTLEMENT,
            network: t.network,
            payTo: t.payTo,
            price: { amount: price.toString(), asset: t.asset, extra: { name: t.assetName, version: t.assetVersion } },
            maxTimeoutSeconds: this.opts.voucherTimeoutSeconds ?? DEFAULT_VOUCHER_TIMEOUT_SECONDS,
          }),
        )
        .then(([requirements]) => requirements);
      r.catch(() => this.requirementsByPrice.delete(price));
      if (this.requirementsByPrice.size >= 512) this.requirementsByPrice.clear();
      this.requirementsByPrice.set(price, r);
    }
    return r;
  }

  /**
   * Decides on a `batch-settlement` PaymentPayload for a call of `req.price` (see {@link ChannelDecision}).
   * `req.caller` (the wallet the request's credentials prove) is what a resent voucher proves its payer
   * with, as for `exact` (README "Replays"). Throws only for a store or facilitator error.
   */
  async decide(
    req: { requestHash: string; operationId: string; price: bigint; resourceUrl: string; caller?: string },
    payload: PaymentPayload,
  ): Promise<ChannelDecision> {
    const requirements = await this.requirements(req.price);
    const raw = channelPayload(payload);
    if (!raw) return { kind: 'refused', reason: BatchSettlementReasons.payloadType };
    if (!this.server.findMatchingRequirements([requirements], payload)) return { kind: 'refused', reason: 'requirements_mismatch' };
    const { channelId, maxClaimableAmount } = raw.voucher;
    const payer = raw.channelConfig.payer;

    // (channel, cumulative) reserved for this request: a resend of this voucher never runs twice
    const authKey = paymentKeys.voucher(this.opts.keys, requirements.network, channelId, maxClaimableAmount);
    const payloadHash = canonicalHash(payload.payload);
    const reserved = await reserveAuthorization(this.opts.redis, {
      authKey,
      inFlightKey: paymentKeys.vouchersInFlight(this.opts.keys),
      requestHash: req.requestHash,
      payloadHash,
      operationId: req.operationId,
      nowMs: Date.now(),
      retentionSeconds: this.retentionSeconds,
      asset: requirements.asset,
      from: payer,
      nonce: maxClaimableAmount,
      amount: requirements.amount,
    });
    if (!reserved.reserved) return this.resume(authKey, reserved.existing, req, payloadHash, payer, payload, requirements);

    const release = () =>
      releaseAuthorization(this.opts.redis, {
        authKey,
        inFlightKey: paymentKeys.vouchersInFlight(this.opts.keys),
        operationId: req.operationId,
        from: ['pending'],
      });
    const refuse = async (reason: string | undefined): Promise<ChannelDecision> => {
      await retryWhileRedisUnavailable(release);
      return { kind: 'refused', reason: reason ?? 'invalid_payment', ...(await this.corrective(reason, payload, requirements)) };
    };

    // the official scheme: cumulative base, then the voucher off-chain (or the facilitator for a
    // deposit, or a stale mirror); the channel is reserved for this call when valid
    const verified = await this.server.verifyPayment(payload, requirements);
    if (!verified.isValid) return refuse(verified.invalidReason);
    if (this.withdrawalCloses(verified.extra, raw.channelConfig.withdrawDelay)) {
      await this.cancel(payload, requirements, 'after_verify_aborted');
      return refuse(BatchSettlementReasons.withdrawalPending);
    }

    const payment: ChannelPayment = {
      operationId: req.operationId,
      payer,
      amount: requirements.amount,
      channelId,
      cumulative: maxClaimableAmount,
      kind: raw.type,
    };
    this.accepted.set(payment, { payload, requirements, authKey });
    return { kind: 'proceed', payment };
  }

  /**
   * After the operation ran once with `payment` (x402 batch-settlement: "must not update voucher
   * state until the resource handler has succeeded"): on success the payment is settled through the
   * official scheme (a voucher: the charge committed off-chain; a deposit: the deposit sent on chain
   * by the facilitator, then the charge committed) and the answer stored with its `PAYMENT-RESPONSE`
   * (the official shape: `transaction` "" for a voucher, the deposit's hash for a deposit,
   * `extra.chargedAmount`, `extra.channelState`). On failure, or when the settlement is refused
   * (a deposit that fails on chain: the operation's result is dropped, 402 with the reason), the
   * channel's reservation is cancelled, nothing is charged, and the voucher's reservation is
   * released, so the client sends the same cumulative again (x402: "client can retry the same voucher").
   */
  async complete(payment: ChannelPayment, outcome: ChannelOutcome): Promise<ChannelAnswer> {
    const a = this.accepted.get(payment);
    if (!a) throw new Error('complete: not a voucher accepted here');
    this.accepted.delete(payment);
    const inFlightKey = paymentKeys.vouchersInFlight(this.opts.keys);
    const release = () =>
      retryWhileRedisUnavailable(() =>
        releaseAuthorization(this.opts.redis, { authKey: a.authKey, inFlightKey, operationId: payment.operationId, from: ['pending'] }),
      );
    if (!outcome.ok) {
      await this.cancel(a.payload, a.requirements, 'handler_failed');
      await release();
      return { status: outcome.status, headers: { ...outcome.headers, 'Cache-Control': 'no-store' }, body: outcome.body, charged: false };
    }
    const settlement: SettleResponse = await this.server.settlePayment(a.payload, a.requirements).catch((e: unknown) => {
      this.opts.log.warn({ err: String((e as Error)?.message).slice(0, 200), channelId: payment.channelId }, 'batch-settlement settlement refused');
      return {
        success: false,
        errorReason: (e as { errorReason?: string }).errorReason ?? 'invalid_payment',
        transaction: '',
        network: a.requirements.network,
      };
    });
    if (!settlement.success) {
      // not charged (a deposit refused on chain, or the channel changed under the call): the result is dropped
      await this.cancel(a.payload, a.requirements, 'handler_failed');
      await release();
      const reason = settlement.errorReason ?? 'invalid_payment';
      return { status: 402, headers: { 'Cache-Control': 'no-store' }, body: { reason }, charged: false, refusal: reason };
    }
    const headers = { ...outcome.headers, 'PAYMENT-RESPONSE': encodePaymentResponseHeader(settlement), 'Cache-Control': 'no-store' };
    const stored: StoredResponse = { status: outcome.status ?? 200, body: outcome.body, headers };
    await retryWhileRedisUnavailable(() =>
      transitionAuthorization(this.opts.redis, {
        authKey: a.authKey,
        inFlightKey,
        operationId: payment.operationId,
        from: ['pending'],
        to: 'completed',
        nowMs: Date.now(),
        fields: { response: JSON.stringify(stored), payer: payment.payer, amount: payment.amount, tx_hash: settlement.transaction ?? '' },
      }),
    );
    return { ...stored, settlement, charged: true };
  }

  /** The 402 `PaymentRequired` as the official server enriches it for `reason` (the corrective channel state of a cumulative mismatch). */
  private async corrective(
    reason: string | undefined,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<{ corrective?: PaymentRequirements }> {
    if (reason !== BatchSettlementReasons.cumulativeAmountMismatch) return {};
    const accepts = [{ ...requirements, extra: { ...requirements.extra } }];
    const paymentRequired: PaymentRequired = { x402Version: 2, resource: { url: '', description: '', mimeType: 'application/json' }, accepts };
    await this.scheme.enrichPaymentRequiredResponse({
      requirements: accepts,
      paymentPayload: payload,
      resourceInfo: paymentRequired.resource,
      error: reason,
      paymentRequiredResponse: paymentRequired,
    });
    return { corrective: accepts[0] };
  }

  /**
   * A voucher reservation seen before. Same payload, same request → its answer (waiting while it
   * runs; the receipt without proof of being the payer); otherwise (another request, or another
   * payload with this cumulative) the official scheme refuses it with its x402 reason: the
   * cumulative is charged already (`cumulative_amount_mismatch`, corrective) or in flight (`channel_busy`).
   */
  private async resume(
    authKey: string,
    prior: AuthorizationRecord,
    req: { requestHash: string; resourceUrl: string; caller?: string },
    payloadHash: string,
    payer: `0x${string}`,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<ChannelDecision> {
    if (prior.payloadHash !== payloadHash || prior.requestHash !== req.requestHash) {
      const verified = await this.server.verifyPayment(payload, requirements);
      // valid only if the first request's reservation of the channel is gone (its process died before committing)
      if (verified.isValid) await this.cancel(payload, requirements, 'after_verify_aborted');
      const reason = verified.isValid ? BatchSettlementReasons.channelBusy : (verified.invalidReason ?? 'invalid_payment');
      return { kind: 'refused', reason, ...(await this.corrective(reason, payload, requirements)) };
    }
    try {
      // a voucher is public once claimed (and the channel's latest one goes back in a corrective 402):
      // the stored result only to its payer, as for exact; anyone else gets the receipt
      if (req.caller?.toLowerCase() === payer.toLowerCase()) return { kind: 'replay', stored: await this.replays.waitForStored(authKey) };
      await this.replays.waitForStored(authKey);
      return { kind: 'replay', stored: await this.replays.receipt(authKey, req.resourceUrl) };
    } catch (e) {
      if (e instanceof ProblemError) return { kind: 'problem', problem: e };
      throw e;
    }
  }

  /** Cancels this request's reservation of the channel (the official cancel hook: nothing charged). */
  private async cancel(payload: PaymentPayload, requirements: PaymentRequirements, reason: 'handler_failed' | 'after_verify_aborted'): Promise<void> {
    await this.server
      .createPaymentCancellationDispatcher(payload, requirements)
      .cancel({ reason })
      .catch((e: unknown) => this.opts.log.warn({ err: String((e as Error)?.message).slice(0, 200) }, 'batch-settlement cancel failed'));
  }

  /** Whether the channel's timed withdrawal (the verify result's mirrored `withdrawRequestedAt`) completes within the margin. */
  private withdrawalCloses(extra: Record<string, unknown> | undefined, withdrawDelay: number): boolean {
    const requestedAt = Number(extra?.withdrawRequestedAt ?? 0);
    if (!requestedAt) return false;
    return Date.now() / 1000 >= requestedAt + withdrawDelay - this.marginSeconds;
  }
}

/** The payload of a `batch-settlement` deposit, voucher or refund, when it has the parts read here. */
function channelPayload(payload: PaymentPayload): (ChannelPayload & { type: 'deposit' | 'voucher' }) | undefined {
  const p = payload.payload as Partial<ChannelPayload> | undefined;
  if (!p || (p.type !== 'deposit' && p.type !== 'voucher')) return undefined;
  const v = p.voucher;
  if (!v || typeof v.channelId !== 'string' || typeof v.maxClaimableAmount !== 'string' || !/^\d+$/.test(v.maxClaimableAmount)) return undefined;
  if (!p.channelConfig || typeof p.channelConfig.payer !== 'string') return undefined;
  return p as ChannelPayload & { type: 'deposit' | 'voucher' };
}
