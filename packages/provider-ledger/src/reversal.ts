import { reversalsByPrefix, type CreditReversal } from '@acg/treasury';
import type { ProviderLedger } from './ledger.js';

/** What {@link paymentReversals} needs of the metered accounts (`Ledger` of @acg/accounts). */
export interface DepositAccounts {
  reverseCredit(address: string, amount: bigint, item: string, ref: string): Promise<'reversed' | 'none' | 'paid_out'>;
}

/**
 * The gateway's {@link CreditReversal} (README "Money rules"): before a paid operation's payment
 * is refunded (by the paywall or the crash-recovery sweep), an execution (`exe_`) loses its
 * provider credit ({@link ProviderLedger.reverseCredit}) and a deposit (`dep_`) its account
 * credit (reference = the deposit's operation id). Other operations credit nothing.
 */
export function paymentReversals(ledger: Pick<ProviderLedger, 'reverseCredit'>, accounts?: DepositAccounts): CreditReversal {
  return reversalsByPrefix({
    exe_: (p) => ledger.reverseCredit(p.operationId),
    ...(accounts ? { dep_: (p) => accounts.reverseCredit(p.payer, BigInt(p.amount), 'deposit', p.operationId) } : {}),
  });
}
