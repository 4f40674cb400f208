import { WalletEvent, WalletMonitorSubscription } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { deliveryErrorMessage, lastErrorOf, testDelivery } from '../src/index.js';

describe('deliveryErrorMessage', () => {
  it('gives each known code its own sentence, and names the status of an http_ code', () => {
    const codes = ['insufficient_balance', 'timeout', 'connection_refused', 'network_error', 'non_public_address', 'invalid_url', 'internal_error'];
    const sentences = codes.map(deliveryErrorMessage);
    expect(new Set(sentences).size).toBe(codes.length);
    expect(deliveryErrorMessage('insufficient_balance')).toContain('POST /v1/account/deposit');
    expect(deliveryErrorMessage('http_503')).toContain('HTTP 503');
    expect(deliveryErrorMessage('http_301')).toContain('Redirects are not followed');
    expect(deliveryErrorMessage('http_404')).not.toContain('Redirects');
    expect(deliveryErrorMessage('something_new')).toContain('something_new');
  });
});

describe('lastErrorOf', () => {
  it('reads the stats hash: null without a code, the status only when something was sent', () => {
    expect(lastErrorOf({})).toBeNull();
    expect(lastErrorOf({ last_error_code: 'insufficient_balance', last_error_status: '', last_error_at: '2026-01-01T00:00:00.000Z' })).toEqual({
      code: 'insufficient_balance',
      message: deliveryErrorMessage('insufficient_balance'),
      status: null,
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(lastErrorOf({ last_error_code: 'http_500', last_error_status: '500', last_error_at: '2026-01-01T00:00:00.000Z' })?.status).toBe(500);
    expect(
      WalletMonitorSubscription.shape.last_error.safeParse(
        lastErrorOf({ last_error_code: 'timeout', last_error_status: '0', last_error_at: '2026-01-01T00:00:00.000Z' }),
      ).success,
    ).toBe(true);
  });
});

describe('testDelivery', () => {
  const sub = {
    id: 'sub_01JABCDEFGHJKMNPQRSTVWXYZ0',
    events: ['transfer_in' as const],
    chains: ['base' as const],
    addresses: ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const],
  };
  it('is a valid wallet event marked test, to the watched address, with a fresh webhook id each time', () => {
    const a = testDelivery(sub);
    const b = testDelivery(sub);
    expect(WalletEvent.parse(a.event)).toEqual(a.event);
    expect(a.event).toMatchObject({ type: 'transfer_in', chain: 'base', to: sub.addresses[0], amount: '0', test: true, subscription_id: sub.id });
    expect(a.webhookId).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(a.webhookId).not.toBe(b.webhookId);
    expect(a).toMatchObject({ generation: 0, test: true, subscriptionId: sub.id });
  });
  it('puts the watched address on the sending side of a transfer_out', () => {
    const out = testDelivery({ ...sub, events: ['transfer_out'] });
    expect(out.event).toMatchObject({ type: 'transfer_out', from: sub.addresses[0], to: '0x0000000000000000000000000000000000000000' });
  });
});
