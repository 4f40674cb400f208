import { succeededExecutionAnswer } from '@acg/execution';
import { recoverOrphanedPayments } from '@acg/reconciliation';
import type { TestGateway } from '../harness.js';

/** One crash-recovery round of `t`'s gateway with no age threshold (every in-flight reservation is orphaned). */
export async function sweep(t: TestGateway) {
  const { services } = t.gateway;
  return recoverOrphanedPayments({
    redis: services.redis,
    reversals: services.creditReversal,
    finishedAnswer: (op) => succeededExecutionAnswer(services.executions, op),
    keys: services.keys,
    publicClient: services.paymentClient,
    refunds: services.refunds,
    log: services.log,
    olderThanMs: 0,
  });
}
