import type { CreditReversal } from './refunds.js';

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
