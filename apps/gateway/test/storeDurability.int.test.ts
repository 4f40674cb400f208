import { Writable } from 'node:stream';
import { resolveRedis, startDevStack, type DevStack, type RedisHandle } from '@acg/devnet';
import { createLogger } from '@acg/observability';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreNotDurableError } from '../src/storeDurability.js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './harness.js';
import { paidPost, walletBalancesRequest } from './x402.js';

// docs/durability.md: the gateway reads its store's AOF setting at start; outside the dev defaults
// a setting that can lose acknowledged writes (or one it cannot read) is refused unless
// ALLOW_NON_DURABLE_STORE=true; on a replicated store a paid answer waits for the replicas (WAIT).
let stack: DevStack;
/** A private Redis with `appendfsync everysec`: a machine crash loses about a second of acknowledged writes. */
let lossy: RedisHandle;
let admin: Redis;
const started: TestGateway[] = [];
const handles: RedisHandle[] = [];

beforeAll(async () => {
  [stack, lossy] = await Promise.all([
    startDevStack({ quiet: true, preferPrivateRedis: true }),
    resolveRedis({ preferPrivate: true, persistence: 'everysec' }),
  ]);
  admin = new Redis(lossy.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  for (const g of started) await g.close().catch(() => undefined);
  admin?.disconnect();
  await Promise.all([lossy?.stop(), stack?.stop(), ...handles.map((h) => h.stop())]);
});

/** Starts a test gateway on the shared dev stack with `opts`, collecting its JSON log lines. */
async function gateway(opts: TestGatewayOptions): Promise<{ gw: TestGateway; logs: Record<string, unknown>[] }> {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      // pino levels: 40 is warn
      for (const l of String(chunk).split('\n')) if (l.trim()) logs.push(JSON.parse(l));
      cb();
    },
  });
  const gw = await startTestGateway({ ...opts, stack, log: createLogger({ service: 'gateway', level: 'info', destination: sink }) });
  started.push(gw);
  return { gw, logs };
}

/** Names of the clients connected to the lossy Redis (the gateway names its connections `gateway*`). */
async function clientNames(): Promise<string[]> {
  const list = (await admin.client('LIST')) as string;
  return [...list.matchAll(/ name=(\S*)/g)].map((m) => m[1]);
}

describe('the store durability check at start', () => {
  it('outside the dev defaults refuses to start on appendfsync everysec, naming the risk, the fix and the override; nothing stays connected', async () => {
    const error = await gateway({ config: { redisUrl: lossy.url } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreNotDurableError);
    const message = (error as Error).message;
    expect(message).toMatch(/^refusing to take payments: the store can lose acknowledged writes \(appendonly yes, appendfsync everysec\)/);
    expect(message).toMatch(/machine crash or power loss loses about the last second of acknowledged writes/);
    expect(message).toMatch(/Run Redis with appendonly yes and appendfsync always \(docs\/durability\.md\), or set ALLOW_NON_DURABLE_STORE=true/);
    // it read the setting and left it as it was; its connections are closed
    expect(await admin.config('GET', 'appendfsync')).toEqual(['appendfsync', 'everysec']);
    for (let i = 0; i < 50 && (await clientNames()).some((n) => n.startsWith('gateway')); i++) await new Promise((r) => setTimeout(r, 100));
    expect((await clientNames()).filter((n) => n.startsWith('gateway'))).toEqual([]);
  });

  it('refuses a store whose setting it cannot read (CONFIG not allowed for its user)', async () => {
    await admin.call('ACL', 'SETUSER', 'gateway-app', 'on', '>app-password-1', '~*', '&*', '+@all', '-config');
    const url = new URL(lossy.url);
    const error = await gateway({ config: { redisUrl: `redis://gateway-app:app-password-1@${url.host}` } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreNotDurableError);
    expect((error as Error).message).toMatch(/^refusing to take payments: the store's durability cannot be checked \(CONFIG GET refused \(NOPERM/);
  });

  it('with ALLOW_NON_DURABLE_STORE=true starts, warns what the setting risks, and takes a paid call', async () => {
    const { gw, logs } = await gateway({ config: { redisUrl: lossy.url, store: { allowNonDurable: true } } });
    expect(gw.gateway.store).toMatchObject({ verdict: 'lossy', decision: 'overridden', setting: 'appendonly yes, appendfsync everysec' });
    const warning = logs.find((l) => l.module === 'store');
    expect(warning).toMatchObject({ level: 40, msg: 'store not durable; taking payments anyway because ALLOW_NON_DURABLE_STORE=true' });
    expect(String(warning?.risk)).toMatch(/loses about the last second of acknowledged writes/);
    const buyer = stack.payment.buyers[0];
    const paid = await paidPost(buyer, gw.executeUrl, walletBalancesRequest(buyer.address));
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('SUCCEEDED');
  });

  it('on the dev defaults starts and warns, without the override', async () => {
    const { gw, logs } = await gateway({ config: { redisUrl: lossy.url, store: { devDefaults: true } } });
    expect(gw.gateway.store).toMatchObject({ verdict: 'lossy', decision: 'dev_defaults' });
    expect(logs.find((l) => l.module === 'store')).toMatchObject({ level: 40, msg: expect.stringMatching(/^store not durable \(dev defaults;/) });
  });
});

describe('WAIT after the money writes (REDIS_WAIT_REPLICAS)', () => {
  it('a durable primary with a private replica: the paid answer comes after a WAIT that the replica acknowledged', async () => {
    const replica = await resolveRedis({ preferPrivate: true, replicaOf: new URL(stack.redis.url).host });
    handles.push(replica);
    const primary = new Redis(stack.redis.url, { maxRetriesPerRequest: 1 });
    const replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 1 });
    try {
      for (let i = 0; i < 100 && !/master_link_status:up/.test(await replicaClient.info('replication')); i++) await new Promise((r) => setTimeout(r, 100));
      const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await primary.info('commandstats'))?.[1] ?? 0);
      const { gw, logs } = await gateway({ config: { store: { waitReplicas: 1, waitTimeoutMs: 1000 } } });
      expect(gw.gateway.store).toMatchObject({ verdict: 'durable', decision: 'durable' });
      const before = await waits();
      const buyer = stack.payment.buyers[1];
      const paid = await paidPost(buyer, gw.executeUrl, walletBalancesRequest(buyer.address));
      expect(paid.status).toBe(200);
      expect(await waits()).toBeGreaterThan(before);
      // the execution record the answer names is on the replica, and no shortfall was logged
      const record = await replicaClient.keys(`${gw.config.keyPrefix}*${paid.body.execution_id}*`);
      expect(record.length).toBeGreaterThan(0);
      expect(logs.filter((l) => String(l.msg).includes('WAIT'))).toEqual([]);
    } finally {
      primary.disconnect();
      replicaClient.disconnect();
    }
  });
});
