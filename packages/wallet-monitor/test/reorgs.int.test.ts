import { devAccount, devClients, resolveRedis, startDevChain, type DevChain, type DevClients, type RedisHandle } from '@acg/devnet';
import { Ledger } from '@acg/accounts';
import { connectRedis, RedisKeys } from '@acg/redis';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Redis } from 'ioredis';
import type { Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removedWebhookId, startWalletMonitor, type RunningWalletMonitor, type WalletEventPayload } from '../src/index.js';
import { Receiver, waitFor, type Received } from './helpers.js';

/**
 * Webhooks after a reorg (packages/wallet-monitor README "Reorgs and confirmations"): a real anvil
 * whose blocks are taken back with evm_snapshot / evm_revert and replaced by new ones, a private
 * redis-server, the monitor's watcher and delivery worker, a local webhook receiver.
 */

/** Four attempts, about 0.6 s in all: a removed event can be dead-lettered and replayed within a test. */
const SCHEDULE = [0, 100, 200, 300];
const PRICE = 1000n;
const FUND = 1_000_000n;

let redisHandle: RedisHandle;
let chain: DevChain;
let clients: DevClients;
let redis: Redis;
let keys: RedisKeys;
let ledger: Ledger;
let monitor: RunningWalletMonitor;
const receiver = new Receiver();
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const funder = () => devAccount(3) as LocalAccount;

beforeAll(async () => {
  [redisHandle, chain] = await Promise.all([resolveRedis({ preferPrivate: true }), startDevChain('ethereum'), receiver.start()]);
  clients = await devClients(chain.rpcUrl);
  redis = connectRedis({ url: redisHandle.url, name: 'wm-reorg-test' });
  keys = new RedisKeys(`acg:test:reorg:${Date.now()}:`);
  ledger = new Ledger(redis, keys);
  monitor = await startWalletMonitor({
    redisUrl: redisHandle.url,
    keyPrefix: keys.prefix,
    // polling only: each test decides when blocks appear
    chains: { ethereum: { rpcUrl: chain.rpcUrl, wsUrl: false } },
    policy: 'development',
    retryScheduleMs: SCHEDULE,
    pollIntervalMs: 50,
    renewalIntervalSeconds: 0,
    log: silent,
  });
  await waitFor('the watcher cursor', () => monitor.watchers[0].cursor());
});

afterAll(async () => {
  await monitor?.stop();
  redis?.disconnect();
  await receiver.close();
  await Promise.all([chain?.stop(), redisHandle?.stop()]);
});

/** An owner (a fresh address) whose metered account holds {@link FUND}, and a subscription of it watching `watched`. */
async function subscribe(path: string, watched: Hex, confirmations?: number) {
  const owner = privateKeyToAccount(generatePrivateKey()).address;
  await ledger.credit(owner, FUND, 'deposit', `test-${path}`);
  const sub = await monitor.service.subscribe(owner, {
    addresses: [watched],
    chains: ['ethereum'],
    events: ['transfer_in'],
    webhook_url: `${receiver.url}${path}`,
    confirmations,
  });
  return { owner, sub };
}

const pay = async (to: Hex, value: bigint) => {
  const hash = await clients.walletFor(funder()).sendTransaction({ to, value });
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  return { hash, blockNumber: receipt.blockNumber };
};
const body = (r: Received) => JSON.parse(r.body) as WalletEventPayload;
const delivered = (path: string) => receiver.delivered(path).map(body);
/** The watcher has processed the chain's head (so anything due by now has been queued). */
const caughtUp = async () => {
  const head = await clients.publicClient.getBlockNumber();
  await waitFor(`the watcher at block ${head}`, async () => ((await monitor.watchers[0].cursor())?.number ?? -1n) >= head);
};
/** A fresh watched address, its subscription (receiver path in `mode`), then a snapshot to take the next blocks back to. */
async function watchThenSnapshot(path: string, mode: 'ok' | 'fail' | 'hold' = 'ok') {
  const w = privateKeyToAccount(generatePrivateKey());
  const { owner, sub } = await subscribe(path, w.address);
  receiver.modes.set(path, mode);
  return { w, owner, sub, snapshot: await clients.testClient.snapshot() };
}
/** The newest logged attempt of `sub` that `match` accepts. */
const attemptOf = async (sub: { subscription_id: string }, match: (a: { webhook_id: string; replay: number }) => boolean) =>
  (await monitor.service.deliveries.attempts(sub.subscription_id)).find(match);
/** Takes the blocks mined since `snapshot` back and mines `blocks` new (empty) ones in their place. */
const reorg = async (snapshot: Hex, blocks: number) => {
  await clients.testClient.revert({ id: snapshot });
  await clients.testClient.mine({ blocks });
};

describe('webhooks after a reorg', () => {
  it('follows a delivered event whose transfer is reorged out by a signed removed event, and credits its price back exactly once (retried, dead-lettered, replayed)', async () => {
    const { w, owner, sub, snapshot } = await watchThenSnapshot('/removed');
    const paid = await pay(w.address, 4242n);
    const original = await waitFor('the original event', () => receiver.delivered('/removed').find((r) => body(r).tx_hash === paid.hash));
    const event = body(original);
    expect(event.removed).toBeUndefined();
    expect(await ledger.balance(owner)).toBe(FUND - PRICE);

    // the receiver is down while the reorg is found: the removed event is retried, then dead-lettered
    receiver.modes.set('/removed', 'fail');
    await reorg(snapshot, 3);
    expect(await clients.publicClient.getTransactionReceipt({ hash: paid.hash }).catch(() => undefined)).toBeUndefined();
    const removedId = removedWebhookId(original.headers['webhook-id'] as string);
    await waitFor('the removed event dead-lettered', async () =>
      (await monitor.service.deliveries.deadLetters(sub.subscription_id)).some((d) => d.webhook_id === removedId),
    );
    const attempts = receiver.attempts('/removed').filter((r) => r.headers['webhook-id'] === removedId);
    expect(attempts.length).toBe(SCHEDULE.length);
    // the vanished event is not charged: credited back once although its removed event was tried four times
    expect(await ledger.balance(owner)).toBe(FUND);

    receiver.modes.set('/removed', 'ok');
    expect(await monitor.service.deliveries.replay(sub.subscription_id, [removedId])).toEqual([removedId]);
    const got = await waitFor('the removed event delivered', () => receiver.delivered('/removed').find((r) => r.headers['webhook-id'] === removedId));
    // signed like any delivery (Standard Webhooks), verifiable with the subscription's secret
    const verified = new Webhook(sub.secret).verify(got.body, got.headers as Record<string, string>) as WalletEventPayload;
    expect(verified).toEqual({ ...event, observed_at: verified.observed_at, removed: true, original_webhook_id: original.headers['webhook-id'] });
    expect(verified.block_hash).toBe(event.block_hash);
    // still exactly once: the replay neither billed the removed event nor credited the original again
    expect(await ledger.balance(owner)).toBe(FUND);
    const stats = await monitor.service.subscriptions.stats(sub.subscription_id);
    expect(stats).toMatchObject({ billed: '0', removed: 1, delivered: 2 });
    // the transfer never comes back under the old id: nothing else was sent
    expect(delivered('/removed').map((e) => [e.tx_hash, e.removed ?? false])).toEqual([
      [paid.hash, false],
      [paid.hash, true],
    ]);
  });

  it('sends nothing for an event reorged out before it was delivered: no removed event, its dead letter is not sent again when replayed, nothing charged', async () => {
    const { w, owner, sub, snapshot } = await watchThenSnapshot('/undelivered', 'fail');
    const paid = await pay(w.address, 5n);
    await waitFor('the event dead-lettered', async () => (await monitor.service.deliveries.deadLetters(sub.subscription_id)).length === 1);
    const [dead] = await monitor.service.deliveries.deadLetters(sub.subscription_id);
    expect(dead.event.tx_hash).toBe(paid.hash);
    receiver.modes.set('/undelivered', 'ok');
    await reorg(snapshot, 2);
    const removedId = removedWebhookId(dead.webhook_id);
    // the removed event is queued and finds that its original was never delivered: dropped, not sent
    const removal = await waitFor('the removed event dropped', () => attemptOf(sub, (a) => a.webhook_id === removedId));
    expect(removal).toMatchObject({ outcome: 'dropped', removed: true });
    // a replay of the vanished event's dead letter sends nothing either
    expect(await monitor.service.deliveries.replay(sub.subscription_id)).toEqual([dead.webhook_id]);
    const replay = await waitFor('the replay dropped', () => attemptOf(sub, (a) => a.webhook_id === dead.webhook_id && a.replay === 1));
    expect(replay.outcome).toBe('dropped');
    expect(receiver.delivered('/undelivered')).toEqual([]);
    expect(receiver.attempts('/undelivered').every((r) => r.headers['webhook-id'] === dead.webhook_id)).toBe(true);
    expect(await ledger.balance(owner)).toBe(FUND);
  });

  it('waits for an attempt in flight when the reorg is found: the original answered 2xx is followed by its removed event and credited back', async () => {
    const { w, owner, sub, snapshot } = await watchThenSnapshot('/inflight', 'hold');
    const paid = await pay(w.address, 6n);
    await waitFor('the original attempt held open', () => (receiver.held.get('/inflight')?.length ?? 0) === 1);
    await reorg(snapshot, 2);
    // the watcher decided while the attempt was in flight: the original is marked vanished
    const originalId = await waitFor('the removed event queued', async () => {
      const jobs = await monitor.service.deliveries.queue.getJobs(['waiting', 'active', 'delayed']);
      return jobs.find((j) => j.data.subscriptionId === sub.subscription_id && j.data.removes)?.data.removes;
    });
    expect(receiver.delivered('/inflight')).toEqual([]);
    receiver.release('/inflight');
    const got = await waitFor('the removed event', () => receiver.delivered('/inflight').find((r) => body(r).removed));
    expect(receiver.delivered('/inflight').map((r) => [body(r).tx_hash, body(r).removed ?? false])).toEqual([
      [paid.hash, false],
      [paid.hash, true],
    ]);
    expect(body(got).original_webhook_id).toBe(originalId);
    expect(receiver.delivered('/inflight')[0].headers['webhook-id']).toBe(originalId);
    await waitFor('credited back', async () => (await ledger.balance(owner)) === FUND);
    expect((await monitor.service.subscriptions.stats(sub.subscription_id)).billed).toBe('0');
  });

  it('sends no removed event for a transfer found again in the replacement blocks', async () => {
    const w = privateKeyToAccount(generatePrivateKey());
    const { owner } = await subscribe('/kept', w.address);
    const snapshot = await clients.testClient.snapshot();
    await clients.testClient.mine({ blocks: 1 });
    await caughtUp();
    // the same signed transaction goes into the replacement chain one block later
    const wallet = clients.walletFor(funder());
    const request = await wallet.prepareTransactionRequest({ to: w.address, value: 7n });
    const raw = await wallet.signTransaction(request);
    const first = await clients.publicClient.sendRawTransaction({ serializedTransaction: raw });
    await clients.publicClient.waitForTransactionReceipt({ hash: first });
    await waitFor('the event', () => delivered('/kept').some((e) => e.tx_hash === first));
    await clients.testClient.revert({ id: snapshot });
    await clients.testClient.mine({ blocks: 2 });
    const again = await clients.publicClient.sendRawTransaction({ serializedTransaction: raw });
    expect(again).toBe(first);
    await clients.publicClient.waitForTransactionReceipt({ hash: again });
    await clients.testClient.mine({ blocks: 1 });
    await caughtUp();
    // a control transfer after the re-scan: when it is delivered, any removed event would have been queued before it
    const control = await pay(w.address, 8n);
    await waitFor('the control event', () => delivered('/kept').some((e) => e.tx_hash === control.hash));
    expect(delivered('/kept').filter((e) => e.removed)).toEqual([]);
    expect(delivered('/kept').filter((e) => e.tx_hash === first)).toHaveLength(1);
    expect(await ledger.balance(owner)).toBe(FUND - 2n * PRICE);
  });

  it('with confirmations=3 holds events: one reorged out before its depth is never delivered, one kept is delivered once 3 blocks are on top of it', async () => {
    const w = privateKeyToAccount(generatePrivateKey());
    const deep = await subscribe('/deep', w.address, 3);
    // a witness at depth 0 on the same address: it shows what the watcher has seen
    await subscribe('/shallow', w.address);
    expect((await monitor.service.subscriptions.get(deep.sub.subscription_id))?.confirmations).toBe(3);

    const snapshot = await clients.testClient.snapshot();
    const vanishing = await pay(w.address, 1n);
    await clients.testClient.mine({ blocks: 1 }); // 1 block on top: not deep enough
    await waitFor('the witness event', () => delivered('/shallow').some((e) => e.tx_hash === vanishing.hash));
    await caughtUp();
    expect(delivered('/deep')).toEqual([]);

    await reorg(snapshot, 5); // the replacement chain passes the vanished event's release height (block + 3)
    await waitFor('the witness removed event', () => delivered('/shallow').some((e) => e.tx_hash === vanishing.hash && e.removed));

    const kept = await pay(w.address, 2n);
    await waitFor('the witness event of the kept transfer', () => delivered('/shallow').some((e) => e.tx_hash === kept.hash));
    await clients.testClient.mine({ blocks: 2 });
    await caughtUp();
    expect(delivered('/deep')).toEqual([]); // 2 blocks on top: still held
    await clients.testClient.mine({ blocks: 1 });
    const got = await waitFor('the kept event at depth 3', () => delivered('/deep').find((e) => e.tx_hash === kept.hash));
    expect(got.block_number).toBe(kept.blockNumber.toString());
    expect((await clients.publicClient.getBlock({ blockNumber: kept.blockNumber })).hash).toBe(got.block_hash);

    // the vanished transfer never reached the deep subscriber, and it paid for the one event it got
    const control = await pay(w.address, 3n);
    await clients.testClient.mine({ blocks: 3 });
    await waitFor('the control event at depth 3', () => delivered('/deep').some((e) => e.tx_hash === control.hash));
    expect(delivered('/deep').map((e) => e.tx_hash)).toEqual([kept.hash, control.hash]);
    expect(await ledger.balance(deep.owner)).toBe(FUND - 2n * PRICE);
  });
});
