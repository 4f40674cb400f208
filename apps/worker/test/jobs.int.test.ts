import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defineCapability } from '@acg/capabilities';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoCapabilityParameters } from '../../../packages/capabilities/test/echoCapability.js';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { challenge, officialPayload, paidPost, paymentHeader, post, readExecution, readJob, walletBalancesRequest } from '../../gateway/test/x402.js';
import { Scrape } from '../../../packages/observability/test/prometheus.js';
import { startWorker, type RunningWorker } from '../src/index.js';
import { waitForJob } from './waitForJob.js';

const PRICE = 1000n; // intelligence.wallet_balances
const METRICS_TOKEN = 'worker-metrics-token-0123456789';

/** The worker's `/metrics` (WORKER_METRICS_PORT), parsed. */
async function workerMetrics(): Promise<Scrape> {
  const res = await fetch(worker.metrics.server!.url, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return new Scrape(await res.text());
}

/** A capability added at run time (one definition, given to both the gateway and the worker). */
const shout = defineCapability({
  ...echoCapabilityParameters('intelligence.shout_test', { example: { text: 'hello', result: 'HELLO' } }),
  name: 'Shout (test)',
  description: 'Returns the text it is given, upper-cased.',
  async run(input) {
    return { text: input.text.toUpperCase() };
  },
});
const t = useTestGateway({ capabilities: [shout] });
let worker: RunningWorker;
type Json = any;

const jobBody = (budget: number, steps: number, address: string) => ({
  objective: 'Read balances a few times',
  budget_usdc: budget,
  capabilities: ['intelligence.wallet_balances'],
  steps: Array.from({ length: steps }, () => walletBalancesRequest(address)),
});

const createJob = (buyer: LocalAccount, body: unknown) => paidPost(buyer, `${t.url}/api/v1/jobs`, body);
const ended = (j: Json) => ['succeeded', 'failed', 'cancelled', 'budget_exhausted'].includes(j.status) && (!j.refund || j.refund.status === 'sent');

beforeAll(async () => {
  // WORKER_METRICS_PORT=0 (a free port) with METRICS_TOKEN: the worker's own GET /metrics listener
  const metrics = { ...t.config.metrics, workerPort: 0, token: METRICS_TOKEN };
  worker = await startWorker({ ...t.config, metrics }, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
});
afterAll(async () => {
  await worker?.close();
});

describe('jobs', () => {
  it('runs a 3-step job; spent + refunded equals the budget to the base unit', async () => {
    const buyer = t.stack.payment.buyers[0];
    const before = await t.usdc(buyer.address);
    const metricsBefore = await workerMetrics();
    const created = await createJob(buyer, jobBody(0.005, 3, buyer.address));
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('queued');
    expect(created.body.job_id).toMatch(/^job_[0-9A-Z]{26}$/);
    expect(created.headers.get('location')).toBe(created.body.poll_url);
    const job = await waitForJob(t.url, created.body.job_id, buyer, ended);
    expect(job.status).toBe('succeeded');
    expect(job.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(new Set(job.steps.map((s: Json) => s.execution_id)).size).toBe(3);
    expect(job.spent_base_units).toBe((3n * PRICE).toString());
    expect(job.refund).toMatchObject({ status: 'sent', amount: '2000' });
    expect(job.refund.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(BigInt(job.spent_base_units) + BigInt(job.refund.amount)).toBe(BigInt(job.budget_base_units));
    expect(before - (await t.usdc(buyer.address))).toBe(3n * PRICE);
    // every step is a real execution record paid from the job's budget
    const exe = await readExecution(t.url, job.steps[0].execution_id, buyer);
    expect(exe).toMatchObject({ status: 'SUCCEEDED', job_id: job.job_id, payment: { amount: '1000' } });
    // the worker's metrics moved with it: 3 steps, 3 executions, 1 job ended, 1 refund queued (the gateway's refund worker sends it)
    const metrics = await workerMetrics();
    const delta = (name: string, labels: Record<string, string> = {}) => metrics.value(name, labels) - metricsBefore.value(name, labels);
    expect(delta('acg_job_steps_total', { outcome: 'succeeded' })).toBe(3);
    expect(delta('acg_executions_total', { capability: 'intelligence.wallet_balances', outcome: 'succeeded' })).toBe(3);
    expect(delta('acg_jobs_finished_total', { status: 'succeeded' })).toBe(1);
    expect(delta('acg_refunds_queued_total')).toBe(1);
    expect((await fetch(worker.metrics.server!.url)).status).toBe(401);
  });

  it('stops with budget_exhausted when the next step does not fit, and refunds the rest', async () => {
    const buyer = t.stack.payment.buyers[1];
    const before = await t.usdc(buyer.address);
    const created = await createJob(buyer, jobBody(0.0025, 3, buyer.address));
    expect(created.status).toBe(202);
    const job = await waitForJob(t.url, created.body.job_id, buyer, ended);
    expect(job.status).toBe('budget_exhausted');
    expect(job.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped']);
    expect(job.spent_base_units).toBe('2000');
    expect(job.refund).toMatchObject({ status: 'sent', amount: '500' });
    expect(before - (await t.usdc(buyer.address))).toBe(2000n);
  });

  it('refuses bad plans before any payment', async () => {
    const buyer = t.stack.payment.buyers[2];
    const before = await t.usdc(buyer.address);
    const cases: [unknown, number][] = [
      [{ ...jobBody(0.01, 1, buyer.address), capabilities: ['mev.nothing'], steps: undefined }, 422],
      [{ ...jobBody(0.01, 1, buyer.address), capabilities: ['mev.nothing'] }, 400],
      [{ ...jobBody(0.01, 1, buyer.address), capabilities: ['mev.liquidation_search'], steps: undefined }, 422],
      [{ ...jobBody(0.01, 1, buyer.address), steps: [{ capability_id: 'gateway.registry', input: {} }] }, 400],
      [jobBody(0.0005, 1, buyer.address), 422],
      [{ ...jobBody(0.01, 1, buyer.address), steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: 'x' } }] }, 400],
      [{ objective: 'no budget', capabilities: ['intelligence.wallet_balances'] }, 400],
      [{ ...jobBody(0.01, 1, buyer.address), capabilities: ['intelligence.wallet_balances'], steps: undefined }, 422],
    ];
    for (const [body, status] of cases) {
      const r = await post(`${t.url}/api/v1/jobs`, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.contentType).toContain('application/problem+json');
    }
    expect(await t.usdc(buyer.address)).toBe(before);
  });

  it('lets only the payer cancel, before the next step, and refunds what is left', async () => {
    const buyer = t.stack.payment.buyers[3];
    const other = t.stack.payment.buyers[4];
    // a second worker pauses before each step so the cancel lands between steps
    await worker.close();
    let release: () => void = () => undefined;
    worker = await startWorker(t.config, {
      refunds: false,
      walletMonitor: false,
      jobs: { lockDurationMs: 2_000, beforeStep: async (_j, i) => (i === 1 ? new Promise<void>((r) => (release = r)) : undefined) },
    });
    const created = await createJob(buyer, jobBody(0.01, 3, buyer.address));
    const id = created.body.job_id;
    await waitForJob(t.url, id, buyer, (j) => j.steps[0].status === 'succeeded');
    const message = `Cancel job ${id}`;
    const intruder = await post(`${t.url}/api/v1/jobs/${id}/cancel`, { signature: await other.signMessage({ message }) });
    expect(intruder.status).toBe(403);
    expect((await post(`${t.url}/api/v1/jobs/${id}/cancel`, {})).status).toBe(401);
    const ok = await post(`${t.url}/api/v1/jobs/${id}/cancel`, { signature: await buyer.signMessage({ message }) });
    expect(ok.status).toBe(202);
    expect(ok.body.cancel_requested).toBe(true);
    release();
    const job = await waitForJob(t.url, id, buyer, ended);
    // step 2 had already started when the cancel arrived: it finishes; step 3 never starts
    expect(job.status).toBe('cancelled');
    expect(job.steps[2].status).toBe('skipped');
    const spent = BigInt(job.spent_base_units);
    expect(spent + BigInt(job.refund.amount)).toBe(10_000n);
    expect((await post(`${t.url}/api/v1/jobs/${id}/cancel`, { signature: await buyer.signMessage({ message }) })).status).toBe(409);
    await worker.close();
    worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
  });

  it('replays the creation for the same payment and never creates a second job', async () => {
    const buyer = t.stack.payment.buyers[5];
    const body = jobBody(0.002, 1, buyer.address);
    const pr = await challenge(`${t.url}/api/v1/jobs`, body);
    const header = paymentHeader(await officialPayload(buyer, pr));
    const first = await post(`${t.url}/api/v1/jobs`, body, { 'PAYMENT-SIGNATURE': header });
    const second = await post(`${t.url}/api/v1/jobs`, body, { 'PAYMENT-SIGNATURE': header });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.job_id).toBe(first.body.job_id);
    expect(second.headers.get('location')).toBe(first.body.poll_url);
  });

  it('survives a worker killed mid-step: the restarted worker finishes with no step run or paid twice', async () => {
    const buyer = t.stack.payment.buyers[6];
    await worker.close();
    const script = fileURLToPath(new URL('./fixtures/killableWorker.ts', import.meta.url));
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, ACG_TEST_CONFIG: JSON.stringify({ ...t.config, payment: { ...t.config.payment, chain: undefined } }), PAUSE_AFTER_STEP: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const paused = new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('PAUSED') && resolve());
      child.on('exit', (code) => reject(new Error(`worker exited early (${code})`)));
    });
    const created = await createJob(buyer, jobBody(0.004, 3, buyer.address));
    const id = created.body.job_id;
    await paused;
    // step 2 ran and its execution is stored, but the job record still says "running"
    const mid: Json = await readJob(t.url, id, buyer);
    expect(mid.steps[1].status).toBe('running');
    const ran: Json = await readExecution(t.url, mid.steps[1].execution_id, buyer);
    expect(ran.status).toBe('SUCCEEDED');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const metrics = { ...t.config.metrics, workerPort: 0, token: METRICS_TOKEN };
    worker = await startWorker({ ...t.config, metrics }, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
    const job = await waitForJob(t.url, id, buyer, ended);
    expect(job.status).toBe('succeeded');
    // the step that ran before the crash was adopted, not run again (same execution, same record)
    expect(job.steps[1].execution_id).toBe(mid.steps[1].execution_id);
    expect(job.steps[1].attempts).toBe(1);
    const counted = await workerMetrics();
    expect(counted.value('acg_job_steps_total', { outcome: 'adopted' })).toBe(1);
    expect(counted.value('acg_job_steps_total', { outcome: 'succeeded' })).toBe(2);
    const after: Json = await readExecution(t.url, mid.steps[1].execution_id, buyer);
    expect(after.created_at).toBe(ran.created_at);
    expect(job.spent_base_units).toBe('3000');
    expect(job.refund).toMatchObject({ status: 'sent', amount: '1000' });
  });

  it('runs steps of a capability added at run time (the `capabilities` option, as the gateway has)', async () => {
    const buyer = t.stack.payment.buyers[7];
    await worker.close();
    worker = await startWorker(t.config, { capabilities: [shout], refunds: false, walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
    const created = await createJob(buyer, {
      objective: 'Shout twice',
      budget_usdc: 0.002,
      capabilities: ['intelligence.shout_test'],
      steps: [
        { capability_id: 'intelligence.shout_test', input: { text: 'one' } },
        { capability_id: 'intelligence.shout_test', input: { text: 'two' } },
      ],
    });
    expect(created.status).toBe(202);
    const job = await waitForJob(t.url, created.body.job_id, buyer, ended);
    expect(job.status).toBe('succeeded');
    expect(job.spent_base_units).toBe('2000');
    const results = await Promise.all(job.steps.map((s: Json) => readExecution(t.url, s.execution_id, buyer)));
    expect(results.map((r: Json) => [r.status, r.result])).toEqual([
      ['SUCCEEDED', { text: 'ONE' }],
      ['SUCCEEDED', { text: 'TWO' }],
    ]);
  });
});
