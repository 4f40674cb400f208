import { devAccount, devClients, resolveRedis, startDevChain, type DevChain, type DevClients, type RedisHandle } from '@acg/devnet';
import { Ledger } from '@acg/accounts';
import { connectRedis, RedisKeys } from '@acg/redis';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Redis } from 'ioredis';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveWsUrl, startWalletMonitor, type WalletEventPayload } from '../src/index.js';
import { Receiver, waitFor } from './helpers.js';

/**
 * How the watcher learns of new heads: by `eth_subscribe` `newHeads` over WebSocket (anvil serves
 * it on the HTTP port), and by polling when no WebSocket is reachable. A real anvil and a private
 * redis-server, no gateway.
 */

/** Far longer than any wait below: with it, only the subscription can wake the watcher in time. */
const NEVER_MS = 600_000;

let redisHandle: RedisHandle;
let chain: DevChain;
let clients: DevClients;
let redis: Redis;
const receiver = new Receiver();
const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

beforeAll(async () => {
  [redisHandle, chain] = await Promise.all([resolveRedis({ preferPrivate: true }), startDevChain('ethereum'), receiver.start()]);
  clients = await devClients(chain.rpcUrl);
  redis = connectRedis({ url: redisHandle.url, name: 'wm-heads-test' });
});

afterAll(async () => {
  redis?.disconnect();
  await receiver.close();
  await Promise.all([chain?.stop(), redisHandle?.stop()]);
});

/** A monitor on its own key prefix, one subscription watching a fresh address, the owner funded. */
async function setup(name: string, opts: { wsUrl?: string | false; pollIntervalMs: number }) {
  const keys = new RedisKeys(`acg:test:heads:${name}:${Date.now()}:`);
  const monitor = await startWalletMonitor({
    redisUrl: redisHandle.url,
    keyPrefix: keys.prefix,
    chains: { ethereum: { rpcUrl: chain.rpcUrl, wsUrl: opts.wsUrl } },
    policy: 'development',
    pollIntervalMs: opts.pollIntervalMs,
    renewalIntervalSeconds: 0,
    log: silent,
  });
  const watcher = monitor.watchers[0];
  await waitFor('the watcher cursor', () => watcher.cursor());
  const owner = devAccount(2).address;
  await new Ledger(redis, keys).credit(owner, 1_000_000n, 'deposit', `test-${name}`);
  const w = privateKeyToAccount(generatePrivateKey());
  const sub = await monitor.service.subscribe(owner, {
    addresses: [w.address],
    chains: ['ethereum'],
    events: ['transfer_in'],
    webhook_url: `${receiver.url}/${name}`,
  });
  return { monitor, watcher, w, sub };
}

const pay = async (to: `0x${string}`, value: bigint) => {
  const hash = await clients.walletFor(devAccount(3) as LocalAccount).sendTransaction({ to, value });
  await clients.publicClient.waitForTransactionReceipt({ hash });
  return hash;
};

describe('new heads', () => {
  it('follows new heads by newHeads subscription: a transfer is delivered although the poll interval never elapses', async () => {
    const { monitor, watcher, w, sub } = await setup('ws', { pollIntervalMs: NEVER_MS }); // ws:// derived from the anvil http:// URL
    try {
      await waitFor('the newHeads subscription', () => watcher.headSource === 'subscription' || undefined);
      const first = await pay(w.address, 123n);
      const second = await pay(w.address, 456n);
      const got = await waitFor('both deliveries', () => (receiver.delivered('/ws').length >= 2 ? receiver.delivered('/ws') : undefined));
      const events = got.map((r) => JSON.parse(r.body) as WalletEventPayload);
      expect(events.map((e) => e.tx_hash).sort()).toEqual([first, second].sort());
      expect(events.map((e) => e.amount).sort()).toEqual(['123', '456']);
      const hook = new Webhook(sub.secret);
      for (const r of got) expect(hook.verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
      expect(watcher.headSource).toBe('subscription');
      // the cursor is the block of the last transfer: nothing was skipped
      const receipt = await clients.publicClient.getTransactionReceipt({ hash: second });
      await waitFor('the cursor at the last block', async () => (await watcher.cursor())?.hash === receipt.blockHash || undefined);
    } finally {
      await monitor.stop();
    }
  });

  it('falls back to polling when the WebSocket is unavailable: transfers are still delivered', async () => {
    // a port nothing listens on: the subscription fails and the watcher polls
    const { monitor, watcher, w } = await setup('poll', { wsUrl: 'ws://127.0.0.1:9', pollIntervalMs: 100 });
    try {
      const hash = await pay(w.address, 789n);
      const got = await waitFor('the delivery', () => receiver.delivered('/poll')[0]);
      expect(JSON.parse(got.body)).toMatchObject({ tx_hash: hash, amount: '789', type: 'transfer_in' });
      expect(watcher.headSource).toBe('polling');
    } finally {
      await monitor.stop();
    }
  });

  it('polls only when the subscription is switched off (wsUrl: false)', async () => {
    const { monitor, watcher, w } = await setup('off', { wsUrl: false, pollIntervalMs: 100 });
    try {
      const hash = await pay(w.address, 1011n);
      const got = await waitFor('the delivery', () => receiver.delivered('/off')[0]);
      expect(JSON.parse(got.body)).toMatchObject({ tx_hash: hash, amount: '1011' });
      expect(watcher.headSource).toBe('polling');
    } finally {
      await monitor.stop();
    }
  });
});

describe('resolveWsUrl', () => {
  it('derives ws:// from an http:// RPC URL, prefers the *_WS_URL variable, and derives nothing for https', () => {
    expect(resolveWsUrl('ethereum', { rpcUrl: 'http://127.0.0.1:8545' }, {})).toBe('ws://127.0.0.1:8545/');
    expect(resolveWsUrl('base', { rpcUrl: 'http://127.0.0.1:8545' }, { BASE_WS_URL: 'wss://base.example/ws' })).toBe('wss://base.example/ws');
    expect(resolveWsUrl('arbitrum', { rpcUrl: 'http://127.0.0.1:8545' }, { ARBITRUM_WS_URL: 'off' })).toBeUndefined();
    expect(resolveWsUrl('ethereum', { rpcUrl: 'https://eth.example/rpc' }, {})).toBeUndefined();
    expect(resolveWsUrl('ethereum', { rpcUrl: 'https://eth.example/rpc', wsUrl: 'wss://eth.example/ws' }, {})).toBe('wss://eth.example/ws');
    expect(resolveWsUrl('ethereum', { rpcUrl: 'http://127.0.0.1:8545', wsUrl: false }, { ETHEREUM_WS_URL: 'ws://x' })).toBeUndefined();
  });
});
