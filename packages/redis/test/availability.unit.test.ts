import { TRPCError } from '@trpc/server';
import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { isRedisUnavailable, retryWhileRedisUnavailable } from '../src/availability.js';

// what ioredis throws once maxRetriesPerRequest reconnects failed (its class is not exported)
const maxRetries = () =>
  Object.assign(new Error('Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.'), {
    name: 'MaxRetriesPerRequestError',
  });
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

describe('isRedisUnavailable', () => {
  it('recognizes the errors of an unreachable or restarting Redis, also when wrapped', () => {
    for (const e of [
      maxRetries(),
      new Error('Connection is closed.'),
      new Error('Command timed out'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      refused,
      new AggregateError([refused], 'connect failed'),
      new ReplyError('LOADING Redis is loading the dataset in memory'),
      new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: maxRetries() }),
      new Error('outer', { cause: new Error('middle', { cause: refused }) }),
    ]) {
      expect(isRedisUnavailable(e), String(e)).toBe(true);
    }
  });

  it('does not mistake other failures for an outage', () => {
    for (const e of [
      new Error('boom'),
      new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'),
      new ReplyError('ERR Error running script'),
      new TRPCError({ code: 'BAD_REQUEST', message: 'bad input' }),
      Object.assign(new Error('nope'), { code: 'ENOENT' }),
      undefined,
      'Connection is closed.',
    ]) {
      expect(isRedisUnavailable(e), String(e)).toBe(false);
    }
  });
});

describe('retryWhileRedisUnavailable', () => {
  it('retries an outage until the call succeeds, and rethrows other errors at once', async () => {
    let calls = 0;
    await expect(retryWhileRedisUnavailable(async () => (++calls < 3 ? Promise.reject(refused) : 'ok'))).resolves.toBe('ok');
    expect(calls).toBe(3);
    calls = 0;
    await expect(
      retryWhileRedisUnavailable(async () => {
        calls++;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(calls).toBe(1);
  });

  it('gives up after the tolerance with the outage error', async () => {
    await expect(retryWhileRedisUnavailable(() => Promise.reject(refused), { toleranceMs: 0 })).rejects.toBe(refused);
  });
});
