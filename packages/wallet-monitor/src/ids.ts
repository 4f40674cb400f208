import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { ChainName } from './config.js';

/** A new subscription id: `sub_` + ULID. */
export function newSubscriptionId(): string {
  return `sub_${ulid()}`;
}

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Where a transfer sits inside its transaction. */
export type TransferPosition =
  /** an ERC-20 `Transfer` log */
  | { kind: 'log'; logIndex: number }
  /** the transaction's own value */
  | { kind: 'tx' }
  /** an internal value transfer: the call frame's path in the callTracer tree, e.g. [0, 2] */
  | { kind: 'trace'; path: number[] };

/** Stable text of a position, e.g. `log:7`, `tx`, `trace:0.2`. */
export function positionKey(p: TransferPosition): string {
  return p.kind === 'log' ? `log:${p.logIndex}` : p.kind === 'tx' ? 'tx' : `trace:${p.path.join('.')}`;
}

/**
 * The Standard Webhooks `webhook-id` of one event: `msg_` + the first 32 hex characters of
 * sha256(chain | tx hash | position | subscription | type). Deterministic, so a redelivery, a
 * watcher restart that re-reads a block, or the same transaction re-included after a reorg all
 * carry the same id and receivers can deduplicate. The block hash is deliberately not part of it.
 */
export function webhookId(e: { chain: ChainName; txHash: string; position: TransferPosition; subscriptionId: string; type: string }): string {
  const text = [e.chain, e.txHash.toLowerCase(), positionKey(e.position), e.subscriptionId, e.type].join('|');
  return `msg_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/**
 * The `webhook-id` of the `removed: true` event that follows a delivered event whose transfer a
 * reorg took out of the chain: `msg_` + 32 hex of sha256(original id | `removed`). A distinct
 * message (receivers deduplicate on the id), the same for every retry of it.
 */
export function removedWebhookId(originalId: string): string {
  return `msg_${createHash('sha256').update(`${originalId}|removed`).digest('hex').slice(0, 32)}`;
}

/**
 * The `webhook-id` of an event whose deterministic id ({@link webhookId}) already belongs to an
 * event a reorg removed (its transaction was mined again later, after the removed event went
 * out): `msg_` + 32 hex of sha256(previous id | `again`), so receivers that deduplicated the
 * removed original still get the transfer.
 */
export function reissuedWebhookId(previousId: string): string {
  return `msg_${createHash('sha256').update(`${previousId}|again`).digest('hex').slice(0, 32)}`;
}
