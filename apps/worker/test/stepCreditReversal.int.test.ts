import type { ProviderCredit } from '@acg/provider-directory';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerTestProvider, startTestProvider, type TestProvider } from '../../gateway/test/providerServer.js';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { paidPost } from '../../gateway/test/x402.js';
import { startWorker, type RunningWorker } from '../src/index.js';
import { waitForJob } from './waitForJob.js';

/**
 * Issue 36 item 10: a job step's provider credit followed by a lost record (the process died, or the
 * save failed, after the credit) is reversed before the step runs again under a new execution id, so
 * the provider is credited exactly for what the job was charged. The loss is made here by a credit
 * that lands in the real ledger and then throws (the record is never saved); BullMQ retries the job.
 */
const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
let worker: RunningWorker;
let provider: TestProvider;
let providerId: string;
/** executions whose credit lands and then throws, once each run of the test that arms it */
let failAfterCredit = 0;
/** what the provider answers after its first call: 200 (the step succeeds on its rerun) or 500 (it fails) */
let secondAnswer = 200;
let calls = 0;

const PRICE = 2000n; // 0.002 USDC
const BUDGET = 10_000n; // 0.01 USDC
const ended = (j: any) => ['succeeded', 'failed'].includes(j.status) && j.refund?.status === 'sent';

beforeAll(async () => {
  provider = await startTestProvider(() => ({ status: calls++ === 0 ? 200 : secondAnswer, body: { result: { ok: true } } }));
  const owner = privateKeyToAccount(generatePrivateKey());
  const registered = await registerTestProvider(t.url, owner, provider, {
    name: 'Flaky Save Co',
    capabilities: [
      {
        name: 'flaky_save',
        description: 'Answers once, then as the test says.',
        price_usdc: '0.002',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        output_schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        example_request: { text: 'probe' },
      },
    ],
  });
  providerId = registered.provider_id;
  worker = await startWorker(t.config, {
    walletMonitor: false,
    jobs: { backoffMs: 50, lockDurationMs: 2_000 },
    earnings: {
      async credit(e: ProviderCredit) {
        await worker.services.providerLedger.credit(e);
        if (failAfterCredit > 0) {
          failAfterCredit--;
          throw new Error('test: the record of this credited execution is lost');
        }
      },
    },
  });
});
afterAll(async () => {
  await worker?.close();
  await provider?.close();
});

async function runJob(buyer: (typeof t.stack.payment.buyers)[number]) {
  calls = 0;
  failAfterCredit = 1;
  const before = await t.usdc(buyer.address);
  const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
    objective: 'one provider step',
    budget_usdc: Number(BUDGET) / 1e6,
    capabilities: ['intelligence.flaky_save'],
    steps: [{ capability_id: 'intelligence.flaky_save', input: { text: 'x' } }],
  });
  expect(created.status).toBe(202);
  const job = await waitForJob(t.url, created.body.job_id, buyer, ended);
  return { job, paid: before - (await t.usdc(buyer.address)) };
}

describe('a job step whose record was lost after its credit', () => {
  it('reruns as a new execution that succeeds: the provider is credited once, for the execution the job was charged for', async () => {
    secondAnswer = 200;
    const before = await worker.services.providerLedger.balance(providerId);
    const { job, paid } = await runJob(t.stack.payment.buyers[3]!);
    expect(job.status).toBe('succeeded');
    expect(calls).toBe(2); // the lost execution and its rerun
    expect(job.spent_base_units).toBe(PRICE.toString());
    expect(paid).toBe(PRICE); // budget paid, the rest refunded on-chain
    const after = await worker.services.providerLedger.balance(providerId);
    const { share } = (await worker.services.providerLedger.entry(job.steps[0].execution_id))!;
    expect(BigInt(after.held) - BigInt(before.held)).toBe(share);
  });

  it('reruns as a new execution that fails: no credit is left and the whole budget comes back', async () => {
    secondAnswer = 500;
    const before = await worker.services.providerLedger.balance(providerId);
    const { job, paid } = await runJob(t.stack.payment.buyers[4]!);
    expect(job.status).toBe('failed');
    expect(calls).toBe(2);
    expect(job.spent_base_units).toBe('0');
    expect(paid).toBe(0n);
    const after = await worker.services.providerLedger.balance(providerId);
    expect(BigInt(after.held) - BigInt(before.held)).toBe(0n);
  });
});
