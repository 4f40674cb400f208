import type { RedisKeys } from '@acg/redis';
import { paymentKeys, releaseAuthorization, transitionAuthorization, type AuthorizationState } from '@acg/payments/commands';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublicClient } from 'viem';
import { settlementInPool } from '@acg/payments';
import { authorizationTx, authorizationUsed, permit2NonceUsed, type CreditReversal, type RefundQueue } from '@acg/treasury';
import { reconciliationKeys } from './commands/keys.js';

export interface PaymentRecoveryOptions {
  redis: Redis;
  keys: RedisKeys;
  /** reads the payment chain (EIP-3009 `authorizationState`, `AuthorizationUsed` logs) */
  publicClient: PublicClient;
  refunds: Pick<RefundQueue, 'enqueue'>;
  log: Logger;
  /** a reservation with no progress for this long is treated as orphaned (default 10 minutes) */
  olderThanMs?: number;
  /** reservations looked at per round (default 100) */
  batch?: number;
  /**
   * Reverses what an orphaned operation credited (a provider's share, a deposit) before its refund
   * is queued. Required: a sweep that refunds without it would leave the credit standing (issue 23
   * item 7); routes that credit nothing pass `reversalsByPrefix({})`.
   */
  reversals: CreditReversal;
  /**
   * The answer of an operation that finished before the crash, e.g. a SUCCEEDED execution whose
   * record was stored but whose answer was not (`succeededExecutionAnswer` of @acg/execution);
   * undefined when it did not finish. A finished operation's payment is completed with that answer
   * instead of refunded, so a paid call ends with one outcome: delivered and credited, or refunded
   * and reversed, never both (README "x402 payments", crash recovery).
   */
  finishedAnswer?: (operationId: string, payment: { txHash: `0x${string}`; amount: string }) => Promise<RecoveredAnswer | undefined>;
}

/**
 * A stored answer the sweep completes a payment with: HTTP status, headers and JSON body, and
 * `refundAmount` (integer USDC base units) when the finished operation still owes the payer part
 * of the payment (a routed call's payment above the answering offer's price): the sweep queues
 * that refund (once per operation id) before it completes the payment.
 */
export interface RecoveredAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  refundAmount?: string;
}

/** What one recovery round did. */
export interface RecoveryRound {
  /** settled on-chain, operation never finished: refunded */
  refunded: string[];
  /** never settled on-chain: reservation released, nothing was charged */
  released: string[];
  /** settled, and the operation had finished (`finishedAnswer`): completed with its answer, not refunded */
  completed: string[];
}

/**
 * The crash-recovery sweep of paid requests (docs/decisions.md "x402 payments": "a crash between settle and
 * execute is recovered by the worker (execute or refund), never lost"). It reads reservations
 * that made no progress for `olderThanMs` (the in-flight set) and asks the token whether the
 * EIP-3009 authorization was used:
 * - unused → nothing was charged: the reservation is released (the payer may pay again);
 * - used, and the operation finished (`finishedAnswer`, e.g. its SUCCEEDED record was stored) →
 *   the reservation is completed with that answer: nothing is refunded, its credit stands;
 * - used → the payer was charged but the operation never completed: the reservation moves to
 *   `recovering` (so the original request, if still alive, can no longer complete it), what the
 *   operation credited is reversed (`reversals`: a provider's share, a deposit), a durable
 *   refund is queued (idempotent by operation id), and the stored answer becomes a 502 problem
 *   naming the refund, which a replay of the payment then gets.
 */
export async function recoverOrphanedPayments(o: PaymentRecoveryOptions): Promise<RecoveryRound> {
  const inflight = paymentKeys.authorizationsInFlight(o.keys);
  const cutoff = Date.now() - (o.olderThanMs ?? 600_000);
  const authKeys = await o.redis.zrangebyscore(inflight, '-inf', cutoff, 'LIMIT', 0, o.batch ?? 100);
  const round: RecoveryRound = { refunded: [], released: [], completed: [] };
  for (const authKey of authKeys) {
    const r = await recoverPayment(o, authKey);
    if (r.outcome !== 'skipped') round[r.outcome].push(r.operationId);
  }
  return round;
}

/** What {@link recoverPayment} did with one reservation; `skipped`: nothing (already completed, chain unreachable, lost the race, or lacking fields). */
export type RecoveryOutcome = { outcome: keyof RecoveryRound; operationId: string } | { outcome: 'skipped' };

/**
 * Recovers one reservation (`authKey`) as {@link recoverOrphanedPayments} does each orphaned one,
 * whatever its age: released, completed with its finished answer, or refunded. Idempotent (every
 * step is a compare-and-set or keyed by the operation id), so a run interrupted anywhere is
 * finished by the next. Also used by the chain reconciliation (`chainReconciliation.ts`).
 */
export async function recoverPayment(o: PaymentRecoveryOptions, authKey: string): Promise<RecoveryOutcome> {
  const redis = o.redis;
  const inflight = paymentKeys.authorizationsInFlight(o.keys);
  const skipped = { outcome: 'skipped' } as const;
  const h = await redis.hgetall(authKey);
  if (!h.state || h.state === 'completed') {
    await redis.zrem(inflight, authKey);
    return skipped;
  }
  const op = h.operation_id;
  // x402 `upto` (a deferred scheme: settled after its operation ran, Permit2 nonce): a recorded
  // settlement not seen through (`settling`, `settle_unknown`) is the gateway's deferred recovery's
  // (`Paywall.recoverDeferred`: it holds the facilitator the payer's witness names); once settled
  // it is completed or refunded here like `exact`
  const upto = h.scheme === 'upto';
  if (h.scheme && h.scheme !== 'exact' && !upto) return skipped;
  if (upto && (h.state === 'settling' || h.state === 'settle_unknown')) return skipped;
  // an `upto` payment held for an operation that goes on after its answer (a job, settled when it
  // ends: `hold_until`, the Permit2 deadline, unix seconds) is not orphaned while it can still be
  // settled: the job's end records what to settle. Past the deadline nothing can be: released below
  if (upto && h.hold_until && Number(h.hold_until) * 1000 > Date.now()) return skipped;
  const cas = (from: AuthorizationState[], to: AuthorizationState, fields?: Record<string, string>) =>
    transitionAuthorization(redis, { authKey, inFlightKey: inflight, operationId: op, from, to, nowMs: Date.now(), fields });
  if (!h.asset || !h.payer || !h.nonce || !h.amount) {
    o.log.error({ operationId: op }, 'orphaned payment reservation lacks recovery fields; left for an operator');
    return skipped;
  }
  let used: boolean;
  try {
    used = upto
      ? await permit2NonceUsed(o.publicClient, h.payer as `0x${string}`, h.nonce as `0x${string}`)
      : await authorizationUsed(o.publicClient, h.asset as `0x${string}`, h.payer as `0x${string}`, h.nonce as `0x${string}`);
  } catch {
    return skipped; // chain unreachable: try again next round
  }
  if (!used) {
    // a settlement still waiting in the node may yet be mined: left for a later round
    if (h.tx_hash && (await settlementInPool(o.publicClient, h.tx_hash as `0x${string}`))) return skipped;
    // an `upto` operation may have run (and credited) before it recorded what to settle: its
    // credit is reversed with the release (nothing was charged)
    if (upto) await o.reversals.reverse({ operationId: op, payer: h.payer as `0x${string}`, amount: h.amount });
    if (upto && h.hold_until)
      o.log.error(
        { operationId: op, payer: h.payer, deadline: Number(h.hold_until) },
        'a held upto payment passed its deadline unsettled: nothing can be charged for it any more',
      );
    const released = await releaseAuthorization(redis, { authKey, inFlightKey: inflight, operationId: op, from: ['pending', 'settle_unknown'] });
    return released ? { outcome: 'released', operationId: op } : skipped;
  }
  if (h.state !== 'recovering' && !(await cas(['pending', 'settle_unknown', 'settled'], 'recovering'))) return skipped;
  let txHash = h.tx_hash as `0x${string}` | undefined;
  if (!upto) txHash ??= await authorizationTx(o.publicClient, h.asset as `0x${string}`, h.payer as `0x${string}`, h.nonce as `0x${string}`);
  txHash ??= '0x';
  // an operation that finished (its record stored) is delivered, not refunded: one outcome per payment
  const finished = await o.finishedAnswer?.(op, { txHash, amount: h.amount });
  if (finished) {
    const { refundAmount, ...answer } = finished;
    // the refund it owes goes first (idempotent per operation id): a crash after it leaves the payment recovering, and the next round queues nothing twice
    if (refundAmount && BigInt(refundAmount) > 0n)
      await o.refunds.enqueue({ operationId: op, payer: h.payer as `0x${string}`, amount: refundAmount, paymentTxHash: txHash });
    if (!(await cas(['recovering'], 'completed', { response: JSON.stringify(answer), tx_hash: txHash }))) return skipped;
    o.log.warn({ operationId: op, payer: h.payer }, 'completed a paid request whose operation finished before its answer was stored');
    return { outcome: 'completed', operationId: op };
  }
  // what the operation credited is reversed before the refund: a dispute can never refund it again
  const reversal = await o.reversals.reverse({ operationId: op, payer: h.payer as `0x${string}`, amount: h.amount });
  if (reversal === 'paid_out') o.log.error({ operationId: op }, "an orphaned payment's credit was paid out already; refunded anyway, for an operator");
  if (reversal !== 'already_refunded') await o.refunds.enqueue({ operationId: op, payer: h.payer as `0x${string}`, amount: h.amount, paymentTxHash: txHash });
  const response = {
    status: 502,
    headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' },
    body: {
      type: 'about:blank',
      title: 'Bad Gateway',
      status: 502,
      detail: 'The gateway stopped before completing this paid request; the payment is being refunded.',
      ...operationIdFields(op),
      payment: { tx_hash: txHash, amount: h.amount },
      refund: { status: 'pending', amount: h.amount },
    },
  };
  if (!(await cas(['recovering'], 'completed', { response: JSON.stringify(response), tx_hash: txHash }))) return skipped;
  o.log.warn({ operationId: op, payer: h.payer, amount: h.amount }, 'refunded a paid request whose operation never completed');
  return { outcome: 'refunded', operationId: op };
}

/**
 * The id fields of a recovered operation's stored answer: `operation_id` always, plus the id under
 * the name its route answers with (`execution_id` for `exe_`, `job_id` for `job_`), so a replay
 * names the operation reserved with the payment, never a new one.
 */
export function operationIdFields(op: string): Record<string, string> {
  if (op.startsWith('exe_')) return { operation_id: op, execution_id: op, execution_status: 'FAILED' };
  if (op.startsWith('job_')) return { operation_id: op, job_id: op };
  return { operation_id: op };
}

/**
 * Runs {@link recoverOrphanedPayments} every `intervalMs` (default 60 s) under a Redis lock, so
 * one worker of a deployment sweeps at a time. Returns a stop function.
 */
export function startPaymentRecovery(o: PaymentRecoveryOptions & { intervalMs?: number }): () => void {
  const every = o.intervalMs ?? 60_000;
  const timer = setInterval(async () => {
    const lock = await o.redis.set(reconciliationKeys.recoveryLock(o.keys), '1', 'PX', Math.floor(every * 0.9), 'NX').catch(() => null);
    if (!lock) return;
    await recoverOrphanedPayments(o).catch((e) => o.log.error({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'payment recovery round failed'));
  }, every);
  timer.unref();
  return () => clearInterval(timer);
}
