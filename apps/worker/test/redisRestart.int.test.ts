import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, freePort, pingRedis, spawnManaged, type ManagedProcess } from '@acg/devnet';
import { connectRedis } from '@acg/redis';
import { createPublicClient, erc20Abi, http, parseAbiItem, type LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../gateway/test/harness.js';
import { challenge, fetchJob, officialPayload, paidPost, paymentHeader, post, readExecution, usdcReader } from '../../gateway/test/x402.js';
import { startWorker, type RunningWorker } from '../src/index.js';

// A Redis this test owns, with AOF persistence (appendfsync always), killed and restarted on the
// same port mid-test (a hard outage of a few seconds, well inside the Redis outage tolerance).
let dir: string;
let port: number;
let redis: ManagedProcess | undefined;
let t: TestGateway;
let worker: RunningWorker | undefined;
type Json = any;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

async function startRedis(): Promise<void> {
  redis = spawnManaged(
    findRedisServer()!,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
    ],
    { name: `redis:${port}` },
  );
  for (let i = 0; i < 100 && !(await pingRedis('127.0.0.1', port, 200)); i++) await sleep(50);
}
async function killRedis(): Promise<void> {
  redis!.child.kill('SIGKILL');
  await redis!.exited;
}
/** Kills Redis now and starts it again on the same port (from its AOF) after `downMs`; `restarted` resolves then. */
async function outage(downMs: number): Promise<{ restarted: Promise<void> }> {
  await killRedis();
  return { restarted: sleep(downMs).then(startRedis) };
}

function chain() {
  return createPublicClient({ transport: http(t.stack.payment.rpcUrl) });
}

/** The amounts (USDC base units) of the dev USDC transfers from `from` to `to` since `fromBlock`, in chain order. */
async function usdcTransfers(from: `0x${string}`, to: `0x${string}`, fromBlock: bigint): Promise<bigint[]> {
  const logs = await chain().getContractEvents({ address: t.stack.payment.usdc, abi: erc20Abi, eventName: 'Transfer', args: { from, to }, fromBlock });
  return logs.map((l) => l.args.value!);
}

async function waitForJob(jobId: string, payer: LocalAccount, until: (job: Json) => boolean): Promise<Json> {
  let job: Json;
  for (let i = 0; i < 900; i++) {
    const r = await fetchJob(t.url, jobId, payer).catch(() => undefined);
    if (r?.ok) {
      job = await r.json();
      if (until(job)) return job;
    }
    await sleep(100);
  }
  return job;
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
    const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'survive a restart',
      budget_usdc: 0.002,
      capabilities: ['intelligence.wallet_balances'],
      steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address } }],
    });
    expect(created.status).toBe(202);

    // no worker yet: the job waits in the queue; now kill Redis hard and start it again from its AOF
    await killRedis();
    await startRedis();

    worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50 } });
    const job = await waitForJob(created.body.job_id, buyer, (j) => j.status === 'succeeded' && j.refund?.status === 'sent');
    expect(job?.status).toBe('succeeded');
    expect(job?.refund).toMatchObject({ status: 'sent', amount: '1000' });
  });

  it('a running 5-step job survives two Redis restarts: it resumes, every step runs once, the exact USDC is charged and refunded', async () => {
    const buyer = t.stack.payment.buyers[1];
    const budget = 10_000n; // 0.01 USDC: 5 steps of 1000 are spent, 5000 refunded
    const fromBlock = await chain().getBlockNumber();
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const before = await balanceOf(buyer.address);

    // Faults, each once: Redis dies right after step 2's execution is stored but before the job
    // record notes it (the runner's own write fails), and right before step 4 runs (the execution
    // record's write fails). Each time Redis is back after 2.5 s.
    const runs = new Map<number, number>();
    const restarts: Promise<void>[] = [];
    const mine = (job: { payer: string }) => job.payer.toLowerCase() === buyer.address.toLowerCase(); // only this test pays from buyers[1]
    await worker?.close();
    worker = await startWorker(t.config, {
      refunds: false,
      walletMonitor: false,
      jobs: {
        backoffMs: 50,
        beforeStep: async (job, i) => {
          if (mine(job) && i === 3 && restarts.length === 1) restarts.push((await outage(2_500)).restarted);
        },
        afterStep: async (job, i) => {
          if (!mine(job)) return;
          runs.set(i, (runs.get(i) ?? 0) + 1);
          if (i === 1 && restarts.length === 0) restarts.push((await outage(2_500)).restarted);
        },
      },
    });

    const r = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'survive Redis restarts mid-job',
      budget_usdc: Number(budget) / 1e6,
      capabilities: ['intelligence.wallet_balances'],
      steps: Array.from({ length: 5 }, () => ({ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } })),
    });
    expect(r.status).toBe(202);
    const jobId: string = r.body.job_id;

    const job = await waitForJob(
      jobId,
      buyer,
      (j) => ['succeeded', 'failed', 'cancelled', 'budget_exhausted'].includes(j.status) && j.refund?.status === 'sent',
    );
    await Promise.all(restarts);
    expect(restarts).toHaveLength(2); // both faults happened
    expect(job.status).toBe('succeeded');
    expect(job.error).toBeNull();
    expect(job.steps.map((s: Json) => s.status)).toEqual(Array(5).fill('succeeded'));
    expect(job.steps.map((s: Json) => s.attempts)).toEqual(Array(5).fill(1));
    expect(new Set(job.steps.map((s: Json) => s.execution_id)).size).toBe(5);
    expect([...runs.entries()].sort(([a], [b]) => a - b)).toEqual([0, 1, 2, 3, 4].map((i) => [i, 1])); // each step ran exactly once
    for (const s of job.steps) {
      const exe = await readExecution(t.url, s.execution_id, buyer);
      expect(exe).toMatchObject({ status: 'SUCCEEDED', job_id: jobId });
    }
    expect(job.spent_base_units).toBe((5n * PRICE).toString());
    expect(job.refund).toMatchObject({ status: 'sent', amount: (budget - 5n * PRICE).toString() });

    // on chain: one payment of the budget, one refund of the rest, nothing else
    const treasury = t.stack.payment.treasury.address;
    expect(await usdcTransfers(buyer.address, treasury, fromBlock)).toEqual([budget]);
    expect(await usdcTransfers(treasury, buyer.address, fromBlock)).toEqual([budget - 5n * PRICE]);
    expect(before - (await balanceOf(buyer.address))).toBe(5n * PRICE);
  });

  it('a Redis restart during a burst of paid executes: each answers SUCCEEDED or 503 with Retry-After; replays return the stored result; nothing lost or charged twice', async () => {
    const buyer = t.stack.payment.buyers[2];
    const url = `${t.url}/api/v1/execute`;
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const fromBlock = await chain().getBlockNumber();
    const required = await challenge(url, body);
    const payloads = await Promise.all(Array.from({ length: 10 }, () => officialPayload(buyer, required)));
    const nonces = payloads.map((p) => (p.payload as Json).authorization.nonce as `0x${string}`);
    expect(new Set(nonces).size).toBe(10);

    // Redis dies as soon as the first payment settles on chain, and is back 4 s later; requests
    // start every 300 ms, so some are mid-flight at the kill, some arrive during the outage.
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const start = await balanceOf(buyer.address);
    let stopWatching = false;
    const down = { from: Infinity, to: Infinity }; // when Redis was killed and when it answered again (ms, performance.now)
    const fault = (async () => {
      while (!stopWatching && (await balanceOf(buyer.address)) === start) await sleep(10);
      if (stopWatching) return;
      down.from = performance.now();
      await (await outage(4_000)).restarted;
      down.to = performance.now();
    })();
    const spans: { from: number; to: number }[] = [];
    const answers = await Promise.all(
      payloads.map(async (p, i) => {
        await sleep(300 * i);
        const from = performance.now();
        const r = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(p) });
        spans.push({ from, to: performance.now() });
        return r;
      }),
    );
    stopWatching = true;
    await fault;
    expect(redis!.hasExited()).toBe(false);

    for (const a of answers) {
      if (a.status === 200) {
        expect(a.body).toMatchObject({ status: 'SUCCEEDED' });
      } else {
        expect(a.status, JSON.stringify(a.body)).toBe(503);
        expect(a.contentType).toContain('application/problem+json');
        expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(JSON.stringify(a.body)).not.toMatch(/retries|ECONN|connection|redis/i); // no raw Redis text
      }
    }
    // the fault hit the burst: Redis died after a payment settled, and requests were in flight while it was down
    expect(down.to).toBeLessThan(Infinity);
    expect(spans.filter((x) => x.from < down.to && x.to > down.from).length).toBeGreaterThan(0);

    // every holder finishes its own work once Redis is back: no reservation is left in flight
    const probe = connectRedis({ url: `redis://127.0.0.1:${port}` });
    try {
      let inflight = -1;
      for (let i = 0; i < 600 && inflight !== 0; i++, await sleep(100)) inflight = await probe.zcard(`${t.config.keyPrefix}pay:inflight`);
      expect(inflight).toBe(0);
    } finally {
      probe.disconnect();
    }

    // replay every payment once: a settled one returns its stored answer, an unsettled one runs now
    // (a 503 with Retry-After is the transient answer a client retries: on a loaded machine the
    // reconnected store can still time out one command; the payment is then sent again, as a client would)
    const replayOnce = async (p: (typeof payloads)[number]) => {
      for (let attempt = 0; ; attempt++) {
        const r = await post(url, body, { 'PAYMENT-SIGNATURE': paymentHeader(p) });
        if (r.status !== 503 || attempt >= 5) return r;
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        await sleep(1_000);
      }
    };
    const replays = await Promise.all(payloads.map(replayOnce));
    for (const [i, r] of replays.entries()) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ status: 'SUCCEEDED' });
      if (answers[i].status === 200) expect(r.body.execution_id).toBe(answers[i].body.execution_id);
    }

    // on chain: every nonce used exactly once, one transfer of the price each, and each has its
    // result (the replays above all SUCCEEDED with distinct executions): 0 lost, 0 double charges
    const used = await chain().getContractEvents({
      address: t.stack.payment.usdc,
      abi: [AUTHORIZATION_USED],
      eventName: 'AuthorizationUsed',
      args: { authorizer: buyer.address },
      fromBlock,
    });
    expect(used.map((l) => l.args.nonce!.toLowerCase()).sort()).toEqual(nonces.map((n) => n.toLowerCase()).sort());
    expect(await usdcTransfers(buyer.address, t.stack.payment.treasury.address, fromBlock)).toEqual(Array(10).fill(PRICE));
    expect(new Set(replays.map((r) => r.body.execution_id)).size).toBe(10);
    expect(start - (await balanceOf(buyer.address))).toBe(10n * PRICE);
  });
});
