import { startRedisCluster, type RedisClusterHandle } from '@acg/devnet';
import { ulid } from 'ulid';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../gateway/test/harness.js';
import { registerTestProvider, startTestProvider, upperCaseAnswer, type TestProvider } from '../../gateway/test/providerServer.js';
import { challenge, officialPayload, paidPost, paymentHeader, post, readJob } from '../../gateway/test/x402.js';
import { startWorker, type RunningWorker } from '../src/index.js';

// docs/operating.md: the gateway and a worker on a private 3-master Redis Cluster
// (REDIS_CLUSTER_NODES, hash-tagged key prefix): a paid execute and its replay, a job run by the
// worker with its refund, and a provider registration that both processes learn through pub/sub.
type Json = any;
let cluster: RedisClusterHandle;
let t: TestGateway;
let worker: RunningWorker;
let provider: TestProvider;

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  [cluster, provider] = await Promise.all([startRedisCluster(), startTestProvider(upperCaseAnswer)]);
  t = await startTestGateway({
    config: {
      redisUrl: cluster.url,
      redisClusterNodes: cluster.nodes,
      keyPrefix: `{acg:test:${ulid()}}:`,
      walletMonitor: { webhookPolicy: 'development' },
    },
  });
  worker = await startWorker(t.config, { walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
  await provider?.close();
  await cluster?.stop();
});

describe('gateway and worker on a Redis Cluster', () => {
  it('every connection is a Cluster connection', () => {
    expect(t.config.keyPrefix).toMatch(/^\{acg:test:/);
    for (const r of [t.gateway.services.redis, worker.services.redis, worker.services.bullRedis]) expect(r.isCluster).toBe(true);
  });

  it('serves a paid execute; a replay of the same payment returns the stored answer', async () => {
    const buyer = t.stack.payment.buyers[0];
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const header = paymentHeader(await officialPayload(buyer, await challenge(`${t.url}/api/v1/execute`, body)));
    const first = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'SUCCEEDED', execution_id: expect.stringMatching(/^exe_/), payment: { amount: '1000' } });
    const replay = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
    expect(replay.status).toBe(200);
    expect(replay.body.execution_id).toBe(first.body.execution_id);
    // stored under the hash-tagged prefix, in the cluster
    expect(await t.gateway.services.redis.exists(t.gateway.services.keys.execution(first.body.execution_id))).toBe(1);
  });

  it('runs a paid job on the worker (BullMQ on the cluster) and refunds the unspent budget', async () => {
    const buyer = t.stack.payment.buyers[1];
    const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'on a cluster',
      budget_usdc: 0.003,
      capabilities: ['intelligence.wallet_balances'],
      steps: [
        { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } },
        { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } },
      ],
    });
    expect(created.status).toBe(202);
    const job = await until('the job to end with its refund sent', async () => {
      const j = (await readJob(t.url, created.body.job_id, buyer)) as Json;
      return j.status === 'succeeded' && j.refund?.status === 'sent' ? j : undefined;
    });
    expect(job.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(job).toMatchObject({ spent_base_units: '2000', refund: { status: 'sent', amount: '1000' } });
  });

  it('registers a provider; the gateway and the worker both learn its capability; a paid call credits its ledger', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const registered = await registerTestProvider(t.url, owner, provider, {
      name: 'Cluster Co',
      capabilities: [
        {
          name: 'cluster_upper',
          description: 'Upper-cases text.',
          price_usdc: '0.0025',
          input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
          output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
          example_request: { text: 'probe' },
          timeout_ms: 1000,
        },
      ],
    });
    // the worker hears the change on the cluster's pub/sub channel (its poll is every 10 s)
    await until('the worker to list the provider capability', async () => worker.services.catalog.find('intelligence.cluster_upper'));
    const call = await paidPost(t.stack.payment.buyers[2], `${t.url}/api/v1/execute`, { capability_id: 'intelligence.cluster_upper', input: { text: 'hi' } });
    expect(call.status).toBe(200);
    expect(call.body).toMatchObject({ status: 'SUCCEEDED', result: { upper: 'HI' } });
    // pl_credit (a 5-key script) ran on the cluster
    const balance = await t.gateway.services.providerLedger.balance(registered.provider_id);
    expect(balance.held).toBe('2250');
  });
});
