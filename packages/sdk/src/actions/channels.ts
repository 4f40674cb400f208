/**
 * Batch-settlement channels of a client (README "Channels"): what the client knows of one, an
 * explicit top-up, and a cooperative refund (the close the official `@x402/evm` client supports; a
 * timed withdrawal is an on-chain transaction of the payer, outside the SDK). Opening and automatic
 * top-ups happen inside a paid call (`payAndRetry`, `schemePayment.ts`).
 */
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme, computeChannelId, recoverChannel, signVoucher, type BatchSettlementClientContext } from '@x402/evm/batch-settlement/client';
import { createPublicClient, http } from 'viem';
import { chooseRequirement } from '../chooseRequirement.js';
import type { GatewayContext } from '../context.js';
import { AcgError, GatewayRequestError, PaymentRequiredError, type PaymentTermsMismatchError } from '../errors.js';
import { request } from '../http.js';
import { parseJson, readPaymentRequired } from '../protocol.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '../types.js';
import { parseUsdc } from '../units.js';

/** A paid request whose 402 offers `batch-settlement`: its channel is the one (payer, payTo, receiverAuthorizer, asset) names. */
export interface ChannelRequestParameters {
  /** Path under the base URL, e.g. `/api/v1/execute`. */
  path: string;
  /** Default `POST` with a body, else `GET`. */
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Body sent as is (e.g. `JSON.stringify({capability_id, input})`). */
  body?: string;
  headers?: Record<string, string>;
  /** Names the call in errors (default the path). */
  label?: string;
}

/** What the client knows of a channel: its id (bytes32, lowercase) and the official client's record (integer USDC base units as strings). */
export interface ChannelInfo {
  channelId: `0x${string}`;
  requirement: PaymentRequirements;
  /** `chargedCumulativeAmount`: what vouchers were charged in total; `balance`: deposited and not withdrawn, as last known. Undefined: no record. */
  state: BatchSettlementClientContext | undefined;
  /** Deposited by this client object and not yet charged (its spend ledger), base units. */
  escrowBaseUnits: bigint;
}

/** Errors of the channel actions. */
export type ChannelErrorType = PaymentRequiredError | PaymentTermsMismatchError | GatewayRequestError | AcgError;

/** Sends the request unpaid and picks the 402's `batch-settlement` requirement this client can pay. */
async function probe(ctx: GatewayContext, p: ChannelRequestParameters): Promise<{ pr: PaymentRequired; requirement: PaymentRequirements }> {
  const method = p.method ?? (p.body === undefined ? 'GET' : 'POST');
  const r = await request(ctx, p.path, { method, headers: p.headers ?? {}, body: p.body });
  const label = p.label ?? p.path;
  if (r.response.status !== 402)
    throw new GatewayRequestError(`${ctx.baseUrl}${p.path}`, `Expected a 402 offering batch-settlement, got ${r.response.status}.`, {
      status: r.response.status,
    });
  const pr = readPaymentRequired(r.response.headers.get('payment-required'), parseJson(r.text));
  if (!pr) throw new GatewayRequestError(`${ctx.baseUrl}${p.path}`, 'The 402 has no readable x402 PaymentRequired.', { status: 402 });
  const { requirement } = chooseRequirement({ paymentRequired: pr, network: ctx.network, assets: ctx.assets, label, schemes: ['batch-settlement'] });
  return { pr, requirement };
}

function schemeOf(ctx: GatewayContext) {
  if (!ctx.account) throw new AcgError('Channels belong to the paying account: pass `account`.');
  const reader = ctx.rpcUrl ? createPublicClient({ transport: http(ctx.rpcUrl) }) : undefined;
  const signer = toClientEvmSigner(ctx.account, reader as never);
  return { signer };
}

/**
 * The channel a paid request would use, and what this client knows of it (its channel storage; with
 * `rpcUrl` and no record, the official client's recovery reads the on-chain balance).
 *
 * @throws {GatewayRequestError} the request did not answer a 402 @throws {PaymentTermsMismatchError} no batch-settlement offer
 */
export async function getChannel(ctx: GatewayContext, p: ChannelRequestParameters): Promise<ChannelInfo> {
  const { requirement } = await probe(ctx, p);
  const { signer } = schemeOf(ctx);
  const storage = await ctx.channels.storage();
  const config = new BatchSettlementEvmScheme(signer, { storage }).buildChannelConfig(requirement);
  const channelId = computeChannelId(config, requirement.network).toLowerCase() as `0x${string}`;
  return { channelId, requirement, state: await storage.get(channelId), escrowBaseUnits: ctx.ledger.escrowOf(channelId) };
}

/**
 * Makes the next channel payment of this client deposit `amountUsdc` (decimal USDC) more into its
 * channel, with its voucher (x402 has no deposit without a paid request). Counts towards `totalUsdc`
 * when that payment is made.
 */
export function topUpChannel(ctx: GatewayContext, p: { amountUsdc: string | number }): void {
  const amount = parseUsdc(p.amountUsdc, 'amountUsdc');
  if (amount <= 0n) throw new AcgError('amountUsdc must be above zero.');
  ctx.channels.nextTopUp = amount;
}

/** What {@link refundChannel} returns: the channel, the server's settlement of the refund (`transaction`), and the base units asked back (undefined: all that is left). */
export interface RefundChannelReturnType {
  channelId: `0x${string}`;
  settlement: SettleResponse;
  amount: bigint | undefined;
}

/**
 * A cooperative refund (scheme `batch-settlement`, refund payload): signs a voucher for exactly what
 * was charged (no new charge) with `type: "refund"` and the amount to return (default: all that is
 * not charged), and sends it with the paid request; the server (its receiverAuthorizer) has the
 * contract pay the rest back to the payer at once. Built from the official client's exports
 * (`buildChannelConfig`, `signVoucher`, its hooks update the channel storage), because the official
 * `refundChannel` probes with a GET and the gateway's paid routes are POSTs. After a 402 that
 * resynchronised the channel state it signs again once.
 *
 * @throws {PaymentRequiredError} the server refused the refund (`reason`, e.g. no balance left) @throws {AcgError} no channel record
 */
export async function refundChannel(ctx: GatewayContext, p: ChannelRequestParameters & { amountUsdc?: string | number }): Promise<RefundChannelReturnType> {
  const label = p.label ?? p.path;
  const amount = p.amountUsdc === undefined ? undefined : parseUsdc(p.amountUsdc, 'amountUsdc');
  return ctx.channels.exclusive(async () => {
    const { pr, requirement } = await probe(ctx, p);
    const { signer } = schemeOf(ctx);
    const storage = await ctx.channels.storage();
    const scheme = new BatchSettlementEvmScheme(signer, { storage });
    const http402 = new x402HTTPClient(new x402Client().register(requirement.network as `${string}:${string}`, scheme));
    const config = scheme.buildChannelConfig(requirement);
    const channelId = computeChannelId(config, requirement.network).toLowerCase() as `0x${string}`;
    for (let attempt = 0; ; attempt++) {
      let known = await storage.get(channelId);
      if (known === undefined && signer.readContract) known = await recoverChannel({ signer, storage, salt: ZERO_SALT }, requirement);
      if (known === undefined) throw new AcgError('No record of this channel: pay over it first, or pass `rpcUrl` to read it from the chain.');
      const charged = known.chargedCumulativeAmount ?? '0';
      const voucher = await signVoucher(signer, channelId, charged, requirement.network);
      const payload: PaymentPayload = {
        x402Version: 2,
        accepted: requirement,
        resource: pr.resource,
        ...(pr.extensions ? { extensions: pr.extensions } : {}),
        payload: { type: 'refund', channelConfig: config, voucher, ...(amount !== undefined ? { amount: amount.toString() } : {}) },
      };
      const method = p.method ?? (p.body === undefined ? 'GET' : 'POST');
      const r = await request(ctx, p.path, { method, headers: { ...(p.headers ?? {}), ...http402.encodePaymentSignatureHeader(payload) }, body: p.body });
      const result = await http402.processPaymentResult(payload, (n) => r.response.headers.get(n), r.response.status);
      const settlement = result.settleResponse;
      if (r.response.status === 402 || !settlement?.success) {
        if (result.recovered && attempt === 0) continue;
        const refusedPr = readPaymentRequired(r.response.headers.get('payment-required'), parseJson(r.text)) ?? pr;
        const reason = settlement?.errorReason ?? (typeof refusedPr.error === 'string' ? refusedPr.error : undefined);
        throw new PaymentRequiredError(label, refusedPr, { reason, refused: true });
      }
      const balance = BigInt(known.balance ?? '0');
      const returned = amount ?? (balance > BigInt(charged) ? balance - BigInt(charged) : 0n);
      ctx.ledger.refunded(channelId, returned);
      return { channelId, settlement, amount };
    }
  });
}

/** The official client's default channel salt (every SDK channel uses it). */
const ZERO_SALT = '0x0000000000000000000000000000000000000000000000000000000000000000' as const;
