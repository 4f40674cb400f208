import type { ExecutionStore } from '@acg/execution';
import type { JobStore } from '@acg/jobs';
import { readRefund } from '@acg/treasury';
import type { ProviderStore } from '@acg/provider-directory';
import type { ProviderLedger } from '@acg/provider-ledger';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** What {@link providerCreditRestorer} reads and writes. */
export interface ProviderCreditRestorerOptions {
  redis: Redis;
  keys: RedisKeys;
  executions: Pick<ExecutionStore, 'get'>;
  /** the job records (a job's payment pays its steps); without it a job's step credits are not checked */
  jobs?: Pick<JobStore, 'get'>;
  ledger: Pick<ProviderLedger, 'entry' | 'credit'>;
  store: Pick<ProviderStore, 'get'>;
  log: Logger;
}

/**
 * The chain reconciliation's `restoreCredit` (`@acg/payments` `ChainReconciliationOptions`): the
 * provider credit of a SUCCEEDED provider execution (`exe_` with `provider`), restored from the
 * execution record when its ledger entry is missing. Price = the payment's amount minus the
 * partial refund of a routed call (its refund record), as the executor credited it; the
 * provider's address from its registration. `matched`: an entry (or a reversal's tombstone) is
 * there, or no credit is due (another operation, a FAILED execution, a built-in capability);
 * `undecided`: the execution record or the provider is gone.
 *
 * A job's payment (`job_`, with `jobs`): every step the job record shows `succeeded` is checked
 * the same way from its execution record (a provider step's credit, price = what the step was
 * charged, `payment.amount` of its record, paid by the job's payer with the job's payment); the
 * worst outcome of its steps is the job's. Each credit is keyed by its execution id, so a restore
 * never credits twice (and a reversal's tombstone is respected).
 */
export function providerCreditRestorer(o: ProviderCreditRestorerOptions): (operationId: string) => Promise<'matched' | 'repaired' | 'undecided'> {
  const execution = executionCreditRestorer(o);
  return async (operationId) => {
    if (operationId.startsWith('job_') && o.jobs) {
      const job = await o.jobs.get(operationId);
      if (!job) {
        o.log.error({ alert: 'chain_reconciliation_undecided', operationId }, 'a completed paid job has no record: its step credits cannot be checked');
        return 'undecided';
      }
      const outcomes: ('matched' | 'repaired' | 'undecided')[] = [];
      for (const step of job.steps) if (step.status === 'succeeded' && step.execution_id) outcomes.push(await execution(step.execution_id));
      return outcomes.includes('undecided') ? 'undecided' : outcomes.includes('repaired') ? 'repaired' : 'matched';
    }
    return execution(operationId);
  };
}

/** The restore of one execution's provider credit (an x402 execution, or a job's step). */
function executionCreditRestorer(o: ProviderCreditRestorerOptions): (operationId: string) => Promise<'matched' | 'repaired' | 'undecided'> {
  return async (operationId) => {
    if (!operationId.startsWith('exe_')) return 'matched';
    const record = await o.executions.get(operationId);
    if (!record) {
      o.log.error({ alert: 'chain_reconciliation_undecided', operationId }, 'a completed paid execution has no record: its provider credit cannot be checked');
      return 'undecided';
    }
    if (record.status !== 'SUCCEEDED' || !record.provider) return 'matched';
    if (await o.ledger.entry(operationId)) return 'matched';
    const provider = await o.store.get(record.provider.provider_id);
    if (!provider || !record.payer) {
      o.log.error({ alert: 'chain_reconciliation_undecided', operationId }, 'a missing provider credit cannot be restored: provider or payer unknown');
      return 'undecided';
    }
    // a routed x402 call's refund above the answering price (a job step owes none: its record has no refund)
    const refunded = record.job_id ? 0n : BigInt((await readRefund(o.redis, o.keys, operationId))?.amount ?? '0');
    await o.ledger.credit({
      execution_id: operationId,
      provider_id: provider.provider_id,
      provider_address: provider.address,
      capability_id: record.capability_id,
      payer: record.payer as `0x${string}`,
      price: BigInt(record.payment.amount) - refunded,
      payment_tx_hash: record.payment.tx_hash as `0x${string}`,
    });
    // a reversal's tombstone makes the credit a no-op: then nothing was due
    if (!(await o.ledger.entry(operationId))) return 'matched';
    o.log.warn({ operationId, provider_id: provider.provider_id }, 'restored a provider credit missing for a succeeded execution');
    return 'repaired';
  };
}
