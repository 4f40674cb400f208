/**
 * One x402 payment by scheme (README "Schemes", "Spend limits"): signs it with the official x402
 * client (`@x402/core` client + the `@x402/evm` `exact`, `upto` or `batch-settlement` client scheme)
 * and holds its spend-limit reservations until the answer says what was settled. Used by
 * `payAndRetry`; nothing here sends a request.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { toClientEvmSigner, type ClientEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  type BatchSettlementDepositStrategyContext,
  type ClientChannelStorage,
} from '@x402/evm/batch-settlement/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { createPublicClient, http, type LocalAccount } from 'viem';
import type { GatewayContext } from './context.js';
import { AcgError, SpendLimitExceededError } from './errors.js';
import type { SpendReservation } from './spend.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from './types.js';

/** How a paid answer ended, for the spend accounting. */
export type PaymentOutcome =
  /** 2xx: settled (or a voucher accepted). */
  | 'paid'
  /** Refused before settlement (402, 400, 404, 409 conflict, 422) or a replayed answer: nothing charged. */
  | 'refused'
  /** No answer, a 5xx, or charged then failed: count it all. */
  | 'charged';

/** A signed payment of one call, with its reservations. */
export interface SchemePayment {
  requirement: PaymentRequirements;
  payload: PaymentPayload;
  /** `PAYMENT-SIGNATURE` header(s) to send. */
  headers: Record<string, string>;
  /**
   * Settles the reservations from the answer (`settlement`: the decoded `PAYMENT-RESPONSE`) and, for a
   * channel, updates the channel state through the official client's hooks. Returns `recovered: true`
   * when a batch-settlement 402 resynchronised the channel state (sign again, once).
   */
  finish(
    outcome: PaymentOutcome,
    answer?: { status: number; getHeader: (name: string) => string | null; settlement?: SettleResponse },
  ): Promise<{ recovered: boolean }>;
}

/** A viem public client on `ctx.rpcUrl` (reads only), cached per URL. */
const readers = new Map<string, ReturnType<typeof createPublicClient>>();
function clientSigner(ctx: GatewayContext, account: LocalAccount): ClientEvmSigner {
  if (!ctx.rpcUrl) return toClientEvmSigner(account);
  let reader = readers.get(ctx.rpcUrl);
  if (!reader) {
    reader = createPublicClient({ transport: http(ctx.rpcUrl) });
    readers.set(ctx.rpcUrl, reader);
  }
  return toClientEvmSigner(account, reader as never);
}

function signingError(cause: unknown): AcgError {
  return new AcgError('Could not sign the x402 payment with the given account; nothing was paid.', { cause, details: (cause as Error)?.message });
}

/**
 * An `upto` payment: a Permit2 `PermitWitnessTransferFrom` for the ceiling `amount` (integer USDC base
 * units) to the proxy, witness `{to: payTo, facilitator, validAfter}`, signed with the official
 * `@x402/evm` upto client (which adds an EIP-2612 permit for Permit2 when the 402 offers
 * `eip2612GasSponsoring`, the allowance is short and `rpcUrl` lets it read the allowance). The ceiling
 * is reserved until the settlement says what was settled.
 *
 * @throws {SpendLimitExceededError} {AcgError} (signing failed; nothing reserved)
 */
export async function signUptoPayload(
  ctx: GatewayContext,
  account: LocalAccount,
  pr: PaymentRequired,
  requirement: PaymentRequirements,
): Promise<PaymentPayload> {
  const client = new x402Client().register(requirement.network as `${string}:${string}`, new UptoEvmScheme(clientSigner(ctx, account)));
  client.setSpendControls({
    maxAmountPerPayment: false,
    allowedAssets: [{ network: requirement.network as `${string}:${string}`, asset: requirement.asset, maxAmountPerPayment: requirement.amount }],
  });
  try {
    return await client.createPaymentPayload({ ...pr, accepts: [requirement] });
  } catch (cause) {
    throw signingError(cause);
  }
}

/** Reservation-settling for `exact` and `upto`: all of it, or what `PAYMENT-RESPONSE` says was settled (never above the reservation). */
export function settleReservation(reservation: SpendReservation, outcome: PaymentOutcome, settlement: SettleResponse | undefined, scheme: string): void {
  if (outcome === 'refused') {
    reservation.release();
  } else if (outcome === 'paid' && scheme === 'upto') {
    const settled = settlement?.success && typeof settlement.amount === 'string' && /^\d+$/.test(settlement.amount) ? BigInt(settlement.amount) : undefined;
    reservation.commit(settled);
  } else {
    reservation.commit();
  }
}

/** The official batch-settlement client scheme over this client's channel storage, sizing deposits with `strategy`. */
function batchScheme(
  ctx: GatewayContext,
  signer: ClientEvmSigner,
  storage: ClientChannelStorage,
  strategy?: (c: BatchSettlementDepositStrategyContext) => string,
): BatchSettlementEvmScheme {
  return new BatchSettlementEvmScheme(signer, { storage, ...(strategy ? { depositStrategy: strategy } : {}), ...(ctx.rpcUrl ? { rpcUrl: ctx.rpcUrl } : {}) });
}

/**
 * A `batch-settlement` payment, signed with the official `@x402/evm` batch-settlement client over the
 * client's channel storage: a voucher for the cumulative amount (charged so far + this call's
 * `amount`), with an ERC-3009 deposit when the channel has none or too little (opening / automatic
 * top-up), or when `topUpChannel` asked for one. Must run inside `ctx.channels.exclusive`.
 *
 * Spend limits: a deposit is reserved against the total limit before it is signed (made smaller to
 * fit when the voucher still fits: `channelDepositUsdc`, else the 402's `minDeposit`, else 5x the
 * price), and moved into the channel's escrow once accepted; the voucher's increment is checked
 * against the per-call limit and counted as spent for what the server charged
 * (`PAYMENT-RESPONSE` `extra.chargedAmount`).
 *
 * @throws {SpendLimitExceededError} the deposit does not fit `totalUsdc` (nothing signed)
 * @throws {AcgError} signing failed (nothing reserved)
 */
export async function prepareBatchPayment(
  ctx: GatewayContext,
  account: LocalAccount,
  pr: PaymentRequired,
  requirement: PaymentRequirements,
  label: string,
): Promise<SchemePayment> {
  const storage = await ctx.channels.storage();
  const signer = clientSigner(ctx, account);
  const amount = BigInt(requirement.amount);
  let deposit: SpendReservation | undefined;
  let depositError: unknown;
  const strategy = (c: BatchSettlementDepositStrategyContext): string => {
    const minimum = BigInt(c.minimumDepositAmount);
    let size = ctx.channels.depositBaseUnits ?? BigInt(c.depositAmount);
    if (size < minimum) size = minimum;
    const room = ctx.ledger.remainingTotal();
    if (room !== undefined && size > room && room >= minimum) size = room; // a smaller deposit that still fits
    try {
      deposit = ctx.ledger.reserveDeposit(c.channelId, size, label);
    } catch (e) {
      depositError = e;
      throw e;
    }
    return size.toString();
  };
  const scheme = batchScheme(ctx, signer, storage, strategy);
  let payload: PaymentPayload;
  try {
    const topUp = ctx.channels.nextTopUp;
    if (topUp !== undefined) {
      // an explicit top-up: this payment's voucher goes with a deposit of `topUp`, built with the official helper
      const config = scheme.buildChannelConfig(requirement);
      const channelId = computeChannelId(config, requirement.network);
      const known = await storage.get(channelId.toLowerCase());
      const maxClaimable = (BigInt(known?.chargedCumulativeAmount ?? '0') + amount).toString();
      deposit = ctx.ledger.reserveDeposit(channelId, topUp, label);
      ctx.channels.nextTopUp = undefined;
      const partial = await createBatchSettlementEIP3009DepositPayload(signer, 2, requirement, config, topUp.toString(), maxClaimable);
      payload = {
        ...partial,
        x402Version: 2,
        accepted: requirement,
        resource: pr.resource,
        ...(pr.extensions ? { extensions: pr.extensions } : {}),
      } as PaymentPayload;
    } else {
      const client = new x402Client().register(requirement.network as `${string}:${string}`, scheme);
      // the deposit is sized and limited by the strategy above (the SDK's spend limits); the asset is pinned
      client.setSpendControls({
        maxAmountPerPayment: false,
        allowedAssets: [{ network: requirement.network as `${string}:${string}`, asset: requirement.asset }],
      });
      payload = await client.createPaymentPayload({ ...pr, accepts: [requirement] });
    }
  } catch (cause) {
    (deposit as SpendReservation | undefined)?.release();
    if (depositError instanceof SpendLimitExceededError) throw depositError;
    if (cause instanceof SpendLimitExceededError) throw cause;
    throw signingError(cause);
  }
  const inner = payload.payload as { type?: string; voucher?: { channelId?: string } };
  const channelId = String(inner.voucher?.channelId ?? '');
  const isDeposit = inner.type === 'deposit';
  const depositHeld = deposit as SpendReservation | undefined;
  // a voucher-only payment takes its increment from the channel's escrow now; a deposit's voucher once the deposit is in
  let voucher: SpendReservation | undefined;
  if (!isDeposit) {
    try {
      voucher = ctx.ledger.reserveVoucher(channelId, amount, label);
    } catch (e) {
      depositHeld?.release();
      throw e;
    }
  }
  const httpClient = new x402HTTPClient(new x402Client().register(requirement.network as `${string}:${string}`, scheme));
  return {
    requirement,
    payload,
    headers: httpClient.encodePaymentSignatureHeader(payload),
    finish: async (outcome, answer) => {
      if (outcome === 'refused') {
        depositHeld?.release();
        voucher?.release();
      } else {
        depositHeld?.commit(); // into the channel's escrow
        // limits were checked before signing (per call in chooseRequirement, the deposit against the total): the escrow now covers it
        voucher ??= ctx.ledger.reserveVoucher(channelId, amount, label);
        const extra = answer?.settlement?.extra as { chargedAmount?: unknown } | undefined;
        const charged =
          outcome === 'paid' && typeof extra?.chargedAmount === 'string' && /^\d+$/.test(extra.chargedAmount) ? BigInt(extra.chargedAmount) : undefined;
        voucher.commit(charged);
      }
      if (!answer) return { recovered: false };
      // the official client's hooks: the channel state after a settle, or a corrective 402's resync
      const result = await httpClient.processPaymentResult(payload, answer.getHeader, answer.status);
      return { recovered: result.recovered };
    },
  };
}
