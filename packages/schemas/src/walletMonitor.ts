import { z } from 'zod';
import { getAddress } from 'viem';
import { Address, ChainName, ChecksumAddress, DateTime, Hash32, UintString, UnixSeconds, prefixedUlid } from './primitives.js';

/** Subscribable wallet events: `transfer_in | transfer_out` (docs/spec-notes.md 2.6, 6). */
export const WalletEventName = z.enum(['transfer_in', 'transfer_out']);
export type WalletEventName = z.infer<typeof WalletEventName>;

/** Subscription id: `sub_` + ULID (docs/spec-notes.md 2.6 prefix, docs/decisions.md "Wallet monitor"). */
export const SubscriptionId = prefixedUlid('sub');
export type SubscriptionId = z.infer<typeof SubscriptionId>;

/** Most addresses one subscription may watch (docs/decisions.md "Wallet monitor"). */
export const MAX_ADDRESSES_PER_SUBSCRIPTION = 1000;

/** Subscription lifecycle: `active` until `expires_at` (renewed while the account has balance), then `expired`; `cancelled` by the owner. */
export const SubscriptionStatus = z.enum(['active', 'expired', 'cancelled']);
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;

/**
 * Standard Webhooks message id (`webhook-id` header): `msg_` + 32 lowercase hex characters,
 * derived from chain, tx hash, log index (or trace position), subscription and event type, so
 * every redelivery of one event carries the same id.
 */
export const WebhookId = z.string().regex(/^msg_[0-9a-f]{32}$/, 'must be msg_ followed by 32 lowercase hex characters');
export type WebhookId = z.infer<typeof WebhookId>;

/** A watched address: EIP-55 checksummed or all lowercase; a mixed-case address with a bad checksum is refused. */
export const WatchedAddress = Address.refine((a) => {
  if (a === a.toLowerCase()) return true;
  try {
    return getAddress(a) === a;
  } catch {
    return false;
  }
}, 'must be an EIP-55 checksummed or an all-lowercase address (the mixed-case checksum does not match)');

/** Most confirmations a subscription may ask for before its events are delivered. */
export const MAX_SUBSCRIPTION_CONFIRMATIONS = 64;

/**
 * Blocks mined on top of an event's block before the event is delivered (0..64, default 0: as
 * soon as the chain's watcher reads the block at its own depth). An event whose block is
 * reorged out before it reaches this depth is never delivered (packages/wallet-monitor README
 * "Reorgs and confirmations").
 */
export const SubscriptionConfirmations = z
  .int()
  .min(0)
  .max(MAX_SUBSCRIPTION_CONFIRMATIONS)
  .describe('blocks mined on top of the event block before delivery (0..64, default 0)');

/**
 * Body of `POST /v1/wallet-monitor` (docs/spec-notes.md 2.6): `addresses` (1..1000 EVM addresses, checksummed or
 * lowercase; duplicates are merged), `chains` (>= 1 of `ethereum|base|arbitrum`), `events`
 * (>= 1 of `transfer_in|transfer_out`), `webhook_url` (http(s) URL; the https/SSRF policy is
 * enforced by the service, docs/decisions.md) and `confirmations` ({@link SubscriptionConfirmations}, default 0).
 */
export const WalletMonitorSubscriptionRequest = z.strictObject({
  addresses: z.array(WatchedAddress).min(1).max(MAX_ADDRESSES_PER_SUBSCRIPTION),
  chains: z.array(ChainName).min(1).max(3),
  events: z.array(WalletEventName).min(1).max(2),
  webhook_url: z.url({ protocol: /^https?$/ }).max(2048),
  confirmations: SubscriptionConfirmations.default(0),
});
export type WalletMonitorSubscriptionRequest = z.infer<typeof WalletMonitorSubscriptionRequest>;

/**
 * Created subscription (docs/spec-notes.md 2.6): `subscription_id` (`sub_` + ULID), `expires_at` (UNIX seconds,
 * 30 days out), plus `secret` (`whsec_` + base64, the Standard Webhooks signing secret, returned
 * only here, docs/decisions.md).
 */
export const WalletMonitorSubscriptionCreated = z.object({
  subscription_id: SubscriptionId,
  expires_at: UnixSeconds,
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ + base64'),
});
export type WalletMonitorSubscriptionCreated = z.infer<typeof WalletMonitorSubscriptionCreated>;

/** Response of `POST /v1/wallet-monitor/{sub_id}/cancel`: `{subscription_id, status: "cancelled", cancelled_at}` (UNIX seconds, docs/decisions.md). */
export const WalletMonitorSubscriptionCancelled = z.object({
  subscription_id: SubscriptionId,
  status: z.literal('cancelled'),
  cancelled_at: UnixSeconds,
});
export type WalletMonitorSubscriptionCancelled = z.infer<typeof WalletMonitorSubscriptionCancelled>;

/**
 * Delivery statistics of one subscription: `events` (matched and queued), `delivered` (2xx),
 * `pending` (queued or waiting for a retry), `failed_attempts` (non-2xx, timeouts, refused
 * connections), `dead_lettered` (gave up after the retry schedule; replayable), `dropped`
 * (discarded because the subscription was cancelled, or a reorg removed the event before it was
 * delivered), `removed` (delivered events whose transfer a reorg removed: each was followed by a
 * `removed: true` event and credited back), `billed` (integer USDC base units, 1000 per delivered
 * event that is still on chain), `last_delivery_at` (RFC 3339 or null), `last_status` (HTTP status of the last
 * attempt, 0 for a network error, null before any).
 */
export const WalletMonitorDeliveryStats = z.object({
  events: z.int().nonnegative(),
  delivered: z.int().nonnegative(),
  pending: z.int().nonnegative(),
  failed_attempts: z.int().nonnegative(),
  dead_lettered: z.int().nonnegative(),
  dropped: z.int().nonnegative(),
  removed: z.int().nonnegative(),
  billed: UintString,
  last_delivery_at: DateTime.nullable(),
  last_status: z.int().nonnegative().nullable(),
});
export type WalletMonitorDeliveryStats = z.infer<typeof WalletMonitorDeliveryStats>;

/**
 * Why the most recent delivery attempt of a subscription failed: `code` (machine-readable:
 * `insufficient_balance` — nothing was sent because the owner's metered account cannot pay the
 * event's 0.001 USDC; `http_<status>` — the receiver answered non-2xx; `timeout`,
 * `connection_refused`, `network_error`, `non_public_address` — refused by the SSRF rules at
 * connect time; `invalid_url`; `internal_error`), `message` (one human sentence saying what to do),
 * `status` (the receiver's HTTP status, 0 for a network error, null when nothing was sent) and
 * `at` (RFC 3339 time of the attempt).
 */
export const WalletMonitorDeliveryError = z.object({
  code: z.string(),
  message: z.string(),
  status: z.int().nonnegative().nullable(),
  at: DateTime,
});
export type WalletMonitorDeliveryError = z.infer<typeof WalletMonitorDeliveryError>;

/**
 * `GET /v1/wallet-monitor/{sub_id}`: the subscription (without its secret), its delivery stats,
 * and `last_error`: why the most recent attempt failed ({@link WalletMonitorDeliveryError}), null
 * when no attempt failed yet or a later attempt was delivered. Times are UNIX seconds.
 */
export const WalletMonitorSubscription = z.object({
  subscription_id: SubscriptionId,
  status: SubscriptionStatus,
  addresses: z.array(ChecksumAddress),
  chains: z.array(ChainName),
  events: z.array(WalletEventName),
  webhook_url: z.string(),
  confirmations: SubscriptionConfirmations,
  created_at: UnixSeconds,
  expires_at: UnixSeconds,
  cancelled_at: UnixSeconds.nullable(),
  renewals: z.int().nonnegative(),
  delivery: WalletMonitorDeliveryStats,
  last_error: WalletMonitorDeliveryError.nullable(),
});
export type WalletMonitorSubscription = z.infer<typeof WalletMonitorSubscription>;

/**
 * Webhook payload of one wallet event (docs/decisions.md "Wallet monitor"): `type`, `subscription_id`,
 * `chain`, `block_number` (integer string), `block_hash`, `tx_hash`, `log_index` (null for native
 * ETH transfers, top-level or internal), `from`, `to` (checksummed), `asset` (`address` null for
 * native ETH, `symbol`, `decimals`), `amount` (integer string in the asset's base units),
 * `observed_at` (RFC 3339 UTC: when the block reached its confirmation depth). `test: true` marks
 * a test event sent with `POST /v1/wallet-monitor/{sub_id}/test-event`: it has the same shape,
 * with zero hashes, block 0, amount "0" and native ETH; real events carry no `test` field.
 *
 * `removed: true` (with `original_webhook_id`) says that a reorg took the transfer of an event
 * delivered before out of the chain: the same fields as that event (its `block_hash` is the block
 * that vanished), `observed_at` when the watcher found it gone; not billed, and the original's
 * 0.001 USDC is credited back (the Alchemy address-activity convention; packages/wallet-monitor
 * README "Reorgs and confirmations"). Events still on chain carry no `removed` field.
 */
export const WalletEvent = z.object({
  type: WalletEventName,
  subscription_id: SubscriptionId,
  chain: ChainName,
  block_number: UintString,
  block_hash: Hash32,
  tx_hash: Hash32,
  log_index: z.int().nonnegative().nullable(),
  from: Address,
  to: Address,
  asset: z.object({
    address: Address.nullable(),
    symbol: z.string(),
    decimals: z.int().nonnegative(),
  }),
  amount: UintString,
  observed_at: DateTime,
  test: z.literal(true).optional(),
  removed: z.literal(true).optional(),
  original_webhook_id: WebhookId.optional(),
});
export type WalletEvent = z.infer<typeof WalletEvent>;

/**
 * An event that exhausted its retry schedule (`GET /v1/wallet-monitor/{sub_id}/dead-letters`):
 * `webhook_id`, the `event` payload, `attempts`, `last_status` (HTTP status, 0 for a network
 * error, null when never attempted), `last_error` (short reason) and `dead_lettered_at` (UNIX s).
 */
export const WalletMonitorDeadLetter = z.object({
  webhook_id: WebhookId,
  event: WalletEvent,
  attempts: z.int().nonnegative(),
  last_status: z.int().nonnegative().nullable(),
  last_error: z.string(),
  dead_lettered_at: UnixSeconds,
});
export type WalletMonitorDeadLetter = z.infer<typeof WalletMonitorDeadLetter>;

/** `GET /v1/wallet-monitor/{sub_id}/dead-letters`: oldest first, at most `limit`. */
export const WalletMonitorDeadLetters = z.object({
  subscription_id: SubscriptionId,
  dead_letters: z.array(WalletMonitorDeadLetter),
});
export type WalletMonitorDeadLetters = z.infer<typeof WalletMonitorDeadLetters>;

/** `POST /v1/wallet-monitor/{sub_id}/dead-letters/replay`: `webhook_ids` to replay (default: every dead letter). */
export const WalletMonitorReplayRequest = z.object({
  webhook_ids: z.array(WebhookId).min(1).max(1000).optional(),
});
export type WalletMonitorReplayRequest = z.infer<typeof WalletMonitorReplayRequest>;

/** Replay result: the dead letters queued again (each keeps its `webhook-id`; the retry schedule starts over). */
export const WalletMonitorReplayed = z.object({
  subscription_id: SubscriptionId,
  replayed: z.array(WebhookId),
});
export type WalletMonitorReplayed = z.infer<typeof WalletMonitorReplayed>;

/** Outcome of one delivery attempt: `delivered` (2xx), `failed` (retried on the schedule), `dead_lettered` (the last attempt failed), `dropped` (the subscription was cancelled). */
export const WalletMonitorAttemptOutcome = z.enum(['delivered', 'failed', 'dead_lettered', 'dropped']);
export type WalletMonitorAttemptOutcome = z.infer<typeof WalletMonitorAttemptOutcome>;

/**
 * One delivery attempt, as listed by `GET /v1/wallet-monitor/{sub_id}/deliveries` (newest first,
 * the last 100 attempts kept): `webhook_id`, the event `type`, `test` (a test event), `removed`
 * (a `removed: true` event: a reorg took the original's transfer out of the chain),
 * `attempt` (1-based within its run), `replay` (0 for the first run, n for the n-th replay of a
 * dead letter), `outcome`, `status` (the receiver's HTTP status, 0 for a network error, null when
 * nothing was sent), `error` (code and human message, null when delivered or dropped) and `at`.
 */
export const WalletMonitorDeliveryAttempt = z.object({
  webhook_id: WebhookId,
  type: WalletEventName,
  test: z.boolean(),
  removed: z.boolean(),
  attempt: z.int().min(1),
  replay: z.int().nonnegative(),
  outcome: WalletMonitorAttemptOutcome,
  status: z.int().nonnegative().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  at: DateTime,
});
export type WalletMonitorDeliveryAttempt = z.infer<typeof WalletMonitorDeliveryAttempt>;

/** `GET /v1/wallet-monitor/{sub_id}/deliveries`: the most recent delivery attempts, newest first. */
export const WalletMonitorDeliveries = z.object({
  subscription_id: SubscriptionId,
  deliveries: z.array(WalletMonitorDeliveryAttempt),
});
export type WalletMonitorDeliveries = z.infer<typeof WalletMonitorDeliveries>;

/**
 * `POST /v1/wallet-monitor/{sub_id}/test-event` (202): a test event queued through the normal
 * delivery path (signed, retried, dead-lettered and billed 0.001 USDC on a 2xx delivery like any
 * event). `event` is the payload the receiver will get (`test: true`).
 */
export const WalletMonitorTestEventQueued = z.object({
  subscription_id: SubscriptionId,
  webhook_id: WebhookId,
  status: z.literal('queued'),
  event: WalletEvent,
});
export type WalletMonitorTestEventQueued = z.infer<typeof WalletMonitorTestEventQueued>;
