import type { SettleResponse } from '@x402/core/types';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BaseError, TransactionNotFoundError, type PublicClient } from 'viem';
import { PaymentChainUnavailableError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
import type { AuthorizationRef, Reservations } from './reservation.js';
import type { PaymentScheme } from './schemes/strategy.js';
import type { SettledPayment } from './settle.js';

/** What {@link reconcile} found: the payment settled and this request now holds it (run it), or another request took it (replay its answer). */
export type ReconcileResult = { kind: 'settled'; payment: SettledPayment; settle: SettleResponse } | { kind: 'taken' };

/**
 * A reservation left by a crash or an unseen settlement (`settle_unknown`, or `pending`/`settled`
 * with no progress): asks its scheme whether the nonce was used on chain (`PaymentScheme.nonceUsed`:
 * EIP-3009 `authorizationState` for `exact`). Used → the payment settled:
 * the reservation moves to `settled` for `operationId` and the caller runs the operation now (it
 * never ran: the result would be stored). Unused, and its settlement transaction (stored
 * `tx_hash`) still known to the node → it may yet be mined: kept, PaymentSettlementPendingError
 * (503 naming it). Unused otherwise → nothing was charged: the reservation is released
 * and PaymentInProgressError thrown (retry). Chain unreachable → PaymentChainUnavailableError('unknown').
 */
export async function reconcile(
  deps: { redis: Redis; publicClient: PublicClient; reservations: Reservations; log: Logger; network: `${string}:${string}` },
  scheme: Pick<PaymentScheme, 'nonceUsed' | 'settlementTx' | 'trackReconciled'>,
  ref: AuthorizationRef,
  operationId: string,
  amount: string,
): Promise<ReconcileResult> {
  const { authKey, from, nonce } = ref;
  const storedTx = (await deps.redis.hget(authKey, 'tx_hash')) as `0x${string}` | null;
  let used: boolean;
  try {
    used = await scheme.nonceUsed(ref);
  } catch (e) {
    deps.log.warn({ err: (e as Error).message?.slice(0, 200), operationId }, 'cannot reconcile a payment: payment chain unreachable');
    throw new PaymentChainUnavailableError('unknown');
  }
  if (!used) {
    // broadcast and still waiting in the node (stuck or slow): it may yet be mined, so not released
    if (storedTx && (await settlementInPool(deps.publicClient, storedTx)))
      throw new PaymentSettlementPendingError({ txHash: storedTx, authorization: { from, nonce } });
    await deps.reservations.release(authKey, operationId, ['pending', 'settle_unknown', 'settled']);
    throw new PaymentInProgressError();
  }
  const txHash = storedTx ?? (await scheme.settlementTx(ref)) ?? '0x';
  const payment: SettledPayment = { operationId, payer: from, amount, txHash, network: deps.network };
  const ok = await deps.reservations.transition(authKey, operationId, ['pending', 'settle_unknown', 'settled'], 'settled', {
    tx_hash: payment.txHash,
    payer: payment.payer,
    amount,
  });
  if (!ok) return { kind: 'taken' };
  deps.log.warn({ operationId }, 'reconciled a settled payment whose operation had not run');
  // watched until final like any settlement (finality.ts), with the authorization read back from its transaction
  await scheme
    .trackReconciled(ref, operationId, payment.txHash)
    .catch((e: unknown) =>
      deps.log.error(
        { operationId, tx_hash: payment.txHash, err: String((e as Error)?.message).slice(0, 200) },
        'a reconciled settlement could not be tracked until final',
      ),
    );
  return { kind: 'settled', payment, settle: { success: true, transaction: payment.txHash, network: deps.network, payer: payment.payer } };
}

/**
 * Whether the settlement `txHash` is still pending in the node's pool: a settlement that may yet
 * be mined, so its reservation must not be released. A failed read counts
 * as known (a failed read proves nothing; the caller tries again later).
 */
export async function settlementInPool(publicClient: PublicClient, txHash: `0x${string}`): Promise<boolean> {
  try {
    const tx = await publicClient.getTransaction({ hash: txHash });
    return tx.blockNumber === null; // mined (and the authorization still unused: it reverted) is not pending
  } catch (e) {
    return !(e instanceof TransactionNotFoundError || (e instanceof BaseError && Boolean(e.walk((x) => x instanceof TransactionNotFoundError))));
  }
}
