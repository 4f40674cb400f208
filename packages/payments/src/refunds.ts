import type { RefundRecord } from '@acg/schemas';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPublicClient, createWalletClient, encodeFunctionData, erc20Abi, http, keccak256, type Account, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { RedisKeys } from '@acg/redis';

/** A payment to give back: operation id, payer, amount (integer USDC base units), original tx. */
export interface RefundRequest {
  operationId: string;
  payer: `0x${string}`;
  /** integer string, USDC base units (6 decimals) */
  amount: string;
  paymentTxHash: `0x${string}`;
}

/** Refund state as stored in Redis and shown on executions and jobs (DESIGN "x402 payments"). */
export type { RefundRecord };

export const REFUND_QUEUE = 'refunds';

/**
 * The durable refund queue (BullMQ). A refund is enqueued once per operation (job id
 * `refund-<operationId>`), retried with exponential backoff until its transfer is mined.
 */
export class RefundQueue {
  private readonly queue: Queue;
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    connection: Redis,
  ) {
    this.queue = new Queue(REFUND_QUEUE, { connection, prefix: keys.bullPrefix() });
    this.queue.on('error', () => undefined); // a Redis outage surfaces as the failing enqueue
  }

  /** Records the refund as pending and enqueues its job; a second call for the same operation is a no-op. */
  async enqueue(r: RefundRequest): Promise<void> {
    const key = this.keys.refund(r.operationId);
    const created = await this.redis.hsetnx(key, 'status', 'pending');
    if (created) await this.redis.hset(key, 'amount', r.amount, 'payer', r.payer, 'payment_tx_hash', r.paymentTxHash);
    await this.queue.add('refund', r, {
      jobId: `refund-${r.operationId}`,
      attempts: 20,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: false,
    });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** Reads the refund of an operation, or undefined when none was needed. */
export async function readRefund(redis: Redis, keys: RedisKeys, operationId: string): Promise<RefundRecord | undefined> {
  const h = await redis.hgetall(keys.refund(operationId));
  if (!h.status) return undefined;
  return {
    status: h.status === 'sent' ? 'sent' : 'pending',
    amount: h.amount,
    payer: h.payer as `0x${string}`,
    ...(h.status === 'sent' && h.tx_hash ? { tx_hash: h.tx_hash as `0x${string}` } : {}),
  };
}

/**
 * A stored paid answer with its refund's current state. Stored answers are written once (when the
 * operation fails, or by the crash-recovery sweep) with `refund: {status: "pending", amount}`;
 * the refund worker later marks the refund record `sent`. Replays read through this, so they show
 * `refund: {status: "sent", amount, tx_hash}` once the transfer is mined (the refund record is the
 * single source of truth, so no write can race the worker). Other answers are returned unchanged.
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
  return { ...stored, body: { ...body, refund: { ...body.refund, status: 'sent', ...(refund.tx_hash ? { tx_hash: refund.tx_hash } : {}) } } };
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
}

/**
 * Processes refunds: a USDC `transfer(payer, amount)` from the treasury. Exactly once: the
 * transaction is signed and stored in Redis before it is broadcast, so a retry after a crash
 * rebroadcasts the same signed transaction (same nonce) instead of signing a second transfer.
 * Concurrency 1, so treasury nonces never collide.
 */
export function startRefundWorker(o: RefundWorkerOptions): Worker {
  const transport = http(o.rpcUrl, { retryCount: 1 });
  const publicClient = createPublicClient({ chain: o.chain, transport, pollingInterval: 250 });
  const wallet = createWalletClient({ account: o.treasury, chain: o.chain, transport });

  const process = async (job: Job<RefundRequest>) => {
    const r = job.data;
    const key = o.keys.refund(r.operationId);
    const rec = await o.redis.hgetall(key);
    if (rec.status === 'sent') return rec.tx_hash;
    let raw = rec.raw_tx as `0x${string}` | undefined;
    let hash = rec.tx_hash as `0x${string}` | undefined;
    if (raw && hash) {
      const receipt = await publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
      if (!receipt) {
        try {
          await publicClient.sendRawTransaction({ serializedTransaction: raw });
        } catch (e) {
          const msg = String((e as Error).message).toLowerCase();
          if (msg.includes('nonce too low')) {
            // The nonce was consumed by another transaction: sign anew on the next attempt.
            await o.redis.hdel(key, 'raw_tx', 'tx_hash');
            throw new Error('refund nonce was used by another transaction; re-signing');
          }
          if (!msg.includes('already known')) throw new Error('refund broadcast failed');
        }
      }
    } else {
      const request = await wallet.prepareTransactionRequest({
        to: o.asset,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [r.payer, BigInt(r.amount)] }),
        chain: o.chain,
        account: o.treasury,
      });
      raw = await wallet.signTransaction(request as never);
      hash = keccak256(raw);
      await o.redis.hset(key, 'raw_tx', raw, 'tx_hash', hash);
      await publicClient.sendRawTransaction({ serializedTransaction: raw });
    }
    const receipt = await publicClient.waitForTransactionReceipt({ hash: hash!, timeout: 60_000 });
    if (receipt.status !== 'success') {
      await o.redis.hdel(key, 'raw_tx', 'tx_hash');
      throw new Error('refund transfer reverted');
    }
    await o.redis.hset(key, 'status', 'sent', 'sent_at', new Date().toISOString());
    o.log.info({ operationId: r.operationId, tx_hash: hash, amount: r.amount }, 'refund sent');
    return hash;
  };

  const worker = new Worker<RefundRequest>(REFUND_QUEUE, process, {
    connection: o.connection,
    prefix: o.keys.bullPrefix(),
    concurrency: 1,
  });
  worker.on('failed', (job, err) => o.log.warn({ jobId: job?.id, err: err.message.slice(0, 200) }, 'refund attempt failed'));
  return worker;
}

/** What {@link startRefunds} needs: {@link RefundWorkerOptions} with the treasury as an optional private key. */
export interface StartRefundsOptions extends Omit<RefundWorkerOptions, 'treasury'> {
  /** The treasury's key (TREASURY_PRIVATE_KEY); without it no worker starts and refunds stay `pending`, queued. */
  treasuryPrivateKey?: Hex;
}

/**
 * Starts the refund worker ({@link startRefundWorker}: USDC transfers treasury → payer) of a
 * process, logging as `module: refunds`; a worker error (e.g. Redis unavailable; it reconnects) is
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
  const worker = startRefundWorker({ ...rest, treasury: privateKeyToAccount(treasuryPrivateKey), log: o.log.child({ module: 'refunds' }) });
  worker.on('error', (err) => o.log.warn({ err: String(err?.message ?? err).slice(0, 200) }, 'refund worker error (e.g. Redis unavailable); it reconnects'));
  return worker;
}
