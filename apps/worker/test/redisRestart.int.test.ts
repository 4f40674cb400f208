import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, freePort, pingRedis, spawnManaged, type ManagedProcess } from '@acg/devnet';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../gateway/test/harness.js';
import { startWorker, type RunningWorker } from '../src/index.js';

// A Redis this test owns, with AOF persistence (appendfsync always), restarted mid-test.
let dir: string;
let port: number;
let redis: ManagedProcess | undefined;
let t: TestGateway;
let worker: RunningWorker | undefined;

async function startRedis(): Promise<void> {
  redis = spawnManaged(findRedisServer()!, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction'], { name: `redis:${port}` });
  for (let i = 0; i < 100 && !(await pingRedis('127.0.0.1', port, 200)); i++) await new Promise((r) => setTimeout(r, 50));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'acg-redis-aof-'));
  port = await freePort();
  await startRedis();
  t = await startTestGateway({ config: { redisUrl: `redis://127.0.0.1:${port}` } });
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
  redis?.child.kill('SIGKILL');
  await redis?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('Redis restart with persistence', () => {
  it('loses no queued job: a job created before a hard Redis restart still runs to the end', async () => {
    const buyer = t.stack.payment.buyers[0];
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer as never });
    const res = await wrapFetchWithPayment(fetch, client)(`${t.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        objective: 'survive a restart',
        budget_usdc: 0.002,
        capabilities: ['intelligence.wallet_balances'],
        steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address } }],
      }),
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };

    // no worker yet: the job waits in the queue; now kill Redis hard and start it again from its AOF
    redis!.child.kill('SIGKILL');
    await redis!.exited;
    await startRedis();

    worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50 } });
    let job: { status: string; refund: { status: string } | null } | undefined;
    for (let i = 0; i < 300; i++) {
      const r = await fetch(`${t.url}/api/v1/jobs/${job_id}`);
      if (r.ok) {
        job = (await r.json()) as typeof job;
        if (job!.status === 'succeeded' && job!.refund?.status === 'sent') break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(job?.status).toBe('succeeded');
    expect(job?.refund).toMatchObject({ status: 'sent', amount: '1000' });
  });
});
