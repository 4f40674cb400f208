import type { ChildProcess } from 'node:child_process';
import { standaloneEnv, startEntry } from './entries.js';
import { freePort, startDevStack, type DevStack } from '@acg/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidPost } from '../../gateway/test/x402.js';
import { waitForJob } from './waitForJob.js';

// docs/architecture.md "Shape": gateways and workers are separate stateless processes sharing one Redis. Here two
// gateways and one worker run as real processes (their standalone entries, environment only).
let stack: DevStack;
const children: ChildProcess[] = [];
const gatewayUrls: string[] = [];

function run(entry: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  return startEntry(children, entry, env, ready);
}

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  const env = standaloneEnv(stack);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    await run('../../gateway/src/main.ts', { ...env, GATEWAY_PORT: String(port) }, /gateway http/);
    gatewayUrls.push(`http://127.0.0.1:${port}`);
  }
  await run('../src/main.ts', env, /worker up/);
});
afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
  await stack?.stop();
});

describe('separate gateway and worker processes on one Redis', () => {
  it('a job paid on one gateway is run by the worker process and polled on the other gateway, refund included', async () => {
    const buyer = stack.payment.buyers[0];
    const created = await paidPost(buyer, `${gatewayUrls[0]}/api/v1/jobs`, {
      objective: 'across processes',
      budget_usdc: 0.002,
      capabilities: ['intelligence.wallet_balances'],
      steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address } }],
    });
    expect(created.status).toBe(202);
    const job = await waitForJob(gatewayUrls[1], created.body.job_id, buyer, (j) => j.status === 'succeeded' && j.refund?.status === 'sent');
    expect(job).toMatchObject({ status: 'succeeded', refund: { status: 'sent', amount: '1000' } });
  });
});
