import type { RefundRecord } from '@acg/schemas';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPublicClient, http, type Account, type Chain, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { RedisKeys } from '@acg/redis';
import type { RefundObserver } from './observer.js';
import { TreasurySender, type TransferRecord } from './treasury.js';
import { createRefund } from './commands/index.js';
import { treasuryKeys } from './commands/keys.js';
import { trackTreasuryTransfer } from './finality.js';
import { storedTransferRecord } from './transferRecord.js';
import { receiptOf } from './chainSender.js';
import { refundsOnChain, refundTransferData } from './refundTag.js';

/** A payment to give back: operation id, payer, amount (integer USDC base units), original tx. */
export interface RefundRequest {
  operationId: string;
  payer: `0x${string}`;
  /** integer string, USDC base units (6 decimals) */
  amount: string;
  paymentTxHash: `0x${string}`;
}

/** Refund state as stored in Redis and shown on executions and jobs (docs/decisions.md "x402 payments"). */
export type { RefundRecord };

export const REFUND_QUEUE = 'refunds';

/**
 * The durable refund queue (BullMQ). A refund is enqueued once per operation (job id
 * `refund-<operationId>`), retried with exponential backoff until its transfer is mined.
 */
export class RefundQueue {
  private readonly queue: Queue;
  /**
   * @param opts.observer - told once per operation when its refund is first recorded (metrics).
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    connection: Redis,
    private readonly opts: { observer?: RefundObserver } = {},
  ) {
    this.queue = new Queue(REFUND_QUEUE, { connection, prefix: keys.bullPrefix() });
    this.queue.on('error', () => undefined); // a Redis outage surfaces as the failing enqueue
  }

  /**
   * Records the refund as `pending` (status, amount, payer and payment tx in one atomic write:
   * `create_refund.lua`) and enqueues its job; a second call for the same operation changes no
   * record and enqueues nothing new (job id `refund-<operationId>`).
   * @throws Redis unavailable (nothing or everything of the record was written: call it again).
   */
  async enqueue(r: RefundRequest): Promise<void> {
    const key = treasuryKeys.refund(this.keys, r.operationId);
    const created = await createRefund(this.redis, { refundKey: key, amount: r.amount, payer: r.payer, paymentTxHash: r.paymentTxHash });
    if (created) this.opts.observer?.refundQueued?.({ amount: r.amount });
    await this.queue.add('refund', r, {
      jobId: `refund-${r.operationId}`,
      attempts: 20,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: false,
    });
  }

  /** BullMQ job counts of the refund queue by state (`Queue.getJobCounts`), e.g. for queue-depth metrics. */
  getJobCounts(...types: string[]): Promise<Record<string, number>> {
    return this.queue.getJobCounts(...(types as Parameters<Queue['getJobCounts']>));
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** Reads the refund of an operation, or undefined when none was needed. */
export async function readRefund(redis: Redis, keys: RedisKeys, operationId: string): Promise<RefundRecord | undefined> {
  const h = await redis.hgetall(treasuryKeys.refund(keys, operationId));
  if (!h.status) return undefined;
  return {
    status: h.status === 'sent' ? 'sent' : 'pending',
    amount: h.amount,
    payer: h.payer as `0x${string}`,
    ...(h.status === 'sent' && h.tx_hash ? { tx_hash: h.tx_hash as `0x${string}` } : {}),
    // its block at or below the final block (finality.ts); re-sent after a reorg until then
    ...(h.status === 'sent' ? { finality: h.finality === 'final' ? ('final' as const) : ('unconfirmed' as const) } : {}),
  };
}

/**
 * A stored paid answer with its refund's current state. Stored answers are written once (when the
 * operation fails, or by the crash-recovery sweep) with `refund: {status: "pending", amount}`;
 * the refund worker later marks the refund record `sent`. Replays read through this, so they show
 * `refund: {status: "sent", amount, tx_hash}` once the transfer is mined (the refund record is the
 * single source of truth, so no write can race the worker). A stored 503 (a transient failure that
 * said "retry after") whose refund is sent replays as 502 without `Retry-After`, saying the payment
 * was refunded. Other answers are returned unchanged.
 */
export async function withRefundState<T extends { body: unknown }>(
  redis: Redis,
  keys: RedisKeys,
  operationId: string | null | undefined,
  stored: T,
): Promise<T> {
  const body = stored.body as { refund?: { status?: string } } | null;
  if (!operationId || !body || typeof body !== 'object' || body.refund?.status !== 'pending') return stored;
  const refund = await readRefund(redis, keys, operationId);
  if (refund?.status !== 'sent') return stored;
  const refunded = { ...body.refund, status: 'sent', ...(refund.tx_hash ? { tx_hash: refund.tx_hash } : {}) };
  const answer = stored as T & { status?: number; headers?: Record<string, string> };
  if (answer.status === 503) {
    // a "retry after" answer (e.g. the store was out) whose payment has been refunded since: the
    // replay says so, and no longer invites a retry with this payment (issue 28)
    const headers = Object.fromEntries(Object.entries(answer.headers ?? {}).filter(([k]) => k.toLowerCase() !== 'retry-after'));
    return {
      ...stored,
      status: 502,
      headers,
      body: {
        ...body,
        status: 502,
        title: 'Bad Gateway',
        detail: 'The call did not complete and its payment was refunded (see refund); to try again, pay again with a new payment.',
        refund: refunded,
      },
    };
  }
  return { ...stored, body: { ...body, refund: refunded } };
}

export interface RefundWorkerOptions {
  redis: Redis;
  keys: RedisKeys;
  /** BullMQ connection (`maxRetriesPerRequest: null`). */
  connection: Redis;
  rpcUrl: string;
  chain: Chain;
  /** The treasury (payTo) account that sends refunds. */
  treasury: Account;
  /** USDC contract address. */
  asset: `0x${string}`;
  log: Logger;
  /** Told of each refund sent and each failed attempt (metrics). */
  observer?: RefundObserver;
}

/**
 * The signed refund transaction of an operation, kept in its refund record (`raw_tx`, `tx_hash`,
 * `nonce`): the {@link TransferRecord} that makes the refund exactly once.
 */
export function refundTransferRecord(redis: Redis, keys: RedisKeys, operationId: string): TransferRecord {
  return storedTransferRecord(redis, treasuryKeys.refund(keys, operationId));
}

/**
 * Processes refunds: a USDC `transfer(payer, amount)` from the treasury through a
 * {@link TreasurySender}. Exactly once: the transaction is signed and stored in the refund record
 * before it is broadcast, so a retry after a crash rebroadcasts the same signed transaction (same
 * nonce) instead of signing a second transfer, and re-signs only once that nonce was provably
 * taken by another transaction. Treasury nonces never collide with other senders of the same
 * treasury (provider payouts, other workers): fresh sends hold the treasury send lock. A reverted
 * transfer is forgotten and retried (BullMQ backoff).
 */
export function startRefundWorker(o: RefundWorkerOptions): Worker {
  const sender = new TreasurySender({ redis: o.redis, keys: o.keys, rpcUrl: o.rpcUrl, chain: o.chain, treasury: o.treasury, asset: o.asset });
  const publicClient = createPublicClient({ chain: o.chain, transport: http(o.rpcUrl) }) as PublicClient;

  const process = async (job: Job<RefundRequest>) => {
    const r = job.data;
    const key = treasuryKeys.refund(o.keys, r.operationId);
    const rec = await o.redis.hgetall(key);
    if (rec.status === 'sent') {
      // sent before a crash stopped this job: watched until final like any other
      await trackTreasuryTransfer(o.redis, o.keys, {
        kind: 'refund',
        id: r.operationId,
        txHash: rec.tx_hash as Hex,
        to: r.payer,
        amount: r.amount,
        recordKey: key,
      });
      return rec.tx_hash;
    }
    const record = refundTransferRecord(o.redis, o.keys, r.operationId);
    // nothing signed in the record: it may have been lost after the refund was sent (a Redis restarted
    // without its last writes); a refund on chain whose tag names this operation is this refund
    const found = rec.raw_tx ? undefined : await sentBefore(publicClient, o, r);
    const { hash, status } = found
      ? { hash: found, status: 'success' as const }
      : await sender.transferOnce({ to: r.payer, amount: BigInt(r.amount), record, data: refundTransferData(r) });
    if (status !== 'success') {
      await record.clear(hash);
      throw new Error('refund transfer reverted');
    }
    await o.redis.hset(key, 'status', 'sent', 'tx_hash', hash, 'sent_at', new Date().toISOString());
    // watched until final: re-sent if its block is reorged out (finality.ts)
    await trackTreasuryTransfer(o.redis, o.keys, { kind: 'refund', id: r.operationId, txHash: hash, to: r.payer, amount: r.amount, recordKey: key });
    o.log.info({ operationId: r.operationId, tx_hash: hash, amount: r.amount }, 'refund sent');
    o.observer?.refundSent?.({ amount: r.amount });
    return hash;
  };

  const worker = new Worker<RefundRequest>(REFUND_QUEUE, process, {
    connection: o.connection,
    prefix: o.keys.bullPrefix(),
    concurrency: 1,
  });
  worker.on('failed', (job, err) => {
    o.observer?.refundAttemptFailed?.();
    o.log.warn({ jobId: job?.id, err: err.message.slice(0, 200) }, 'refund attempt failed');
  });
  return worker;
}

/**
 * The hash of a refund of `r` already on chain (tagged with its payment and operation, `refundTag.ts`),
 * mined since its payment; undefined when there is none, or when its payment is not on chain to
 * start the search from.
 */
async function sentBefore(client: PublicClient, o: Pick<RefundWorkerOptions, 'asset' | 'treasury'>, r: RefundRequest): Promise<Hex | undefined> {
  const payment = await receiptOf(client, r.paymentTxHash);
  if (!payment) return undefined;
  const [found] = await refundsOnChain(client, {
    asset: o.asset,
    treasury: o.treasury.address,
    payer: r.payer,
    paymentTxHash: r.paymentTxHash,
    operationId: r.operationId,
    fromBlock: payment.blockNumber,
  });
  return found?.txHash;
}

/** What {@link startRefunds} needs: {@link RefundWorkerOptions} with the treasury as an optional private key. */
export interface StartRefundsOptions extends Omit<RefundWorkerOptions, 'treasury'> {
  /** The treasury's key (TREASURY_PRIVATE_KEY); without it no worker starts and refunds stay `pending`, queued. */
  treasuryPrivateKey?: Hex;
}

/**
 * Starts the refund worker ({@link startRefundWorker}: USDC transfers treasury → payer) of a
 * process, logging as `component: refunds`; a worker error (e.g. Redis unavailable; it reconnects) is
 * logged as a warning without upstream detail beyond 200 characters.
 *
 * @returns the BullMQ worker, or undefined when `treasuryPrivateKey` is unset.
 *
 * @example
 * const worker = startRefunds({ redis, keys, connection: bullRedis, rpcUrl, chain, asset, treasuryPrivateKey, log })
 */
export function startRefunds(o: StartRefundsOptions): Worker | undefined {
  const { treasuryPrivateKey, ...rest } = o;
  if (!treasuryPrivateKey) return undefined;
  const worker = startRefundWorker({ ...rest, treasury: privateKeyToAccount(treasuryPrivateKey), log: o.log.child({ component: 'refunds' }) });
  worker.on('error', (err) => o.log.warn({ err: String(err?.message ?? err).slice(0, 200) }, 'refund worker error (e.g. Redis unavailable); it reconnects'));
  return worker;
}
