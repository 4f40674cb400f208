import { recoverTypedDataSigner } from '@acg/secp256k1';
import { trackSettlement } from '@acg/treasury';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BATCH_SETTLEMENT_ADDRESS, voucherTypes } from '@x402/evm';
import { BatchSettlementEvmScheme, type ChannelStorage } from '@x402/evm/batch-settlement/server';
import { encodeAbiParameters, getAddress, isAddressEqual, keccak256, pad, toHex } from 'viem';
import { signedTransaction } from './signedTransaction.js';
import type { AuthorizeResult, PaymentScheme, PaymentSchemeFactory, SchemeContext, SettledOnChain } from './strategy.js';

/** The x402 scheme name (`PaymentRequirements.scheme`). */
export const BATCH_SETTLEMENT = 'batch-settlement';

/**
 * x402 `batch-settlement` EVM reasons this gateway answers with (the values @x402/evm's server and
 * facilitator use; x402 specs/schemes/batch-settlement/scheme_batch_settlement_evm.md), plus
 * `withdrawalPending`, the gateway's own: x402 has no code for a channel whose timed withdrawal is
 * about to complete (packages/payments README "batch-settlement").
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
  /** The voucher's EIP-712 signature is not the payer authorizer's. */
  voucherSignature: 'invalid_batch_settlement_evm_voucher_signature',
  /** A payload type a paid call does not take (a `refund` is not a paid call). */
  payloadType: 'invalid_batch_settlement_evm_payload_type',
  /** The channel's timed withdrawal completes within the margin: no more vouchers on it. */
  withdrawalPending: 'invalid_batch_settlement_evm_withdrawal_pending',
} as const;

/**
 * Seconds before a channel's timed withdrawal can complete (`withdrawRequestedAt + withdrawDelay`)
 * from which its vouchers are refused (default 300): room for the worker's next claim run and its
 * confirmation, so every voucher accepted is claimed before the payer can take the escrow back.
 */
export const DEFAULT_WITHDRAWAL_MARGIN_SECONDS = 300;

/**
 * How long a call holds its channel (the official scheme's `pendingRequest`), seconds
 * (`PaymentRequirements.maxTimeoutSeconds`, clamped by @x402/evm to 5 s – 10 min): a process that
 * dies while running a call blocks the channel this long at most.
 */
export const DEFAULT_VOUCHER_TIMEOUT_SECONDS = 60;

/** x402's minimum `withdrawDelay`, seconds (15 min), the one the 402 asks for by default. */
export const DEFAULT_WITHDRAW_DELAY_SECONDS = 900;

/** Options of {@link batchSettlementScheme}. */
export interface BatchSettlementSchemeOptions {
  /** The channels (official `ChannelStorage`): `createChannelStorage` of `@acg/channels` (Redis, every gateway and the worker), or `InMemoryChannelStorage` in one process. */
  storage: ChannelStorage;
  /** `ChannelConfig.withdrawDelay` the 402 asks for, seconds (default {@link DEFAULT_WITHDRAW_DELAY_SECONDS}). */
  withdrawDelaySeconds?: number;
  /** See {@link DEFAULT_WITHDRAWAL_MARGIN_SECONDS}. */
  withdrawalMarginSeconds?: number;
  /** See {@link DEFAULT_VOUCHER_TIMEOUT_SECONDS}. */
  voucherTimeoutSeconds?: number;
  /**
   * How long the channel's mirrored on-chain state (balance, claimed, withdrawal) is trusted to check
   * a voucher locally, ms; after it a voucher is verified by the facilitator (one chain read) and the
   * mirror refreshed. Default @x402/evm's: a third of the withdrawal delay, 30 s – 5 min.
   */
  onchainStateTtlMs?: number;
}

/** The parts of a `deposit` or `voucher` payload read here (x402 batch-settlement EVM payload). */
interface ChannelPayload {
  type: 'deposit' | 'voucher';
  channelConfig: { payer: string; payerAuthorizer: string; withdrawDelay: number };
  voucher: { channelId: string; maxClaimableAmount: string; signature: string };
}

/** The `batch-settlement` strategy for `PaywallOptions.schemes` (see {@link BatchSettlementScheme}). */
export function batchSettlementScheme(o: BatchSettlementSchemeOptions): PaymentSchemeFactory {
  return (ctx) => new BatchSettlementScheme(ctx, o);
}

/**
 * x402 `batch-settlement` behind the one paywall (packages/payments README "batch-settlement",
 * docs/decisions.md "batch-settlement"): the official `BatchSettlementEvmScheme` server, unchanged,
 * with the channels in a shared {@link ChannelStorage}, settled `deferred` (x402: "must not update
 * voucher state until the resource handler has succeeded"):
 *
 * - verify (the paywall's, through x402's resource server and so the official scheme's hooks): the
 *   cumulative base (`maxClaimableAmount` = the channel's `chargedCumulativeAmount` + the price), then
 *   a `voucher` off-chain (EIP-712 signature, mirrored balance and claimed total; no chain round trip
 *   while the mirror is fresh) or a `deposit` by the facilitator; a valid one reserves the channel for
 *   this call; a channel whose withdrawal completes within the margin is refused here;
 * - the paywall reserves the voucher as (payer, nonce) with nonce = the cumulative amount and the
 *   channel id as its nonce space: a resend never runs twice, a reuse for another request or a
 *   reordered voucher is refused with the official reason;
 * - `complete` settles the price after a successful run (a voucher: the charge committed in the
 *   channel record, off-chain; a deposit: sent on chain, then the charge committed); a failed run
 *   settles nothing: {@link unsettled} cancels the channel's reservation and the paywall releases the
 *   voucher, so the client sends the same one again.
 */
export class BatchSettlementScheme implements PaymentScheme {
  readonly scheme = BATCH_SETTLEMENT;
  readonly settles = 'deferred' as const;
  /** The official scheme's verify marks a pending request on the channel: a payment seen before is not verified again. */
  readonly verifyHolds = true;
  readonly server: BatchSettlementEvmScheme;
  readonly reasons = {
    nonceUsed: BatchSettlementReasons.cumulativeAmountMismatch,
    invalidSignature: BatchSettlementReasons.voucherSignature,
    // a voucher resent for another request (another body): refused as the official scheme refuses a reused cumulative
    reused: BatchSettlementReasons.cumulativeAmountMismatch,
    busy: BatchSettlementReasons.channelBusy,
  };
  private readonly withdrawDelay: number;
  private readonly timeoutSeconds: number;
  private readonly cache = new Map<bigint, PaymentRequirements>();

  constructor(
    private readonly ctx: SchemeContext,
    o: BatchSettlementSchemeOptions,
  ) {
    this.withdrawDelay = o.withdrawDelaySeconds ?? DEFAULT_WITHDRAW_DELAY_SECONDS;
    this.timeoutSeconds = o.voucherTimeoutSeconds ?? DEFAULT_VOUCHER_TIMEOUT_SECONDS;
    this.server = new BatchSettlementEvmScheme(ctx.terms.payTo, {
      storage: o.storage,
      withdrawDelay: this.withdrawDelay,
      ...(o.onchainStateTtlMs !== undefined ? { onchainStateTtlMs: o.onchainStateTtlMs } : {}),
    });
    const margin = o.withdrawalMarginSeconds ?? DEFAULT_WITHDRAWAL_MARGIN_SECONDS;
    // the withdrawal margin, on the verify result (the mirrored or freshly read channel state); an
    // abort here cancels the channel's reservation (x402's `after_verify_aborted`)
    ctx.server.onAfterVerify(async ({ paymentPayload, requirements, result }) => {
      if (requirements.scheme !== BATCH_SETTLEMENT || !result.isValid) return;
      const requestedAt = Number(result.extra?.withdrawRequestedAt ?? 0);
      const delay = Number((paymentPayload.payload as Partial<ChannelPayload>).channelConfig?.withdrawDelay ?? this.withdrawDelay);
      if (requestedAt > 0 && Date.now() / 1000 >= requestedAt + delay - margin) {
        return { abort: true, reason: BatchSettlementReasons.withdrawalPending, message: 'The channel is being withdrawn' };
      }
    });
  }

  /** The channel storage (the worker's claims read it). */
  get storage(): ChannelStorage {
    return this.server.getStorage();
  }

  /**
   * The PaymentRequirements for `price` (integer USDC base units), the shape the official server
   * builds: the terms, `maxTimeoutSeconds` {@link DEFAULT_VOUCHER_TIMEOUT_SECONDS}, and in `extra` the
   * facilitator's `receiverAuthorizer`, `withdrawDelay` and the official `minDeposit` hint (10 calls'
   * worth). Undefined while the facilitator advertises no `receiverAuthorizer` (then not offered).
   */
  requirements(price: bigint): PaymentRequirements | undefined {
    const hit = this.cache.get(price);
    if (hit) return hit;
    const authorizer = this.ctx.facilitatorExtra(BATCH_SETTLEMENT)?.receiverAuthorizer;
    if (typeof authorizer !== 'string') return undefined;
    const t = this.ctx.terms;
    const r: PaymentRequirements = {
      scheme: BATCH_SETTLEMENT,
      network: t.network,
      asset: t.asset,
      amount: price.toString(),
      payTo: t.payTo,
      maxTimeoutSeconds: this.timeoutSeconds,
      extra: {
        name: t.assetName,
        version: t.assetVersion,
        receiverAuthorizer: getAddress(authorizer),
        withdrawDelay: this.withdrawDelay,
        minDeposit: (price * 10n).toString(),
      },
    };
    if (this.cache.size >= 512) this.cache.clear();
    this.cache.set(price, r);
    return r;
  }

  /** The payer (`channelConfig.payer`) and the voucher as a nonce: its cumulative amount (32 bytes) in the channel's space. A `refund` payload is refused here. */
  authorize(payload: PaymentPayload): AuthorizeResult {
    const p = channelPayload(payload);
    if (!p) return { ok: false, reason: BatchSettlementReasons.payloadType };
    return {
      ok: true,
      auth: {
        payer: getAddress(p.channelConfig.payer),
        nonce: pad(toHex(BigInt(p.voucher.maxClaimableAmount)), { size: 32 }),
        nonceSpace: p.voucher.channelId.toLowerCase() as `0x${string}`,
      },
    };
  }

  /** Whether the channel's live pending request (the official scheme's hold) is for this voucher's cumulative amount: a copy of it is being processed. */
  async heldByCopy(payload: PaymentPayload): Promise<boolean> {
    const p = channelPayload(payload);
    const pending = p && (await this.storage.get(p.voucher.channelId))?.pendingRequest;
    return !!pending && pending.expiresAt > Date.now() && BigInt(pending.signedMaxClaimable) === BigInt(p.voucher.maxClaimableAmount);
  }

  /** {@link channelVoucher}. */
  voucherOf(payload: PaymentPayload): ReturnType<typeof channelVoucher> {
    return channelVoucher(payload);
  }

  /** Whether the voucher's EIP-712 signature recovers to the channel's payer authorizer, which signs for the payer (local; false for an EIP-1271 payer). */
  signedByPayer(payload: PaymentPayload, matched: PaymentRequirements): boolean {
    try {
      const p = channelPayload(payload);
      const chainId = Number(matched.network.split(':')[1]);
      if (!p || !/^0x[0-9a-fA-F]{130}$/.test(p.voucher.signature) || !Number.isSafeInteger(chainId)) return false;
      if (/^0x0{40}$/i.test(p.channelConfig.payerAuthorizer)) return false;
      const signer = recoverTypedDataSigner(
        {
          domain: { name: 'x402 Batch Settlement', version: '1', chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
          types: voucherTypes,
          primaryType: 'Voucher',
          message: { channelId: p.voucher.channelId as `0x${string}`, maxClaimableAmount: BigInt(p.voucher.maxClaimableAmount) },
        },
        p.voucher.signature as `0x${string}`,
      );
      return isAddressEqual(signer, getAddress(p.channelConfig.payerAuthorizer));
    } catch {
      return false;
    }
  }

  /**
   * A deferred payment settled nothing (a failed run): the channel's reservation for this call is
   * cancelled through the official cancel hook, so the channel takes the same voucher again.
   */
  async unsettled(payload: PaymentPayload, matched: PaymentRequirements): Promise<void> {
    await this.ctx.server
      .createPaymentCancellationDispatcher(payload, matched)
      .cancel({ reason: 'handler_failed' })
      .catch((e: unknown) => this.ctx.log.warn({ err: String((e as Error)?.message).slice(0, 200) }, 'batch-settlement cancel failed'));
  }

  /**
   * The corrective requirements of a 402 refusing `payload` with `reason` (x402: a cumulative mismatch
   * carries the channel's `channelState` and `voucherState`, from which the official client resyncs),
   * as the official scheme writes them into the batch-settlement entry of `accepts` (in place).
   * Resolves `true` when it wrote them (the 402 is corrective: its `error` is then the code, which the
   * official client's recovery compares).
   */
  async enrichRefusal(reason: string, payload: PaymentPayload, accepts: PaymentRequirements[]): Promise<boolean> {
    if (reason !== BatchSettlementReasons.cumulativeAmountMismatch) return false;
    const i = accepts.findIndex((a) => a.scheme === BATCH_SETTLEMENT);
    if (i < 0) return false;
    accepts[i] = { ...accepts[i], extra: { ...accepts[i].extra } };
    const resource = { url: '', description: '', mimeType: 'application/json' };
    await this.server.enrichPaymentRequiredResponse({
      requirements: accepts,
      paymentPayload: payload,
      resourceInfo: resource,
      error: reason,
      paymentRequiredResponse: { x402Version: 2, resource, accepts },
    });
    return true;
  }

  /**
   * A voucher is off chain: nothing to watch. A `deposit` (through the ERC-3009 collector) the facilitator
   * sent is tracked until final like an `exact` settlement (`trackSettlement` of `@acg/treasury`,
   * `channelDeposit`: channel, payer, the authorization's nonce `keccak256(abi.encode(channelId, salt))`,
   * `validBefore`, the deposit and the call's charge; docs/decisions.md "Confirmations and reorgs"): reorged
   * out, the facilitator's signed transaction is broadcast again while the authorization is valid, and the
   * channel is marked unpaid once it cannot be. A Permit2 deposit is logged and not tracked.
   */
  async track(s: SettledOnChain): Promise<void> {
    const p = s.payload.payload as Partial<ChannelPayload> & {
      deposit?: { amount?: string; authorization?: { erc3009Authorization?: { validBefore?: string; salt?: string } } };
    };
    if (p?.type !== 'deposit' || !/^0x[0-9a-fA-F]{64}$/.test(s.txHash) || !p.voucher || !p.channelConfig) return;
    const auth = p.deposit?.authorization?.erc3009Authorization;
    if (!auth?.validBefore || auth.salt === undefined || !p.deposit?.amount) {
      this.ctx.log.warn({ operationId: s.operationId, tx_hash: s.txHash }, 'a channel deposit without an ERC-3009 authorization is not tracked until final');
      return;
    }
    const channelId = p.voucher.channelId.toLowerCase() as `0x${string}`;
    // the facilitator's signed bytes, kept now: a reorg before the worker's first finality round would
    // otherwise leave nothing to broadcast again (nobody else may resubmit a deposit) until it is unpaid
    const raw = await signedTransaction(this.ctx.publicClient, s.txHash as `0x${string}`);
    await trackSettlement(this.ctx.redis, this.ctx.keys, {
      operationId: s.operationId,
      txHash: s.txHash,
      authKey: s.ref.authKey,
      asset: s.ref.asset,
      ...(raw ? { raw } : {}),
      channelDeposit: {
        channelId,
        payer: getAddress(p.channelConfig.payer),
        nonce: keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, BigInt(auth.salt)])),
        validBefore: String(auth.validBefore),
        deposit: String(p.deposit.amount),
        amount: s.amount,
      },
    });
  }

  /**
   * Never "used" for reconciliation: a voucher is charged only in the channel record, so a reservation
   * orphaned by a crash is released (a charge committed before the crash stays, and the same
   * cumulative then fails verify: never charged twice).
   */
  async nonceUsed(): Promise<boolean> {
    return false;
  }

  async settlementTx(): Promise<`0x${string}` | undefined> {
    return undefined;
  }

  async trackReconciled(): Promise<void> {}
}

/**
 * The payer, channel (lower-case `bytes32`) and signed cumulative amount (`maxClaimableAmount`, integer
 * string, base units) of a `batch-settlement` deposit or voucher payload; undefined for anything else.
 */
export function channelVoucher(payload: PaymentPayload): { payer: `0x${string}`; channelId: `0x${string}`; cumulative: string } | undefined {
  const p = channelPayload(payload);
  if (!p) return undefined;
  return {
    payer: p.channelConfig.payer.toLowerCase() as `0x${string}`,
    channelId: p.voucher.channelId.toLowerCase() as `0x${string}`,
    cumulative: BigInt(p.voucher.maxClaimableAmount).toString(),
  };
}

/** The payload of a `batch-settlement` deposit or voucher, when it has the parts read here. */
function channelPayload(payload: PaymentPayload): ChannelPayload | undefined {
  const p = payload.payload as Partial<ChannelPayload> | undefined;
  if (!p || (p.type !== 'deposit' && p.type !== 'voucher')) return undefined;
  const v = p.voucher;
  if (!v || typeof v.channelId !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(v.channelId)) return undefined;
  if (typeof v.maxClaimableAmount !== 'string' || !/^\d{1,39}$/.test(v.maxClaimableAmount) || typeof v.signature !== 'string') return undefined;
  const c = p.channelConfig;
  if (!c || typeof c.payer !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(c.payer) || typeof c.payerAuthorizer !== 'string') return undefined;
  return p as ChannelPayload;
}
