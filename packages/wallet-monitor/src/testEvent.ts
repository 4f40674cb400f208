import { randomBytes } from 'node:crypto';
import type { DeliveryJobData, WalletEventPayload } from './delivery.js';
import type { SubscriptionRecord } from './subscriptions.js';
import { NATIVE_ASSET } from './tokens.js';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
const ZERO_HASH = `0x${'0'.repeat(64)}`;

/**
 * A test event for a subscription (`POST /v1/wallet-monitor/{id}/test-event`): the shape of a real
 * event, so the receiver's signature check and parser are exercised, marked `test: true`, with
 * the subscription's first event type, chain and watched address, the zero address on the other
 * side, zero block and transaction hashes, block 0, native ETH and amount "0". Its `webhook-id` is
 * fresh (`msg_` + 32 random hex characters): every test event is a new message.
 */
export function testDelivery(sub: Pick<SubscriptionRecord, 'id' | 'events' | 'chains' | 'addresses'>, now = new Date()): DeliveryJobData {
  const type = sub.events[0] ?? 'transfer_in';
  const watched = sub.addresses[0] ?? ZERO_ADDRESS;
  const event: WalletEventPayload = {
    type,
    subscription_id: sub.id,
    chain: sub.chains[0] ?? 'base',
    block_number: '0',
    block_hash: ZERO_HASH,
    tx_hash: ZERO_HASH,
    log_index: null,
    from: type === 'transfer_in' ? ZERO_ADDRESS : watched,
    to: type === 'transfer_in' ? watched : ZERO_ADDRESS,
    asset: { ...NATIVE_ASSET },
    amount: '0',
    observed_at: now.toISOString(),
    test: true,
  };
  return { webhookId: `msg_${randomBytes(16).toString('hex')}`, subscriptionId: sub.id, event, observedAtMs: now.getTime(), generation: 0, test: true };
}
