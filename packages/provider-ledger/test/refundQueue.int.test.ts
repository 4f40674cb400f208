import { resolveRedis, type RedisHandle } from '@acg/devnet';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRefund, RefundQueue } from '@acg/treasury';

/**
 * `RefundQueue.enqueue` records a refund with one atomic write (issue 33: a lost or interrupted
 * second write left a refund `pending` with no amount). A private Redis's MONITOR shows every
 * command that touched the refund record.
 */
let server: RedisHandle;
let redis: Redis;
let bull: Redis;
let monitor: Redis;
const seen: string[][] = [];

beforeAll(async () => {
  server = await resolveRedis({ preferPrivate: true });
  redis = connectRedis({ url: server.url });
  bull = connectRedis({ url: server.url, forBullmq: true });
  monitor = connectRedis({ url: server.url });
  const m = await monitor.monitor();
  // commands clients sent (a script's own commands show with the source `lua`)
  m.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua') seen.push(args);
  });
});
afterAll(async () => {
  monitor?.disconnect();
  redis?.disconnect();
  bull?.disconnect();
  await server?.stop();
});

describe('RefundQueue.enqueue', () => {
  it('writes status, amount, payer and payment tx in one command, once per operation', async () => {
    const keys = new RedisKeys(`acg:test:refundqueue:${ulid()}:`);
    const queue = new RefundQueue(redis, keys, bull);
    const operationId = `exe_${ulid()}`;
    const refundKey = `${keys.prefix}refund:${operationId}`;
    const payer = `0x${'ab'.repeat(20)}` as const;
    const paymentTxHash = `0x${'cd'.repeat(32)}` as const;
    try {
      await queue.enqueue({ operationId, payer, amount: '1500', paymentTxHash });
      await queue.enqueue({ operationId, payer, amount: '9999', paymentTxHash }); // a second call changes nothing
      await redis.ping(); // the monitor has seen everything before this
      await new Promise((r) => setTimeout(r, 100));
      const touching = seen.filter((args) => args.includes(refundKey));
      // every command that touched the record wrote it whole, or left it as it was (a script run twice)
      expect(touching.length).toBeGreaterThan(0);
      for (const args of touching) expect(args[0].toLowerCase()).toMatch(/^(evalsha|eval)$/);
      expect(await readRefund(redis, keys, operationId)).toEqual({ status: 'pending', amount: '1500', payer });
      expect(await redis.hget(refundKey, 'payment_tx_hash')).toBe(paymentTxHash);
      expect(await queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    } finally {
      await queue.close();
    }
  });
});
