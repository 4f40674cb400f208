import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { registerTestProvider, startTestProvider, type ReceivedCall, type TestProvider } from '../../gateway/test/providerServer.js';
import { paidPost, post } from '../../gateway/test/x402.js';
import { startWorker, type RunningWorker } from '../src/index.js';
import { waitForJob } from './waitForJob.js';

/**
 * docs/spec-notes.md 2.8's own job shape (`objective`, `budget_usdc`, `capabilities`, no steps) runs a provider
 * capability that accepts objectives (docs/decisions.md "Providers", Jobs), in the worker process, which
 * learns about the provider from Redis like any gateway.
 */

const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
let worker: RunningWorker;
let provider: TestProvider;

const report = (call: ReceivedCall) => ({ status: 200, body: { result: { summary: `report for: ${(call.body.input as { objective: string }).objective}` } } });

beforeAll(async () => {
  provider = await startTestProvider(report);
  const owner = privateKeyToAccount(generatePrivateKey());
  const objectiveSchema = { type: 'object', properties: { objective: { type: 'string' } }, required: ['objective'] };
  await registerTestProvider(t.url, owner, provider, {
    name: 'Objective Co',
    capabilities: [
      {
        name: 'objective_report',
        description: 'Writes a report for an objective.',
        price_usdc: '0.003',
        input_schema: objectiveSchema,
        output_schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] },
        example_request: { objective: 'probe' },
        accepts_objective: true,
      },
      {
        name: 'needs_text',
        description: 'Takes text, not an objective.',
        price_usdc: '0.001',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output_schema: { type: 'object' },
        example_request: { text: 'probe' },
      },
    ],
  });
  worker = await startWorker(t.config, { walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
});
afterAll(async () => {
  await worker?.close();
  await provider?.close();
});

describe('jobs with an objective', () => {
  it('runs the objective-accepting provider capability with {objective} and refunds the rest of the budget', async () => {
    const buyer = t.stack.payment.buyers[7];
    const before = await t.usdc(buyer.address);
    const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'Summarize wallet 0xabc',
      budget_usdc: 0.01,
      capabilities: ['intelligence.objective_report'],
    });
    expect(created.status).toBe(202);
    const job = await waitForJob(t.url, created.body.job_id, buyer, (j) => ['succeeded', 'failed'].includes(j.status) && j.refund?.status === 'sent');
    expect(job.status).toBe('succeeded');
    expect(job.steps).toHaveLength(1);
    expect(job.steps[0]).toMatchObject({
      capability_id: 'intelligence.objective_report',
      status: 'succeeded',
      result: { summary: 'report for: Summarize wallet 0xabc' },
    });
    const call = provider.calls.find((c) => c.body.execution_id === job.steps[0].execution_id)!;
    expect(call.verified).toBe(true);
    expect(call.body.input).toEqual({ objective: 'Summarize wallet 0xabc' });
    expect(job.spent_base_units).toBe('3000');
    expect(job.refund).toMatchObject({ status: 'sent', amount: '7000' });
    expect(before - (await t.usdc(buyer.address))).toBe(3000n);
  });

  it('refuses, before payment, a job without steps that lists a capability not accepting objectives, naming it', async () => {
    const r = await post(`${t.url}/api/v1/jobs`, {
      objective: 'x',
      budget_usdc: 0.01,
      capabilities: ['intelligence.objective_report', 'intelligence.needs_text'],
    });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ path: ['capabilities', 1], message: 'intelligence.needs_text does not accept an objective: give steps with its input' }]);
  });
});
