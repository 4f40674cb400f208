import { startWorker, type RunningWorker } from '@acg/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../apps/gateway/test/harness.js';
import { usdcReader } from '../../../apps/gateway/test/x402.js';
import { createGatewayClient, GatewayError, SpendLimitExceededError, type JobRecord } from '../src/index.js';

let t: TestGateway;
let worker: RunningWorker;
beforeAll(async () => {
  t = await startTestGateway();
  worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50 } });
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

describe('client.jobs', () => {
  it('creates a job paid with its budget, reports progress while polling, and ends with the refund sent', async () => {
    const account = t.stack.payment.buyers[0];
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const before = await balanceOf(account.address);
    const client = createGatewayClient({ baseUrl: t.url, account, spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.01' } });
    const created = await client.jobs.create({
      objective: 'Balances twice',
      budget_usdc: 0.004,
      capabilities: ['intelligence.wallet_balances'],
      steps: [
        { capability_id: 'intelligence.wallet_balances', input: { address: account.address } },
        { capability_id: 'intelligence.wallet_balances', input: { address: t.stack.payment.treasury.address } },
      ],
    });
    expect(created.status).toBe('queued');
    const seen: JobRecord['status'][] = [];
    const job = await client.jobs.wait(created.job_id, { intervalMs: 50, onProgress: (j) => seen.push(j.status) });
    expect(job.status).toBe('succeeded');
    expect(seen.at(-1)).toBe('succeeded');
    expect(job.steps.every((s) => s.status === 'succeeded')).toBe(true);
    expect(job.refund).toMatchObject({ status: 'sent', amount: '2000' });
    expect(client.spent().baseUnits).toBe(4000n);
    expect(before - (await balanceOf(account.address))).toBe(2000n);
  });

  it('checks the budget against the spend limits before signing', async () => {
    const account = t.stack.payment.buyers[1];
    const client = createGatewayClient({ baseUrl: t.url, account, spendLimits: { totalUsdc: '0.001' } });
    await expect(
      client.jobs.create({
        objective: 'too big',
        budget_usdc: 0.002,
        capabilities: ['intelligence.wallet_balances'],
        steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: account.address } }],
      }),
    ).rejects.toBeInstanceOf(SpendLimitExceededError);
  });

  it('surfaces plan errors as GatewayError without paying', async () => {
    const client = createGatewayClient({ baseUrl: t.url, account: t.stack.payment.buyers[2] });
    const err = await client.jobs.create({ objective: 'x', budget_usdc: 0.01, capabilities: ['mev.nothing'] }).catch((e) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(422);
    expect(client.spent().baseUnits).toBe(0n);
  });
});
