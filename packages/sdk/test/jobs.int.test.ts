import { PERMIT2_ADDRESS, usdcAbi } from '@acg/devnet';
import { startWorker, type RunningWorker } from '@acg/worker';
import { createPublicClient, createWalletClient, http, maxUint256 } from 'viem';
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

  it('with schemes ["upto"] authorizes the budget and the job settles only what its steps spent, with no refund', async () => {
    const account = t.stack.payment.buyers[3];
    const pay = t.stack.payment;
    // an upto payer lets Permit2 move its USDC once (x402 `upto` EVM)
    const wallet = createWalletClient({ account, chain: pay.chain, transport: http(pay.rpcUrl) });
    await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] }),
    });
    const balanceOf = usdcReader(pay.rpcUrl, pay.usdc);
    const before = await balanceOf(account.address);
    const client = createGatewayClient({ baseUrl: t.url, account, schemes: ['upto'], spendLimits: { totalUsdc: '0.01' } });
    const created = await client.jobs.create({
      objective: 'Balances once, on upto',
      budget_usdc: 0.004,
      capabilities: ['intelligence.wallet_balances'],
      steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: account.address } }],
    });
    // the 202 settles nothing yet: the ceiling counts against the limits (no PAYMENT-RESPONSE says less)
    expect(client.spent().baseUnits).toBe(4000n);
    let job = await client.jobs.wait(created.job_id, { intervalMs: 50 });
    for (let i = 0; i < 300 && job.payment.status !== 'settled' && job.payment.status !== 'final'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = await client.jobs.get(created.job_id);
    }
    expect(job.status).toBe('succeeded');
    expect(job.payment).toMatchObject({ scheme: 'upto', ceiling: '4000', amount: '1000', status: expect.stringMatching(/^(settled|final)$/) });
    expect(job.refund).toBeNull();
    expect(before - (await balanceOf(account.address))).toBe(1000n);
  });
});
