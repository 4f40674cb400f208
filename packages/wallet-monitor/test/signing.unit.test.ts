import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook } from '../src/index.js';

describe('signWebhook', () => {
  it('computes exactly what standardwebhooks signs, and what it verifies', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1_600_000_000, max: 2_100_000_000 }), fc.string({ minLength: 1, maxLength: 40 }), (body, seconds, id) => {
        const secret = newWebhookSecret();
        const at = new Date(seconds * 1000 + 123);
        const ours = signWebhook(secret, id, at, body);
        expect(ours).toBe(new Webhook(secret).sign(id, at, body));
      }),
      { numRuns: 200 },
    );
    const secret = newWebhookSecret();
    const now = new Date();
    const body = JSON.stringify({ type: 'transfer_in', amount: '1' });
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signWebhook(secret, 'msg_1', now, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });
});
