/**
 * Jobs benchmark: the job runner's cost per step against a plain BullMQ job doing the
 * same work, measured in the same run on the same stack.
 *
 * - Ours: `jobs` jobs of `steps` steps each (`intelligence.wallet_balances` on the dev chain),
 *   created in the store and queued as the paid route does after settlement (payment itself is
 *   measured by the execute benchmark), run by `startWorker`'s job runner (concurrency 4): step
 *   bookkeeping, execution id reservation, budget checks, record writes, crash-safe adoption.
 * - Baseline: `jobs × steps` plain BullMQ jobs on another queue, concurrency 4, each calling the
 *   same Executor with the same input (same work, no job bookkeeping).
 * Reported: wall time per step (total wall time / steps) and the ratio ours/baseline.
 */
import { Executor } from '@acg/execution';
import { JobQueue, pendingStep, type StoredJob } from '@acg/jobs';
import { startWorker } from '@acg/worker';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { ulid } from 'ulid';
import type { TestGateway } from '../apps/gateway/test/harness.js';
import { fmt, fmtRatio, ratio, table } from './lib/stats.js';

export interface JobsBenchResult {
  steps: number;
  ours: { totalMs: number; perStepMs: number };
  baseline: { totalMs: number; perStepMs: number };
}

export async function benchJobs(gw: TestGateway, opts: { jobs?: number; steps?: number } = {}): Promise<JobsBenchResult> {
  const jobs = opts.jobs ?? 20;
  const steps = opts.steps ?? 5;
  const services = gw.gateway.services;
  const address = gw.stack.payment.buyers[0].address;
  const input = { address, chain: 'base' };

  // baseline: plain BullMQ, same Executor, same input
  const executor = new Executor(services);
  // warm-up (JIT, connections) so that neither side pays it
  for (let i = 0; i < 20; i++)
    await executor.runInput(`exe_${ulid()}`, 'intelligence.wallet_balances', input, { tx_hash: '0x00', amount: '1000', payer: address });
  const baseQueue = new Queue('bench-baseline', { connection: services.bullRedis, prefix: services.keys.bullPrefix() });
  // connections of our own for the baseline (BullMQ does not close connections it is given)
  const eventsConnection = services.bullRedis.duplicate();
  const workerConnection = services.bullRedis.duplicate();
  const baseEvents = new QueueEvents('bench-baseline', { connection: eventsConnection, prefix: services.keys.bullPrefix(), lastEventId: '0-0' });
  await baseEvents.waitUntilReady();
  const baseWorker = new Worker(
    'bench-baseline',
    async () => {
      await executor.runInput(`exe_${ulid()}`, 'intelligence.wallet_balances', input, { tx_hash: '0x00', amount: '1000', payer: address });
    },
    { connection: workerConnection, prefix: services.keys.bullPrefix(), concurrency: 4 },
  );
  await baseWorker.waitUntilReady();
  const total = jobs * steps;
  let done = 0;
  const allDone = new Promise<void>((resolve) => baseEvents.on('completed', () => ++done === total && resolve()));
  const b0 = performance.now();
  await baseQueue.addBulk(Array.from({ length: total }, (_, i) => ({ name: 'step', data: { i } })));
  await allDone;
  const baseMs = performance.now() - b0;
  await Promise.all([baseWorker.close(), baseEvents.close(), baseQueue.close()]);
  eventsConnection.disconnect();
  workerConnection.disconnect();

  // ours: the job runner
  const worker = await startWorker(gw.config, { refunds: false, walletMonitor: false, log: services.log });
  const queue = new JobQueue(services.keys, services.bullRedis);
  const ids: string[] = [];
  const now = new Date().toISOString();
  for (let j = 0; j < jobs; j++) {
    const job: StoredJob = {
      job_id: `job_${ulid()}`,
      objective: 'bench',
      capabilities: ['intelligence.wallet_balances'],
      budget: String(1000 * steps),
      spent: '0',
      status: 'queued',
      steps: Array.from({ length: steps }, () => pendingStep('intelligence.wallet_balances', input, 1000n)),
      result: null,
      error: null,
      payer: address,
      payment: { tx_hash: '0x00', amount: String(1000 * steps) },
      created_at: now,
      updated_at: now,
      refund_amount: null,
    };
    await services.jobs.store.create(job);
    ids.push(job.job_id);
  }
  const o0 = performance.now();
  await Promise.all(ids.map((id) => queue.enqueue(id)));
  for (;;) {
    const states = await Promise.all(ids.map((id) => services.jobs.store.get(id)));
    if (states.every((s) => s?.status === 'succeeded')) break;
    if (states.some((s) => s && s.status !== 'succeeded' && s.status !== 'running' && s.status !== 'queued')) throw new Error('a bench job did not succeed');
    await new Promise((r) => setTimeout(r, 5));
  }
  const oursMs = performance.now() - o0;
  await queue.close();
  await worker.close();
  return { steps: total, ours: { totalMs: oursMs, perStepMs: oursMs / total }, baseline: { totalMs: baseMs, perStepMs: baseMs / total } };
}

export function formatJobs(r: JobsBenchResult): string {
  return [
    `Jobs: ${r.steps} steps of intelligence.wallet_balances (multicall on the dev chain), concurrency 4 on both sides`,
    '',
    table(
      ['', 'total ms', 'ms per step'],
      [
        ['job runner (steps of jobs)', fmt(r.ours.totalMs, 0), fmt(r.ours.perStepMs, 2)],
        ['plain BullMQ job per step', fmt(r.baseline.totalMs, 0), fmt(r.baseline.perStepMs, 2)],
        ['ratio runner/plain', '', fmtRatio(ratio(r.ours.perStepMs, r.baseline.perStepMs))],
      ],
    ),
    '  (the runner polls are included: completion is detected by reading job records every 5 ms)',
  ].join('\n');
}
