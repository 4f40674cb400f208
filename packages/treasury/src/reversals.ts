/**
 * Undoes what a paid operation credited before its payment is refunded (README "x402 payments":
 * the outcome of a paid call is one decision): called by the paywall when it decides a refund, and
 * by the crash-recovery sweep, before the refund is queued; retried until Redis answers, and
 * idempotent. `already_refunded`: the payer was refunded for this operation another way (a
 * provider dispute), so no second refund is queued. The gateway's composes the provider ledger
 * (`exe_`) and metered accounts (`dep_`).
 */
export interface CreditReversal {
  reverse(p: { operationId: string; payer: `0x${string}`; amount: string }): Promise<'reversed' | 'none' | 'already_refunded' | 'paid_out'>;
}

/**
 * One {@link CreditReversal} from several, each owning the operations whose id starts with its
 * prefix (e.g. `exe_` → the provider ledger, `dep_` → metered accounts); other operations credit
 * nothing (`none`).
 */
export function reversalsByPrefix(byPrefix: Record<string, CreditReversal['reverse']>): CreditReversal {
  return {
    async reverse(p) {
      for (const [prefix, reverse] of Object.entries(byPrefix)) if (p.operationId.startsWith(prefix)) return reverse(p);
      return 'none';
    },
  };
}
