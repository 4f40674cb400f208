import type { SettleResponse } from '@x402/core/types';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { eip3009ABI } from '@x402/evm';
import { BaseError, decodeFunctionData, serializeSignature, TransactionNotFoundError, type Hex, type PublicClient } from 'viem';
import { authorizationTx, authorizationUsed, trackSettlement, type Eip3009Authorization } from '@acg/treasury';
import { PaymentChainUnavailableError, PaymentInProgressError, PaymentSettlementPendingError } from './errors.js';
import type { AuthorizationRef, Reservations } from './reservation.js';
import type { SettledPayment } from './settle.js';

/** What {@link reconcile} found: the payment settled and this request now holds it (run it), or another request took it (replay its answer). */
export type ReconcileResult = { kind: 'settled'; payment: SettledPayment; settle: SettleResponse } | { kind: 'taken' };

/**
 * A reservation left by a crash or an unseen settlement (`settle_unknown`, or `pending`/`settled`
 * with no progress): reads EIP-3009 `authorizationState` on chain. Used → the payment settled:
 * the reservation moves to `settled` for `operationId` and the caller runs the operation now (it
 * never ran: the result would be stored). Unused, and its settlement transaction (stored
 * `tx_hash`) still known to the node → it may yet be mined: kept, PaymentSettlementPendingError
 * (503 naming it). Unused otherwise → nothing was charged: the reservation is released
 * and PaymentInProgressError thrown (retry). Chain unreachable → PaymentChainUnavailableError('unknown').
 */
export async function reconcile(
  deps: { redis: Redis; publicClient: PublicClient; reservations: Reservations; log: Logger; network: `${string}:${string}` },
  ref: AuthorizationRef,
  operationId: string,
  amount: string,
): Promise<ReconcileResult> {
  const { authKey, asset, from, nonce } = ref;
  const storedTx = (await deps.redis.hget(authKey, 'tx_hash')) as `0x${string}` | null;
  let used: boolean;
  try {
    used = await authorizationUsed(deps.publicClient, asset, from, nonce);
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
  const txHash = storedTx ?? (await authorizationTx(deps.publicClient, asset, from, nonce)) ?? '0x';
  const payment: SettledPayment = { operationId, payer: from, amount, txHash, network: deps.network };
  const ok = await deps.reservations.transition(authKey, operationId, ['pending', 'settle_unknown', 'settled'], 'settled', {
    tx_hash: payment.txHash,
    payer: payment.payer,
    amount,
  });
  if (!ok) return { kind: 'taken' };
  deps.log.warn({ operationId }, 'reconciled a settled payment whose operation had not run');
  // watched until final like any settlement (finality.ts), with the authorization read back from its transaction
  await trackReconciledSettlement(deps, ref, operationId, payment.txHash).catch((e: unknown) =>
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

/**
 * Tracks a settlement found on chain by {@link reconcile} until final (`trackSettlement`), as the
 * paywall tracks one it saw: the signed authorization it needs to resubmit the payment after a
 * reorg is read back from the settlement transaction's calldata (EIP-3009
 * `transferWithAuthorization`, with `(v, r, s)` or `bytes signature`, of this payer and nonce on
 * this asset). A settlement made another way (e.g. through a contract) is logged and left untracked.
 */
async function trackReconciledSettlement(
  deps: { redis: Redis; publicClient: PublicClient; reservations: Reservations; log: Logger },
  ref: AuthorizationRef,
  operationId: string,
  txHash: Hex,
): Promise<void> {
  const signed = /^0x[0-9a-fA-F]{64}$/.test(txHash) ? await signedAuthorizationOf(deps.publicClient, ref, txHash) : undefined;
  if (!signed) {
    deps.log.warn({ operationId, tx_hash: txHash }, 'a reconciled settlement is not a direct transferWithAuthorization: not tracked until final');
    return;
  }
  await trackSettlement(deps.redis, deps.reservations.keys, { operationId, txHash, authKey: ref.authKey, asset: ref.asset, ...signed });
}

/** The EIP-3009 authorization and signature `txHash` submitted to `ref.asset` for `ref.from` and `ref.nonce`, or undefined when it is not such a call. */
export async function signedAuthorizationOf(
  publicClient: PublicClient,
  ref: Pick<AuthorizationRef, 'asset' | 'from' | 'nonce'>,
  txHash: Hex,
): Promise<{ authorization: Eip3009Authorization; signature: Hex } | undefined> {
  const tx = await publicClient.getTransaction({ hash: txHash });
  if (tx.to?.toLowerCase() !== ref.asset.toLowerCase()) return undefined;
  let call: ReturnType<typeof decodeFunctionData<typeof eip3009ABI>>;
  try {
    call = decodeFunctionData({ abi: eip3009ABI, data: tx.input });
  } catch {
    return undefined;
  }
  if (call.functionName !== 'transferWithAuthorization') return undefined;
  const args = call.args as readonly unknown[];
  const [from, to, value, validAfter, validBefore, nonce] = args as [Hex, Hex, bigint, bigint, bigint, Hex];
  if (from.toLowerCase() !== ref.from.toLowerCase() || nonce.toLowerCase() !== ref.nonce.toLowerCase()) return undefined;
  const signature = args.length === 9 ? serializeSignature({ v: BigInt(args[6] as number), r: args[7] as Hex, s: args[8] as Hex }) : (args[6] as Hex);
  return {
    authorization: { from, to, value: value.toString(), validAfter: validAfter.toString(), validBefore: validBefore.toString(), nonce },
    signature,
  };
}
