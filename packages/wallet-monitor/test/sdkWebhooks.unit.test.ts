import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/src/webhooks.js';
import { newWebhookSecret } from '../src/index.js';

const body = JSON.stringify({ type: 'transfer_in', amount: '1' });

function signed(secret: string, at = new Date(), id = 'msg_0123456789abcdef0123456789abcdef') {
  const sig = new Webhook(secret).sign(id, at, body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': sig };
}

describe('SDK verifyWebhook (Standard Webhooks)', () => {
  it('accepts what the standardwebhooks library signs, from a plain object or Fetch Headers, string or bytes', async () => {
    const secret = newWebhookSecret();
    const h = signed(secret);
    expect(await verifyWebhook(secret, h, body)).toEqual(JSON.parse(body));
    expect(await verifyWebhook(secret, new Headers(h), new TextEncoder().encode(body))).toEqual(JSON.parse(body));
    // several signatures (secret rotation): one match is enough
    expect(await verifyWebhook(secret, { ...h, 'webhook-signature': `v1,AAAA ${h['webhook-signature']}` }, body)).toEqual(JSON.parse(body));
  });

  it('refuses another secret, a changed body or id, an old timestamp and missing headers', async () => {
    const secret = newWebhookSecret();
    const h = signed(secret);
    await expect(verifyWebhook(newWebhookSecret(), h, body)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(secret, h, body.replace('1', '2'))).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(secret, { ...h, 'webhook-id': 'msg_other' }, body)).rejects.toBeInstanceOf(WebhookVerificationError);
    const old = signed(secret, new Date(Date.now() - 600_000));
    await expect(verifyWebhook(secret, old, body)).rejects.toThrow(/too old/);
    expect(await verifyWebhook(secret, old, body, { toleranceSeconds: 900 })).toEqual(JSON.parse(body));
    await expect(verifyWebhook(secret, { 'webhook-id': h['webhook-id'] }, body)).rejects.toThrow(/Missing/);
  });

  it('and the library accepts what the wallet monitor would send', () => {
    const secret = newWebhookSecret();
    expect(new Webhook(secret).verify(body, signed(secret))).toEqual(JSON.parse(body));
  });
});
