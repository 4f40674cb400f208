import type { RedisKeys } from '@acg/redis';

/**
 * Redis key names of crash recovery and chain reconciliation. Each takes the deployment's
 * {@link RedisKeys} (its prefix, `acg:` or `{acg}:` on a Redis Cluster) first. The names are the
 * ones `@acg/payments` used before the split (issue 34).
 */
export const reconciliationKeys = {
  /** The last chain reconciliation report (JSON: cursor block, counts; `/metrics` and `/status` read it). */
  chainReconciliationReport: (keys: RedisKeys): string => `${keys.prefix}pay:chain-reconciliation`,
  /** Lease of the chain reconciliation job, so one process of a deployment runs it at a time. */
  chainReconciliationLease: (keys: RedisKeys): string => `${keys.prefix}pay:chain-reconciliation:lease`,
  /** Lock of one crash-recovery round (NX, expires before the next round). */
  recoveryLock: (keys: RedisKeys): string => `${keys.prefix}pay:recovery-lock`,
};
