import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { eip3009ABI } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { decodeFunctionData, serializeSignature, type Hex, type PublicClient } from 'viem';
import { authorizationTx, authorizationUsed, trackSettlement, type Eip3009Authorization } from '@acg/treasury';
import { authorizationWindowProblem } from '../authorizationWindow.js';
import { signedByPayer } from '../eip3009.js';
import { eip3009Authorization } from '../paymentHeader.js';
import type { AuthorizationRef } from '../reservation.js';
import type { AuthorizeResult, PaymentScheme, SchemeAuthorization, SchemeContext, SettledOnChain } from './strategy.js';

/**
 * The x402 `exact` scheme with EIP-3009 `transferWithAuthorization` (docs/decisions.md "x402
 * payments"): the exact price, settled before the operation runs (a failure is refunded). The
 * payload's `authorization` (from, to, value, validAfter, validBefore, nonce) is reserved per (asset,
 * from, nonce); a Permit2 payload of `exact` is refused (`unsupported_transfer_method`). The
 * requirements are built once per price (challenge.ts `Challenges.requirements`).
 */
export class ExactScheme implements PaymentScheme {
  readonly scheme = 'exact';
  readonly settles = 'before_run' as const;
  readonly server = new ExactEvmScheme();
  readonly reasons = { nonceUsed: 'invalid_exact_evm_nonce_already_used', invalidSignature: 'invalid_exact_evm_signature' };

  constructor(
    private readonly ctx: SchemeContext,
    /** the requirements per price, shared with the paywall's `requirements` (challenge.ts) */
    private readonly requirementsOf: (price: bigint) => PaymentRequirements,
  ) {}

  requirements(price: bigint): PaymentRequirements {
    return this.requirementsOf(price);
  }

  authorize(payload: PaymentPayload, matched: PaymentRequirements): AuthorizeResult {
    const auth = eip3009Authorization(payload);
    if (!auth) return { ok: false, reason: 'unsupported_transfer_method' };
    const problem = authorizationWindowProblem(auth, matched.maxTimeoutSeconds, { skewSeconds: this.ctx.terms.clockSkewSeconds });
    if (problem) return { ok: false, reason: problem };
    return { ok: true, auth: { payer: auth.from, nonce: auth.nonce, nonceSpace: matched.asset.toLowerCase() as `0x${string}` } };
  }

  signedByPayer(payload: PaymentPayload, matched: PaymentRequirements, _auth: SchemeAuthorization): boolean {
    const auth = eip3009Authorization(payload);
    return auth !== undefined && signedByPayer(payload, matched, auth);
  }

  async track(s: SettledOnChain): Promise<void> {
    const authorization = eip3009Authorization(s.payload);
    if (!authorization) return;
    await trackSettlement(this.ctx.redis, this.ctx.keys, {
      operationId: s.operationId,
      txHash: s.txHash,
      authKey: s.ref.authKey,
      asset: s.ref.asset,
      authorization,
      signature: (s.payload.payload as { signature: `0x${string}` }).signature,
    });
  }

  nonceUsed(ref: AuthorizationRef): Promise<boolean> {
    return authorizationUsed(this.ctx.publicClient, ref.asset, ref.from, ref.nonce);
  }

  settlementTx(ref: AuthorizationRef): Promise<`0x${string}` | undefined> {
    return authorizationTx(this.ctx.publicClient, ref.asset, ref.from, ref.nonce);
  }

  /**
   * Tracks a settlement found on chain until final, as the paywall tracks one it saw: the signed
   * authorization it needs to resubmit the payment after a reorg is read back from the settlement
   * transaction's calldata ({@link signedAuthorizationOf}). A settlement made another way (e.g.
   * through a contract) is logged and left untracked.
   */
  async trackReconciled(ref: AuthorizationRef, operationId: string, txHash: `0x${string}`): Promise<void> {
    const signed = /^0x[0-9a-fA-F]{64}$/.test(txHash) ? await signedAuthorizationOf(this.ctx.publicClient, ref, txHash) : undefined;
    if (!signed) {
      this.ctx.log.warn({ operationId, tx_hash: txHash }, 'a reconciled settlement is not a direct transferWithAuthorization: not tracked until final');
      return;
    }
    await trackSettlement(this.ctx.redis, this.ctx.keys, { operationId, txHash, authKey: ref.authKey, asset: ref.asset, ...signed });
  }
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
