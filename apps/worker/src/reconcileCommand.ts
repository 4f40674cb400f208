import { parseArgs } from 'node:util';
import { configFromEnv } from '@acg/config';
import { createLogger } from '@acg/observability';
import { DEFAULT_RECONCILE_CONFIRMATIONS, reconcileBlocks, type ReconciliationCounts } from '@acg/reconciliation';
import { chainReconciliationFromEnv, chainReconciliationOptions, createWorkerServices, treasurySenderOf } from './worker.js';

/** Usage of the operator's `reconcile` command (docs/operating.md "Reconciliation from the chain"). */
export const RECONCILE_USAGE = 'usage: npm run reconcile -- --from <block> [--to <block>]   (default --to: the confirmed block)';

/** The block range of `reconcile`: `--from` (required) and `--to` (optional), non-negative integers, from ≤ to. Throws an Error with {@link RECONCILE_USAGE}. */
export function parseReconcileArgs(argv: readonly string[]): { from: bigint; to?: bigint } {
  let values: { from?: string; to?: string };
  try {
    ({ values } = parseArgs({ args: [...argv], options: { from: { type: 'string' }, to: { type: 'string' } }, strict: true }));
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${RECONCILE_USAGE}`);
  }
  const block = (name: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!/^[0-9]+$/.test(v)) throw new Error(`--${name} must be a block number (a non-negative integer)\n${RECONCILE_USAGE}`);
    return BigInt(v);
  };
  const from = block('from', values.from);
  const to = block('to', values.to);
  if (from === undefined) throw new Error(`--from is required\n${RECONCILE_USAGE}`);
  if (to !== undefined && to < from) throw new Error(`--to must not be below --from\n${RECONCILE_USAGE}`);
  return { from, ...(to !== undefined ? { to } : {}) };
}

/**
 * The operator's `reconcile` command: reconciles the payments of blocks `--from`..`--to` (default:
 * the confirmed block, head − PAYMENT_RECONCILE_CONFIRMATIONS, or `reconcileConfirmations` of
 * PAYMENT_FINALITY when unset) with the records, as the scheduled
 * job does, without moving its cursor; configuration from the environment like the worker's.
 * Resolves with the range and its counts (matched, repaired, deferred, undecided).
 */
export async function runReconcileCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ from: string; to: string } & ReconciliationCounts> {
  const range = parseReconcileArgs(argv);
  const config = configFromEnv(env);
  const settings = chainReconciliationFromEnv(env);
  const log = createLogger({ service: 'reconcile', level: config.logLevel, pretty: config.logPretty });
  const services = createWorkerServices(config, log);
  try {
    await services.redis.ping();
    const head = await services.paymentClient.getBlockNumber({ cacheTime: 0 });
    const options = chainReconciliationOptions(services, log, settings, treasurySenderOf(services));
    const to = range.to ?? head - BigInt(options.confirmations ?? DEFAULT_RECONCILE_CONFIRMATIONS);
    const counts = await reconcileBlocks(options, range.from, to);
    return { from: String(range.from), to: String(to), ...counts };
  } finally {
    await services.close();
  }
}
