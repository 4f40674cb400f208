import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import { BASE_USDC_ADDRESS } from '../src/constants.js';
import { pingRedis } from '../src/redis.js';
import { startDevStack, type DevStack } from '../src/stack.js';
import { usdcBalance } from '../src/usdc.js';

let stack: DevStack;
beforeAll(async () => {
  stack = await startDevStack({ preferPrivateRedis: true });
});
afterAll(async () => {
  await stack?.stop();
});

describe('startDevStack', () => {
  it('starts the payment chain 8453 with USDC and funded buyers', async () => {
    const { payment } = stack;
    expect(payment.chainId).toBe(8453);
    expect(payment.anvil.chainId).toBe(8453);
    expect(payment.rpcUrl).toBe(payment.anvil.rpcUrl);
    const client = createPublicClient({ chain: payment.chain, transport: http(payment.rpcUrl) });
    expect(await client.getChainId()).toBe(8453);
    expect(payment.usdc).toBe(BASE_USDC_ADDRESS);
    expect(await usdcBalance(payment.rpcUrl, payment.buyers[7].address)).toBe(10_000_000_000n);
  });

  it('provides a private Redis', async () => {
    expect(stack.redis.spawned).toBe(true);
    const client = new Redis(stack.redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });

  it('stop() ends the chain and the private Redis', async () => {
    const { rpcUrl } = stack.payment;
    const redisPort = Number(new URL(stack.redis.url).port);
    await stack.stop();
    await expect(fetch(rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow();
    expect(await pingRedis('127.0.0.1', redisPort, 500)).toBe(false);
    await stack.stop(); // idempotent
  });
});
