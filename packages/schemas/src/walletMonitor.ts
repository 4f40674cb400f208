import { z } from 'zod';
import { Address, ChainName, DateTime, Hash32, UintString, UnixSeconds, prefixedUlid } from './primitives.js';

/** Subscribable wallet events: `transfer_in | transfer_out` (SPEC 2.6, 6). */
export const WalletEventName = z.enum(['transfer_in', 'transfer_out']);
export type WalletEventName = z.infer<typeof WalletEventName>;

/** Subscription id: `sub_` + ULID (SPEC 2.6 prefix, DESIGN "Wallet monitor"). */
export const SubscriptionId = prefixedUlid('sub');
export type SubscriptionId = z.infer<typeof SubscriptionId>;

/** Most addresses one subscription may watch (DESIGN "Wallet monitor"). */
export const MAX_ADDRESSES_PER_SUBSCRIPTION = 1000;

/**
 * Body of `POST /v1/wallet-monitor` (SPEC 2.6): `addresses` (1..1000 EVM addresses), `chains`
 * (>= 1 of `ethereum|base|arbitrum`), `events` (>= 1 of `transfer_in|transfer_out`) and
 * `webhook_url` (http(s) URL; the https/SSRF policy is enforced by the service, DESIGN).
 */
export const WalletMonitorSubscriptionRequest = z.strictObject({
  addresses: z.array(Address).min(1).max(MAX_ADDRESSES_PER_SUBSCRIPTION),
  chains: z.array(ChainName).min(1),
  events: z.array(WalletEventName).min(1),
  webhook_url: z.url({ protocol: /^https?$/ }),
});
export type WalletMonitorSubscriptionRequest = z.infer<typeof WalletMonitorSubscriptionRequest>;

/**
 * Created subscription (SPEC 2.6): `subscription_id` (`sub_` + ULID), `expires_at` (UNIX seconds),
 * plus `webhook_secret` (`whsec_` + base64, Standard Webhooks signing secret, returned only here, DESIGN).
 */
export const WalletMonitorSubscriptionCreated = z.object({
  subscription_id: SubscriptionId,
  expires_at: UnixSeconds,
  webhook_secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ + base64'),
});
export type WalletMonitorSubscriptionCreated = z.infer<typeof WalletMonitorSubscriptionCreated>;

/** Response of `POST /v1/wallet-monitor/{sub_id}/cancel`: `{subscription_id, status: "cancelled", cancelled_at}` (UNIX seconds, DESIGN). */
export const WalletMonitorSubscriptionCancelled = z.object({
  subscription_id: SubscriptionId,
  status: z.literal('cancelled'),
  cancelled_at: UnixSeconds,
});
export type WalletMonitorSubscriptionCancelled = z.infer<typeof WalletMonitorSubscriptionCancelled>;

/**
 * Webhook payload of one wallet event (DESIGN "Wallet monitor"): `type`, `subscription_id`,
 * `chain`, `block_number` (integer string), `block_hash`, `tx_hash`, `log_index` (null for native
 * ETH transfers), `from`, `to`, `asset` (`address` null for native ETH, `symbol`, `decimals`),
 * `amount` (integer string in the asset's base units), `observed_at` (RFC 3339 UTC).
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
});
export type WalletEvent = z.infer<typeof WalletEvent>;
