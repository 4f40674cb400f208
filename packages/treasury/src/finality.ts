import { randomUUID } from 'node:crypto';
import { releaseLease, takeLease, type RedisKeys } from '@acg/redis';
import { eip3009ABI } from '@x402/evm';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { encodeFunctionData, parseSignature, parseTransaction, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { treasuryKeys } from './commands/keys.js';
import { AUTHORIZATION_USED, authorizationUsed, permit2NonceUsed, type Eip3009Authorization } from './authorization.js';
import type { CreditReversal } from './reversals.js';
import { receiptOf } from './chainSender.js';
import { conflictAnswer } from './storedAnswer.js';
import { refundTransferData } from './refundTag.js';
import { storedTransferRecord } from './transferRecord.js';
import { TransferWouldRevertError, type TreasurySender } from './treasury.js';

/**
 * Outgoing transfers tracked until final (issue 33 item 3; docs/decisions.md "Confirmations and
 * reorgs"): the settlement of each paid call, each refund and each provider payout. A transfer is
 * final once its block is at or below the chain's `finalized` (or `safe`) block, or `depth` blocks
 * under the head. Until then every round reads its receipt: gone (its block was reorged out) → it
 * is sent again (see {@link TransferFinality.check}).
 */
export type TrackedKind = 'settlement' | 'refund' | 'payout';

/**
 * When a block counts as final: `{ depth }` blocks under the head (the head itself is depth 0), or
 * the chain's own `safe` / `finalized` block tag (`eth_getBlockByNumber`). Default `finalized`.
 */
export type FinalityRule = { depth: number } | { tag: 'safe' | 'finalized' };

/**
 * A tracked transfer as stored (`treasuryKeys.finality`). `status`: `settled` (a settlement mined,
 * not final), `sent` (a refund or payout mined, not final), `final`, or `unpaid` (a settlement
 * reorged out whose authorization expired before it could be resubmitted).
 */
export interface TrackedTransfer {
  kind: TrackedKind;
  id: string;
  status: 'settled' | 'sent' | 'final' | 'unpaid';
  /** the transaction currently expected on chain (updated when re-sent) */
  tx_hash: Hex;
  /** integer string, USDC base units */
  amount: string;
  /** how many times it was sent again after a reorg */
  resent: number;
}

/**
 * A settlement to track: the paid call's operation, its reservation, and either the signed EIP-3009
 * authorization (`exact`: resubmitted by the treasury after a reorg) or the Permit2 permit an
 * `upto` settlement used (`permit2`: only its facilitator may settle it, so after a reorg only the
 * facilitator's own signed transaction is broadcast again).
 */
export type TrackedSettlement = {
  operationId: string;
  txHash: Hex;
  /** the reservation (`treasuryKeys.authorization`) whose stored answer is refused if the payment is lost */
  authKey: string;
  asset: Hex;
  /**
   * The settlement's signed transaction (`eth_getRawTransactionByHash`) and its signer, when the caller
   * has them already: kept to broadcast again if a reorg takes it out before a finality round saw it (a
   * round keeps them otherwise). Needed where nobody else can resubmit: a channel deposit, an `upto` settlement.
   */
  raw?: { tx: Hex; from: Hex };
} & (
  | {
      authorization: Eip3009Authorization;
      /** the payer's signature over the authorization (65-byte EOA signature, or bytes for a smart wallet) */
      signature: Hex;
    }
  | { permit2: Permit2Settlement }
  | { channelDeposit: ChannelDepositSettlement }
);

/**
 * An x402 `batch-settlement` channel deposit the facilitator sent (`deposit` through the ERC-3009 deposit
 * collector: the token's `receiveWithAuthorization` from the payer), as tracked until final
 * (docs/decisions.md "Confirmations and reorgs"). Reorged out, the facilitator's own signed transaction
 * is broadcast again while the authorization is valid; once it expired unused the call is `unpaid` and the
 * channel reported to `onChannelUnpaid`.
 */
export interface ChannelDepositSettlement {
  /** the channel, `bytes32` */
  channelId: Hex;
  /** the channel's payer: the authorizer of the ERC-3009 authorization */
  payer: Hex;
  /** the authorization's nonce, `bytes32` (x402: `keccak256(abi.encode(channelId, salt))`) */
  nonce: Hex;
  /** integer string, unix seconds: from then on the authorization can no longer be used */
  validBefore: string;
  /** integer string, USDC base units: the deposit */
  deposit: string;
  /** integer string, USDC base units: what the call that carried the deposit was charged */
  amount: string;
}

/** An x402 `upto` settlement through Permit2 (`x402UptoPermit2Proxy.settle`), as tracked until final. */
export interface Permit2Settlement {
  owner: Hex;
  /** the Permit2 unordered nonce, uint256 as `0x` + 64 hex digits */
  nonce: Hex;
  /** integer string, unix seconds: after it the permit can no longer be settled */
  deadline: string;
  /** integer string, USDC base units: the amount settled (at most the permitted ceiling) */
  amount: string;
}

/** A treasury transfer to track: a refund (`id` = operation id) or a payout (`id` = payout id), whose record (`recordKey`) holds its signed transaction. */
export interface TrackedTreasuryTransfer {
  kind: 'refund' | 'payout';
  id: string;
  txHash: Hex;
  to: Hex;
  /** integer string, USDC base units */
  amount: string;
  /** the refund or payout hash that holds `raw_tx`, `tx_hash`, `nonce` (its `TransferRecord`); `finality: final` is written there once final */
  recordKey: string;
  /** calldata of the asset call when it is not a plain `transfer(to, amount)` (a payout's tagged transfer), used when it must be signed anew */
  data?: Hex;
}

/**
 * Starts tracking a settlement (called by the paywall as soon as it settled). Durable before it
 * resolves; idempotent.
 */
export async function trackSettlement(redis: Redis, keys: RedisKeys, s: TrackedSettlement): Promise<void> {
  const key = treasuryKeys.finality(keys, 'settlement', s.operationId);
  await redis
    .multi()
    .hset(key, {
      kind: 'settlement',
      id: s.operationId,
      status: 'settled',
      tx_hash: s.txHash,
      auth_key: s.authKey,
      asset: s.asset,
      resent: '0',
      ...(s.raw ? { raw_tx: s.raw.tx, raw_from: s.raw.from } : {}),
      ...('permit2' in s
        ? { method: 'permit2', amount: s.permit2.amount, permit2: JSON.stringify(s.permit2) }
        : 'channelDeposit' in s
          ? { method: 'channel_deposit', amount: s.channelDeposit.amount, channel_deposit: JSON.stringify(s.channelDeposit) }
          : { amount: s.authorization.value, authorization: JSON.stringify(s.authorization), signature: s.signature }),
    })
    .zadd(treasuryKeys.finalityOpen(keys), Date.now(), key)
    .exec();
}

/** Starts tracking a refund or payout once its transfer is mined (the refund worker and the payout pass call it). Idempotent. */
export async function trackTreasuryTransfer(redis: Redis, keys: RedisKeys, t: TrackedTreasuryTransfer): Promise<void> {
  const key = treasuryKeys.finality(keys, t.kind, t.id);
  if (await redis.exists(key)) return; // tracked already (perhaps re-sent or final since)
  await redis
    .multi()
    .hset(key, {
      kind: t.kind,
      id: t.id,
      status: 'sent',
      tx_hash: t.txHash,
      amount: t.amount,
      to: t.to,
      record_key: t.recordKey,
      ...(t.data ? { data: t.data } : {}),
    })
    .hset(key, 'resent', '0')
    .zadd(treasuryKeys.finalityOpen(keys), Date.now(), key)
    .exec();
}

/** The tracked transfer of `kind` `id`, or undefined when it is not tracked (e.g. before this feature, or no payment). */
export async function trackedTransfer(redis: Redis, keys: RedisKeys, kind: TrackedKind, id: string): Promise<TrackedTransfer | undefined> {
  const h = await redis.hgetall(treasuryKeys.finality(keys, kind, id));
  if (!h.kind) return undefined;
  return {
    kind: h.kind as TrackedKind,
    id: h.id,
    status: h.status as TrackedTransfer['status'],
    tx_hash: h.tx_hash as Hex,
    amount: h.amount,
    resent: Number(h.resent ?? 0),
  };
}

/**
 * The settlement of a paid operation as the execution record shows it (`payment.status`,
 * `payment.tx_hash`): `settled` until final, `final`, or `unpaid`; undefined when it is not tracked.
 */
export async function settlementState(
  redis: Redis,
  keys: RedisKeys,
  operationId: string,
): Promise<{ status: 'settled' | 'final' | 'unpaid'; tx_hash: Hex } | undefined> {
  const t = await trackedTransfer(redis, keys, 'settlement', operationId);
  if (!t) return undefined;
  return { status: t.status === 'final' || t.status === 'unpaid' ? t.status : 'settled', tx_hash: t.tx_hash };
}

/**
 * How long a tracked transfer is kept once `final` or `unpaid`, seconds: 30 days, as long as the
 * execution record that shows its status (an open one never expires).
 */
export const CLOSED_RETENTION_SECONDS = 30 * 24 * 3600;

/** What one {@link TransferFinality.check} round did, by `<kind>:<id>`. */
export interface FinalityRound {
  /** the block at or below which a transfer counts as final */
  finalBlock: bigint;
  final: string[];
  /** reorged out and sent again (same signed transaction, a re-signed one, or the settlement's authorization resubmitted) */
  resent: string[];
  /** a settlement found on chain in another transaction (someone resubmitted its authorization) */
  moved: string[];
  /** settlements lost beyond recovery (authorization expired): marked unpaid */
  unpaid: string[];
}

/** What a {@link TransferFinality} needs. */
export interface TransferFinalityOptions {
  redis: Redis;
  keys: RedisKeys;
  /** reads the payment chain */
  publicClient: PublicClient;
  /** sends refunds and payouts again, and resubmits a settlement's authorization (the treasury pays the gas); without it nothing is re-sent */
  sender?: TreasurySender;
  /** when a block is final (default `{ tag: 'finalized' }`) */
  rule?: FinalityRule;
  /** reverses what an unpaid settlement's operation credited (a provider's share) */
  reversals?: CreditReversal;
  log: Logger;
  /** tracked transfers looked at per round (default 500) */
  batch?: number;
  /** how many rounds a rebroadcast settlement transaction may wait before its authorization is resubmitted by the treasury (default 3) */
  rebroadcastRounds?: number;
  /**
   * Called when a reorged settlement is on chain again in another transaction (resubmitted by someone,
   * or by the treasury), with its operation id and the new hash: records that name the payment's
   * transaction follow it (the worker: the provider ledger entry's `payment_tx_hash`, which a dispute
   * refund's tag names). Errors are the round's.
   */
  onSettlementMoved?: (p: { operationId: string; txHash: Hex }) => Promise<void>;
  /**
   * Called when a channel deposit reorged out can no longer be put back (its authorization expired
   * unused), before its call is marked `unpaid`: the worker marks the channel unpaid in the channel
   * storage (the gateway then refuses its vouchers) and reports its accepted-but-unclaimed charges
   * (`markChannelUnpaid` of `@acg/channels`). Must be idempotent (called again until the call is marked);
   * errors are the round's.
   */
  onChannelUnpaid?: (p: { operationId: string; channelId: Hex; payer: Hex; deposit: string }) => Promise<void>;
}

/**
 * Watches every tracked outgoing transfer until it is final; one {@link check} per new block
 * ({@link startTransferFinality}). Its rules (docs/decisions.md "Confirmations and reorgs"):
 * - receipt in a block at or below the final block → `final` (a refund's or payout's record gets
 *   `finality: final`), no longer tracked;
 * - receipt above it → still waiting (block remembered);
 * - no receipt: the block was reorged out. A refund or payout is handed to
 *   `TreasurySender.transferOnce` with its own record: the same signed transaction is broadcast
 *   again, or, when its nonce was taken by another transaction meanwhile, re-signed (the record's
 *   `tx_hash`, shown to payer and provider, follows). A settlement: the token is asked whether the
 *   authorization is used (someone resubmitted it: the new transaction is tracked); if not, the
 *   facilitator's own signed transaction is broadcast again while its nonce is free (read from the
 *   node when the settlement was first seen), else the signed authorization is resubmitted as
 *   `transferWithAuthorization` by the treasury, as long as the chain's time is before its
 *   `validBefore`; past it the settlement is lost: `unpaid` (the credit is reversed and the stored
 *   answer replaced by a 409 `payment_reversed`, so a resend no longer returns the result).
 */
export class TransferFinality {
  constructor(private readonly o: TransferFinalityOptions) {}

  /** One round over the tracked transfers (run under the finality lease by {@link startTransferFinality}). RPC failures skip a transfer until the next round. */
  async check(): Promise<FinalityRound> {
    const { redis, keys, publicClient } = this.o;
    const finalBlock = await this.finalBlock();
    const round: FinalityRound = { finalBlock, final: [], resent: [], moved: [], unpaid: [] };
    const open = await redis.zrange(treasuryKeys.finalityOpen(keys), '0', String((this.o.batch ?? 500) - 1));
    for (const key of open) {
      const h = await redis.hgetall(key);
      if (!h.kind || h.status === 'final' || h.status === 'unpaid') {
        await redis.zrem(treasuryKeys.finalityOpen(keys), key);
        continue;
      }
      const name = `${h.kind}:${h.id}`;
      try {
        const receipt = await this.receipt(h.tx_hash as Hex);
        if (receipt && receipt.status === 'success') {
          if (receipt.blockNumber <= finalBlock) {
            await this.markFinal(key, h);
            round.final.push(name);
          } else if (h.kind === 'settlement' && !h.raw_tx) {
            // the facilitator's signed bytes, kept to broadcast them again if this block is reorged out
            const raw = await publicClient.request({ method: 'eth_getRawTransactionByHash', params: [h.tx_hash as Hex] }).catch(() => null);
            if (raw) await redis.hset(key, 'raw_tx', raw, 'raw_from', receipt.from);
          }
          continue;
        }
        const outcome = h.kind === 'settlement' ? await this.recoverSettlement(key, h, finalBlock) : await this.resendTreasuryTransfer(key, h);
        if (outcome) round[outcome].push(name);
      } catch (e) {
        this.o.log.warn({ transfer: name, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'finality check of a transfer failed; retried next round');
      }
    }
    return round;
  }

  /** The highest block that counts as final under the rule. */
  private async finalBlock(): Promise<bigint> {
    const rule = this.o.rule ?? { tag: 'finalized' };
    if ('tag' in rule) return (await this.o.publicClient.getBlock({ blockTag: rule.tag })).number;
    return (await this.o.publicClient.getBlockNumber({ cacheTime: 0 })) - BigInt(rule.depth);
  }

  private async markFinal(key: string, h: Record<string, string>): Promise<void> {
    const tx = this.o.redis.multi().hset(key, 'status', 'final', 'final_at', new Date().toISOString()).expire(key, CLOSED_RETENTION_SECONDS);
    if (h.record_key) tx.hset(h.record_key, 'finality', 'final');
    if (h.kind === 'settlement') tx.expire(treasuryKeys.finalityResend(this.o.keys, h.id), CLOSED_RETENTION_SECONDS);
    await tx.zrem(treasuryKeys.finalityOpen(this.o.keys), key).exec();
  }

  /** A refund or payout whose transfer is not on chain: the same signed transaction again, or re-signed once its nonce was taken (`transferOnce`). */
  private async resendTreasuryTransfer(key: string, h: Record<string, string>): Promise<'resent' | undefined> {
    if (!this.o.sender) return undefined;
    const record = storedTransferRecord(this.o.redis, h.record_key);
    // a payout keeps the tag stored with it (h.data); a refund re-signed keeps its tag (refundTag.ts):
    // what it pays or refunds stays readable on chain
    const paymentTxHash = !h.data && h.kind === 'refund' ? ((await this.o.redis.hget(h.record_key, 'payment_tx_hash')) as Hex | null) : null;
    const data = h.data
      ? (h.data as Hex)
      : paymentTxHash
        ? refundTransferData({ payer: h.to as Hex, amount: h.amount, paymentTxHash, operationId: h.id })
        : undefined;
    const { hash, status } = await this.o.sender.transferOnce({
      to: h.to as Hex,
      amount: BigInt(h.amount),
      record,
      ...(data ? { data } : {}),
    });
    if (status !== 'success') {
      await record.clear(hash);
      this.o.log.error({ transfer: `${h.kind}:${h.id}`, tx_hash: hash }, 'a re-sent transfer reverted; it is signed anew next round');
      return undefined;
    }
    await this.o.redis.multi().hset(key, 'tx_hash', hash).hincrby(key, 'resent', 1).exec();
    this.o.log.warn({ transfer: `${h.kind}:${h.id}`, was: h.tx_hash, tx_hash: hash }, 'a transfer was reorged out; sent again');
    return 'resent';
  }

  /**
   * The transaction that used the EIP-3009 authorization (`authorizer`, `nonce`) of token `asset`: the last
   * `AuthorizationUsed` log from `finalBlock` on, or undefined while the node has not indexed it.
   */
  private async usedIn(asset: Hex, authorizer: Hex, nonce: Hex, finalBlock: bigint): Promise<Hex | undefined> {
    const logs = await this.o.publicClient.getLogs({
      address: asset,
      event: AUTHORIZATION_USED,
      args: { authorizer, nonce },
      fromBlock: finalBlock > 0n ? finalBlock : 0n,
    });
    return logs.at(-1)?.transactionHash ?? undefined;
  }

  /** A settlement whose transaction is not on chain (see the class comment for the order of what is tried). */
  private async recoverSettlement(key: string, h: Record<string, string>, finalBlock: bigint): Promise<'resent' | 'moved' | 'unpaid' | undefined> {
    if (h.method === 'permit2') return this.recoverPermit2Settlement(key, h);
    if (h.method === 'channel_deposit') return this.recoverChannelDeposit(key, h, finalBlock);
    const { redis, publicClient } = this.o;
    const auth = JSON.parse(h.authorization) as Eip3009Authorization;
    const asset = h.asset as Hex;
    if (await authorizationUsed(publicClient, asset, auth.from, auth.nonce)) {
      const moved = await this.usedIn(asset, auth.from, auth.nonce, finalBlock);
      if (!moved || moved === h.tx_hash) return undefined; // the node has not indexed it yet, or it is being mined again
      // the facilitator's own transaction still holds a nonce the reorg freed: broadcast it anyway (it
      // reverts, the authorization being used, for one transfer's gas) so that the facilitator's
      // transactions signed after it are not left queued behind a gap
      if (h.raw_tx) await this.rebroadcastWhileNonceFree(h).catch(() => false);
      await redis.hset(key, 'tx_hash', moved);
      await this.o.onSettlementMoved?.({ operationId: h.id, txHash: moved });
      this.o.log.warn({ operationId: h.id, was: h.tx_hash, tx_hash: moved }, 'a settlement was reorged out and is on chain again in another transaction');
      return 'moved';
    }
    // unused and expired: no transaction can ever move it again
    const head = await publicClient.getBlock({ blockTag: 'latest' });
    if (head.timestamp >= BigInt(auth.validBefore)) return this.markUnpaid(key, h, { payer: auth.from, amount: auth.value });
    const rebroadcasts = Number(h.rebroadcasts ?? 0);
    if (h.raw_tx && rebroadcasts < (this.o.rebroadcastRounds ?? 3)) {
      await redis.hincrby(key, 'rebroadcasts', 1);
      // the facilitator's own signed transaction, while its nonce is still free
      if (await this.rebroadcastWhileNonceFree(h)) {
        await redis.hincrby(key, 'resent', 1);
        this.o.log.warn({ operationId: h.id, tx_hash: h.tx_hash }, 'a settlement was reorged out; its signed transaction was broadcast again');
        return 'resent';
      }
    }
    if (!this.o.sender) return undefined;
    const record = storedTransferRecord(redis, treasuryKeys.finalityResend(this.o.keys, h.id));
    try {
      const { hash, status } = await this.o.sender.transferOnce({
        to: auth.to,
        amount: BigInt(auth.value),
        record,
        data: transferWithAuthorizationData(auth, h.signature as Hex),
      });
      if (status !== 'success') {
        await record.clear(hash);
        return undefined; // used or expired meanwhile: the next round reads which
      }
      await redis.multi().hset(key, 'tx_hash', hash).hincrby(key, 'resent', 1).exec();
      await this.o.onSettlementMoved?.({ operationId: h.id, txHash: hash });
      this.o.log.warn({ operationId: h.id, was: h.tx_hash, tx_hash: hash }, 'a settlement was reorged out; its authorization was resubmitted by the treasury');
      return 'resent';
    } catch (e) {
      if (e instanceof TransferWouldRevertError) return undefined; // used or expired meanwhile: the next round reads which
      throw e;
    }
  }

  /**
   * An `upto` settlement (Permit2) whose transaction is not on chain. Its nonce used → mined again
   * (or in a transaction the node has not indexed): waited for, as Permit2 logs no event per nonce.
   * Unused and past the permit's `deadline` → `unpaid`. Otherwise the facilitator's own signed
   * transaction is broadcast again while its nonce is free; the treasury cannot resubmit it (only
   * the witness's facilitator may call `settle`).
   */
  private async recoverPermit2Settlement(key: string, h: Record<string, string>): Promise<'resent' | 'unpaid' | undefined> {
    const permit = JSON.parse(h.permit2) as Permit2Settlement;
    if (await permit2NonceUsed(this.o.publicClient, permit.owner, permit.nonce)) return undefined;
    const head = await this.o.publicClient.getBlock({ blockTag: 'latest' });
    if (head.timestamp >= BigInt(permit.deadline)) return this.markUnpaid(key, h, { payer: permit.owner, amount: permit.amount });
    if (h.raw_tx && (await this.rebroadcastWhileNonceFree(h))) {
      await this.o.redis.hincrby(key, 'resent', 1);
      this.o.log.warn({ operationId: h.id, tx_hash: h.tx_hash }, 'an upto settlement was reorged out; its signed transaction was broadcast again');
      return 'resent';
    }
    return undefined;
  }

  /**
   * A `batch-settlement` channel deposit whose transaction is not on chain. Its ERC-3009 authorization
   * used → on chain again (the same transaction being mined, or another `deposit` carrying it: followed
   * through the token's `AuthorizationUsed` log). Unused and past `validBefore` → the channel is reported
   * to `onChannelUnpaid` and the call is `unpaid`. Otherwise the facilitator's own signed transaction is
   * broadcast again while its nonce is free (the treasury does not resubmit a deposit: it would pay
   * for someone else's channel).
   */
  private async recoverChannelDeposit(key: string, h: Record<string, string>, finalBlock: bigint): Promise<'resent' | 'moved' | 'unpaid' | undefined> {
    const { publicClient, redis } = this.o;
    const d = JSON.parse(h.channel_deposit) as ChannelDepositSettlement;
    const asset = h.asset as Hex;
    if (await authorizationUsed(publicClient, asset, d.payer, d.nonce)) {
      const moved = await this.usedIn(asset, d.payer, d.nonce, finalBlock);
      if (!moved || moved === h.tx_hash) return undefined;
      await redis.hset(key, 'tx_hash', moved);
      this.o.log.warn(
        { operationId: h.id, channel: d.channelId, was: h.tx_hash, tx_hash: moved },
        'a channel deposit was reorged out and is on chain again in another transaction',
      );
      return 'moved';
    }
    const head = await publicClient.getBlock({ blockTag: 'latest' });
    if (head.timestamp >= BigInt(d.validBefore)) {
      await this.o.onChannelUnpaid?.({ operationId: h.id, channelId: d.channelId, payer: d.payer, deposit: d.deposit });
      return this.markUnpaid(key, h, { payer: d.payer, amount: h.amount });
    }
    if (h.raw_tx && (await this.rebroadcastWhileNonceFree(h))) {
      await redis.hincrby(key, 'resent', 1);
      this.o.log.warn(
        { operationId: h.id, channel: d.channelId, tx_hash: h.tx_hash },
        'a channel deposit was reorged out; its signed transaction was broadcast again',
      );
      return 'resent';
    }
    return undefined;
  }

  /** Broadcasts the settlement's stored signed transaction (`raw_tx`) again when its signer's nonce is still free on chain; true when the node took it. */
  private async rebroadcastWhileNonceFree(h: Record<string, string>): Promise<boolean> {
    const { publicClient } = this.o;
    const nonce = parseTransaction(h.raw_tx as Hex).nonce ?? 0;
    const mined = await publicClient.getTransactionCount({ address: h.raw_from as Hex, blockTag: 'latest' });
    if (mined > nonce) return false; // taken by another of its transactions: this one can never be mined
    return publicClient.sendRawTransaction({ serializedTransaction: h.raw_tx as Hex }).then(
      () => true,
      (e: unknown) => /already known|already imported/i.test(String((e as Error)?.message)),
    );
  }

  /**
   * The settlement is lost for good (its authorization expired unused): the payment is `unpaid`,
   * what its operation credited is reversed, and the reservation's stored answer becomes a 409
   * `payment_reversed` problem, so a resend (or an Idempotency-Key replay) no longer returns the
   * result. Waits while the paid call is still running (its answer not stored yet).
   */
  private async markUnpaid(key: string, h: Record<string, string>, paid: { payer: Hex; amount: string }): Promise<'unpaid' | undefined> {
    const { redis } = this.o;
    const state = await redis.hget(h.auth_key, 'state');
    if (state && state !== 'completed') return undefined; // still running: its answer would overwrite ours
    const reversal = await this.o.reversals?.reverse({ operationId: h.id, payer: paid.payer, amount: paid.amount });
    if (reversal === 'paid_out') this.o.log.error({ operationId: h.id }, "an unpaid settlement's credit was paid out already; for an operator");
    const answer = conflictAnswer({
      reason: 'payment_reversed',
      detail:
        'The block holding this payment was reorganized out of the chain and the authorization expired before it could be resubmitted: nothing was charged and the result is not delivered. Pay again with a new payment.',
      operation_id: h.id,
      ...(h.id.startsWith('exe_') ? { execution_id: h.id } : {}),
      payment: { tx_hash: h.tx_hash, amount: h.amount, status: 'unpaid' },
    });
    const tx = redis.multi().hset(key, 'status', 'unpaid', 'unpaid_at', new Date().toISOString()).expire(key, CLOSED_RETENTION_SECONDS);
    if (state === 'completed') tx.hset(h.auth_key, 'response', JSON.stringify(answer));
    await tx.zrem(treasuryKeys.finalityOpen(this.o.keys), key).exec();
    this.o.log.error(
      { operationId: h.id, payer: paid.payer, amount: paid.amount, tx_hash: h.tx_hash },
      'a settlement was reorged out and its authorization expired: the call is unpaid',
    );
    return 'unpaid';
  }

  /** The receipt of `hash`, undefined when the node has none; throws on a failed read (never a reason to re-send). */
  private receipt(hash: Hex): Promise<TransactionReceipt | undefined> {
    return receiptOf(this.o.publicClient, hash);
  }
}

/** The `transferWithAuthorization` calldata of a signed EIP-3009 authorization: (v, r, s) for a 65-byte signature, else `bytes signature`. */
export function transferWithAuthorizationData(auth: Eip3009Authorization, signature: Hex): Hex {
  const base = [auth.from, auth.to, BigInt(auth.value), BigInt(auth.validAfter), BigInt(auth.validBefore), auth.nonce] as const;
  if (signature.length === 132) {
    const { r, s, v, yParity } = parseSignature(signature);
    return encodeFunctionData({ abi: eip3009ABI, functionName: 'transferWithAuthorization', args: [...base, Number(v ?? BigInt(yParity + 27)), r, s] });
  }
  return encodeFunctionData({ abi: eip3009ABI, functionName: 'transferWithAuthorization', args: [...base, signature] });
}

/** A running finality tracker: `stop()` ends it and waits for a running round. */
export interface RunningFinality {
  tracker: TransferFinality;
  stop(): Promise<void>;
}

/**
 * Runs {@link TransferFinality.check} whenever the payment chain's head block changes (a new
 * block, or a reorg at the same height; polled every `pollingIntervalMs`, default 2 000), one round at a time per process and one process at a time
 * per deployment (the lease `treasuryKeys.finalityLock`, 60 s, taken per round).
 */
export function startTransferFinality(o: TransferFinalityOptions & { pollingIntervalMs?: number }): RunningFinality {
  const tracker = new TransferFinality(o);
  const leaseKey = treasuryKeys.finalityLock(o.keys);
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const round = () => {
    if (busy) return;
    busy = true;
    running = (async () => {
      const holder = randomUUID();
      if (!(await takeLease(o.redis, { leaseKey, holder, leaseMs: 60_000 }))) return;
      try {
        const r = await tracker.check();
        o.log.debug({ ...r, finalBlock: r.finalBlock.toString() }, 'finality round');
        if (r.resent.length || r.moved.length || r.unpaid.length)
          o.log.warn({ ...r, finalBlock: r.finalBlock.toString() }, 'finality round found reorged transfers');
      } finally {
        await releaseLease(o.redis, { leaseKey, holder }).catch(() => undefined);
      }
    })()
      .catch((e) => o.log.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'finality round failed; retried on the next block'))
      .finally(() => {
        busy = false;
      });
  };
  // a round whenever the head changed since the last look: a new block, or another block at the
  // same height (a reorg); a failed read: the next poll tries again
  let head: Hex | undefined;
  const timer = setInterval(() => {
    void o.publicClient.getBlock({ blockTag: 'latest' }).then(
      (b) => {
        if (b.hash === head) return;
        head = b.hash ?? undefined;
        round();
      },
      () => undefined,
    );
  }, o.pollingIntervalMs ?? 2_000);
  timer.unref();
  return {
    tracker,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
