import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  BASE_CHAIN_ID,
  devAccount,
  devClients,
  devPrivateKey,
  freePort,
  mintUsdcBatch,
  setupPaymentChain,
  startAnvil,
  startRedisCluster,
  type AnvilInstance,
  type DevClients,
  type PaymentChainInfo,
  type RedisClusterHandle,
} from '@acg/devnet';
import { AUTHORIZATION_STATE_ABI } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { erc20Abi, parseAbiItem, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flashbotsSignature, post as builderPost } from '../../builder/test/harness.js';
import { startDevRelays, type DevRelays } from '../../builder/src/relay/devRelay.js';
import { challenge, officialPayload, paidPost, paymentHeader, post, readJob, walletBalancesRequest } from '../../gateway/test/x402.js';
import { Scrape } from '../../../packages/observability/test/prometheus.js';
import { Receiver, signIn } from '../../../packages/wallet-monitor/test/helpers.js';
import { startEntry } from './entries.js';
import { walletMonitorKeys } from '@acg/wallet-monitor/commands';

/**
 * The multi-node run (docs/operating.md): on a private 3-master Redis Cluster, two standalone
 * gateways, two workers and a builder, each its own process started from its entry with the
 * environment only (REDIS_CLUSTER_NODES, a hash-tagged REDIS_KEY_PREFIX). The test client plays
 * the load balancer, sending in turn to each gateway. Checked: paid executes served by both
 * gateways, job steps run by both workers, a gateway killed with SIGKILL mid-traffic loses no paid
 * request (each ends with its result or a refund, and replays return it), and webhook deliveries
 * go on after the worker that watched the chain is killed. The counts are printed at the end.
 */
type Json = any;
const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const children: ChildProcess[] = [];
let cluster: RedisClusterHandle;
let anvil: AnvilInstance;
let pay: PaymentChainInfo;
let chain: DevClients;
let relays: DevRelays;
const receiver = new Receiver();
let redis: Redis;
let keys: RedisKeys;
let env: Record<string, string>;
const gateways: { url: string; child: ChildProcess }[] = [];
const workers: { metricsUrl: string; child: ChildProcess }[] = [];
let builderUrl = '';
/** The watcher lease of the payment chain as worker A took it. */
let leaseOfA = '';
/** What the closing note reports. */
const counts: Record<string, unknown> = {};

async function until<T>(what: string, check: () => Promise<T | undefined | false | null>, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false && v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;
const waitExit = (c: ChildProcess) => new Promise((r) => (exited(c) ? r(null) : c.once('exit', r)));
const scrape = async (url: string) => new Scrape(await fetch(url).then((r) => r.text()));

async function startGateway(facilitatorKey: `0x${string}`) {
  const port = await freePort();
  const child = await startEntry(
    children,
    '../../gateway/src/main.ts',
    { ...env, GATEWAY_PORT: String(port), FACILITATOR_PRIVATE_KEY: facilitatorKey },
    /gateway http/,
  );
  return { url: `http://127.0.0.1:${port}`, child };
}

async function startWorkerProcess() {
  const port = await freePort();
  const child = await startEntry(children, '../src/main.ts', { ...env, WORKER_METRICS_PORT: String(port) }, /worker up/);
  return { metricsUrl: `http://127.0.0.1:${port}/metrics`, child };
}

/** Fresh payers, each funded with `usdc` base units (EIP-3009 needs no ETH). */
async function freshPayers(n: number, usdc = 1_000_000n): Promise<LocalAccount[]> {
  const payers = Array.from({ length: n }, () => privateKeyToAccount(generatePrivateKey()));
  await mintUsdcBatch(
    pay.rpcUrl,
    payers.map((p) => ({ to: p.address, amount: usdc })),
    { address: pay.usdc, minter: pay.facilitator },
  );
  return payers;
}

const balanceOf = (a: `0x${string}`) => chain.publicClient.readContract({ address: pay.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [a] });

beforeAll(async () => {
  [cluster, anvil, relays] = await Promise.all([startRedisCluster(), startAnvil({ chainId: BASE_CHAIN_ID, quiet: true }), startDevRelays(), receiver.start()]);
  [pay, chain] = await Promise.all([setupPaymentChain(anvil.rpcUrl), devClients(anvil.rpcUrl)]);
  keys = new RedisKeys(`{acg:test:${ulid()}}:`);
  redis = connectRedis({ url: cluster.url, clusterNodes: cluster.nodes, name: 'multi-node-test' });
  env = {
    REDIS_CLUSTER_NODES: cluster.nodes.join(','),
    REDIS_KEY_PREFIX: keys.prefix,
    PAYMENT_RPC_URL: pay.rpcUrl,
    PAY_TO_ADDRESS: pay.treasury.address,
    FACILITATOR_PRIVATE_KEY: devPrivateKey(0),
    TREASURY_PRIVATE_KEY: devPrivateKey(1),
    PROBE_INTERVAL_SECONDS: '0',
    LOG_LEVEL: 'silent',
    // webhooks to the local receiver (http, loopback); one key seals signing secrets for all processes
    WEBHOOK_POLICY: 'development',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    // a reservation without progress for 5 s counts as orphaned (production: 10 minutes)
    PAYMENT_RECOVERY_INTERVAL_MS: '500',
    PAYMENT_RECOVERY_AFTER_MS: '5000',
  };
  // worker A first, so that it holds the payment chain's watcher lease (one watcher per chain)
  workers.push(await startWorkerProcess());
  const lease = walletMonitorKeys.walletMonitor(keys, 'lease', 'base');
  leaseOfA = await until('worker A to take the base watcher lease', () => redis.get(lease));
  // each gateway settles with its own facilitator key (dev accounts 0 and 9): the in-process
  // facilitator's nonces are per process, and two gateways sharing a key refuse concurrent
  // payments with 402 (docs/operating.md)
  const [b, g1, g2, builderPort] = await Promise.all([startWorkerProcess(), startGateway(devPrivateKey(0)), startGateway(devPrivateKey(9)), freePort()]);
  workers.push(b);
  gateways.push(g1, g2);
  await startEntry(
    children,
    '../../builder/src/main.ts',
    {
      ...env,
      BUILDER_PORT: String(builderPort),
      ETHEREUM_RPC_URL: pay.rpcUrl,
      RELAY_URLS: relays.relayUrls,
      BUILDER_BLS_SECRET_KEY: `0x${'22'.repeat(32)}`,
      BUILDER_SLOT_MS: '0',
    },
    /builder http/,
  );
  builderUrl = `http://127.0.0.1:${builderPort}`;
});

afterAll(async () => {
  for (const c of children) if (!exited(c)) c.kill('SIGTERM');
  await Promise.all(children.map(waitExit));
  redis?.disconnect();
  await Promise.allSettled([cluster?.stop(), anvil?.stop(), relays?.close(), receiver.close()]);
  // the closing note's numbers
  process.stdout.write(`multi-node counts: ${JSON.stringify(counts, null, 2)}\n`);
});

describe('two gateways, two workers and a builder on one Redis Cluster', () => {
  it('the builder process writes its registration to the cluster; a gateway process reads it', async () => {
    const signer = devAccount(3);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_nope', params: [] });
    // past the token bucket (a Lua script on the cluster) to the method table
    const rpc = await builderPost(`${builderUrl}/rpc`, body, { 'x-flashbots-signature': await flashbotsSignature(signer, body) });
    expect(rpc.json).toMatchObject({ id: 1, error: { code: -32601 } });
    const health = await until(
      'the builder part of /status/health',
      async () => {
        const doc = (await fetch(`${gateways[1].url}/status/health`).then((r) => r.json())) as Json;
        return doc.builder ?? undefined;
      },
      30_000,
      500,
    );
    expect(health.bls_public_key).toMatch(/^0x[0-9a-f]{96}$/);
    expect(health.relays).toHaveLength(4);
  });

  it('paid executes spread across both gateways', async () => {
    const payers = await freshPayers(4);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => paidPost(payers[i % 4], `${gateways[i % 2].url}/api/v1/execute`, walletBalancesRequest(payers[i % 4].address))),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(results.map((r) => r.body.execution_id)).size).toBe(8);
    const served = await Promise.all(
      gateways.map(async (g) =>
        (await scrape(`${g.url}/metrics`)).value('acg_http_requests_total', { route: '/api/v1/execute', method: 'POST', status: '200' }),
      ),
    );
    expect(served).toEqual([4, 4]);
    counts.paidExecutesPerGateway = served;
  });

  it('jobs run on both workers', async () => {
    const payers = await freshPayers(4);
    const steps = async () => Promise.all(workers.map(async (w) => (await scrape(w.metricsUrl)).value('acg_job_steps_total', { outcome: 'succeeded' })));
    const jobIds: string[] = [];
    // batches of 4 jobs (2 steps each) in turn to both gateways, until both workers have run steps (at most 6 batches)
    for (let batch = 0; batch < 6; batch++) {
      const created = await Promise.all(
        payers.map((p, i) =>
          paidPost(p, `${gateways[i % 2].url}/api/v1/jobs`, {
            objective: 'multi-node',
            budget_usdc: 0.002,
            capabilities: ['intelligence.wallet_balances'],
            steps: [walletBalancesRequest(p.address), walletBalancesRequest(p.address)],
          }),
        ),
      );
      expect(created.map((c) => c.status)).toEqual([202, 202, 202, 202]);
      jobIds.push(...created.map((c) => c.body.job_id as string));
      await until('the batch to end', async () => {
        const jobs = await Promise.all(created.map((c, i) => readJob(gateways[(i + 1) % 2].url, c.body.job_id, payers[i]) as Promise<Json>));
        return jobs.every((j) => j.status === 'succeeded');
      });
      if ((await steps()).every((n) => n > 0)) break;
    }
    const perWorker = await steps();
    expect(perWorker.every((n) => n > 0)).toBe(true);
    expect(perWorker[0] + perWorker[1]).toBe(2 * jobIds.length);
    counts.jobs = jobIds.length;
    counts.jobStepsPerWorker = perWorker;
  });

  it('a gateway killed with SIGKILL mid-traffic loses nothing: each in-flight payment ends with its result or a refund, and replays return it', async () => {
    const [victim, survivor] = gateways;
    const payers = await freshPayers(6);
    const startBlock = await chain.publicClient.getBlockNumber();
    const before = await Promise.all(payers.map((p) => balanceOf(p.address)));
    const payments = await Promise.all(
      payers.map(async (p) => {
        const body = walletBalancesRequest(p.address);
        const payload = await officialPayload(p, await challenge(`${victim.url}/api/v1/execute`, body));
        return { payer: p, body, header: paymentHeader(payload), nonce: (payload.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce };
      }),
    );
    // traffic on the other gateway meanwhile
    const background = freshPayers(2).then((others) =>
      Promise.all(others.map((o) => paidPost(o, `${survivor.url}/api/v1/execute`, walletBalancesRequest(o.address)))),
    );
    const inFlight = payments.map((p) =>
      post(`${victim.url}/api/v1/execute`, p.body, { 'PAYMENT-SIGNATURE': p.header }).then(
        (r) => r.status,
        () => 'connection lost' as const,
      ),
    );
    const used = (p: (typeof payments)[number]) =>
      chain.publicClient.readContract({
        address: pay.usdc,
        abi: AUTHORIZATION_STATE_ABI,
        functionName: 'authorizationState',
        args: [p.payer.address, p.nonce],
      });
    // SIGKILL as soon as the first of them is settled on chain
    await until('a settlement on chain', async () => (await Promise.all(payments.map(used))).some(Boolean), 60_000, 5);
    victim.child.kill('SIGKILL');
    await waitExit(victim.child);
    const answered = await Promise.all(inFlight);
    expect((await background).map((r) => r.status)).toEqual([200, 200]);

    // replays of the same payments on the surviving gateway, until each has a final answer
    const finals = await Promise.all(
      payments.map((p) =>
        until(
          'a final answer to the replay',
          async () => {
            const r = await post(`${survivor.url}/api/v1/execute`, p.body, { 'PAYMENT-SIGNATURE': p.header });
            if (r.status === 200 || r.status === 502) return { status: r.status, body: r.body as Json };
            expect([409, 503]).toContain(r.status); // in progress, or being recovered by a worker's sweep
            return undefined;
          },
          90_000,
          250,
        ),
      ),
    );
    // a refund is sent on chain, and the replay says so
    const settled = await Promise.all(
      payments.map((p, i) =>
        finals[i].status === 200
          ? finals[i]
          : until('the refund to be sent', async () => {
              const r = await post(`${survivor.url}/api/v1/execute`, p.body, { 'PAYMENT-SIGNATURE': p.header });
              return r.body.refund?.status === 'sent' ? { status: r.status, body: r.body as Json } : undefined;
            }),
      ),
    );
    const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
    let chargedTwice = 0;
    for (const [i, p] of payments.entries()) {
      const f = settled[i];
      expect(f.body.execution_id).toMatch(/^exe_/);
      // charged exactly once, then either the result or the whole price back
      const charges = await chain.publicClient.getLogs({ address: pay.usdc, event: transfer, args: { from: p.payer.address }, fromBlock: startBlock });
      if (charges.length > 1) chargedTwice++;
      expect(charges).toHaveLength(1);
      if (f.status === 200) {
        expect(f.body).toMatchObject({ status: 'SUCCEEDED', payment: { amount: '1000' } });
        expect(await balanceOf(p.payer.address)).toBe(before[i] - PRICE);
      } else {
        expect(f.body.refund).toMatchObject({ amount: '1000', status: 'sent', tx_hash: expect.stringMatching(/^0x/) });
        expect(await balanceOf(p.payer.address)).toBe(before[i]);
      }
      // a further replay is stable
      const again = await post(`${survivor.url}/api/v1/execute`, p.body, { 'PAYMENT-SIGNATURE': p.header });
      expect([again.status, again.body.execution_id]).toEqual([f.status, f.body.execution_id]);
    }
    counts.kill9 = {
      inFlight: payments.length,
      answeredBeforeKill: answered.filter((a) => a !== 'connection lost').length,
      connectionLost: answered.filter((a) => a === 'connection lost').length,
      endedWithResult: settled.filter((f) => f.status === 200).length,
      endedWithRefund: settled.filter((f) => f.status !== 200).length,
      chargedTwice,
    };
  });

  it('webhook deliveries go on when the worker watching the chain dies', async () => {
    const gateway = gateways[1].url;
    const [owner] = await freshPayers(1);
    const deposit = await paidPost(owner, `${gateway}/v1/account/deposit`, { amount_usdc: '0.05' });
    expect(deposit.status).toBe(200);
    const token = await signIn(gateway, owner);
    const watched = privateKeyToAccount(generatePrivateKey()).address;
    const sub = await post(
      `${gateway}/v1/wallet-monitor`,
      { addresses: [watched], chains: ['base'], events: ['transfer_in'], webhook_url: `${receiver.url}/hook` },
      { authorization: `Bearer ${token}` },
    );
    expect(sub.status).toBe(200);
    // transfers in from dev account 8 (ETH for gas, 10,000 USDC)
    const send = async () => {
      const hash = await chain.walletFor(devAccount(8)).writeContract({ address: pay.usdc, abi: erc20Abi, functionName: 'transfer', args: [watched, 1000n] });
      await chain.publicClient.waitForTransactionReceipt({ hash });
      return hash;
    };
    const deliveredTx = () => new Set(receiver.delivered('/hook').map((r) => (JSON.parse(r.body) as Json).tx_hash as string));
    const mineUntil = (what: string, hashes: string[]) =>
      until(
        what,
        async () => {
          if (hashes.every((h) => deliveredTx().has(h))) return true;
          await chain.testClient.mine({ blocks: 1 }); // blocks past the confirmation depth
          return undefined;
        },
        90_000,
        250,
      );
    const first = await send();
    await mineUntil('the first delivery', [first]);

    // worker A holds the watcher lease (it started first and renews it): kill it
    expect(await redis.get(walletMonitorKeys.walletMonitor(keys, 'lease', 'base'))).toBe(leaseOfA);
    workers[0].child.kill('SIGKILL');
    await waitExit(workers[0].child);
    const later = [await send(), await send()];
    await mineUntil('deliveries after the watcher died (the other worker takes the lease over)', later);
    expect(await redis.get(walletMonitorKeys.walletMonitor(keys, 'lease', 'base'))).not.toBe(leaseOfA);
    const survivorDelivered = (await scrape(workers[1].metricsUrl)).value('acg_webhook_deliveries_total', { outcome: 'delivered' });
    expect(survivorDelivered).toBeGreaterThanOrEqual(2);
    counts.webhooks = {
      transfersBeforeKill: 1,
      transfersAfterKill: later.length,
      transfersDelivered: deliveredTx().size,
      deliveredBySurvivingWorker: survivorDelivered,
      receiverRequests: receiver.attempts('/hook').length,
    };
  });
});
