import { walletMonitor } from '@acg/capabilities';
import { ChainName } from '@acg/schemas';

/** Capability id of the wallet monitor in the catalog (billing item and health entry), from its one definition (`@acg/capabilities`). */
export const WALLET_MONITOR_CAPABILITY_ID = walletMonitor.id;

/** Price of one delivered event: 0.001 USDC = 1000 base units (docs/spec-notes.md 4, 8). */
export const EVENT_PRICE_BASE_UNITS = 1_000n;

/** A subscription's term: `expires_at` is 30 days after creation or the last renewal (docs/decisions.md). */
export const SUBSCRIPTION_TERM_SECONDS = 30 * 24 * 3600;

/**
 * Balance (integer USDC base units) a renewal needs: one event's price. A renewal itself costs
 * nothing; it only checks that the metered account can pay for deliveries (docs/spec-notes.md 3).
 */
export const RENEWAL_MIN_BALANCE_BASE_UNITS = EVENT_PRICE_BASE_UNITS;

/**
 * Delay before each attempt of one webhook, milliseconds (docs/decisions.md "Wallet monitor"): immediately,
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts over about 27.6 h, then dead-letter.
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/**
 * Which webhook URLs are accepted (docs/decisions.md "Wallet monitor"):
 * - `production`: https only, and the host must resolve only to public addresses (checked at
 *   subscription and again at every delivery, so DNS rebinding cannot reach a private network);
 * - `development`: the production rules plus http or https to a loopback host (127.0.0.0/8, ::1,
 *   localhost), nothing more (`checkPublicUrl` in packages/net-guard/src/urlGuard.ts; README "Outbound URL rules").
 */
export type WebhookPolicy = 'production' | 'development';

/** The three spec chains (schema `ChainName`). */
export const CHAIN_NAMES = ChainName.options;
export type { ChainName };

/**
 * Confirmation depth per chain when none is configured and the node is not a dev chain (anvil,
 * where the default is 1): the block must be this many blocks deep (1 = the head itself).
 */
export const DEFAULT_CONFIRMATIONS: Record<ChainName, number> = { ethereum: 3, base: 3, arbitrum: 3 };

/** BullMQ queue of webhook deliveries. */
export const DELIVERY_QUEUE = 'wallet-monitor-deliveries';

/**
 * The webhook policy from the environment: `WEBHOOK_POLICY` (`production` | `development`) when
 * set; else `NODE_ENV=production` → production, `NODE_ENV=development|test` → development; else
 * `fallback` (default `production`: a deployment that says nothing gets the SSRF-safe rules; the
 * embedded dev launcher passes `development`).
 */
export function webhookPolicyFromEnv(env: NodeJS.ProcessEnv, fallback: WebhookPolicy = 'production'): WebhookPolicy {
  const explicit = env.WEBHOOK_POLICY;
  if (explicit === 'production' || explicit === 'development') return explicit;
  if (explicit) throw new Error('WEBHOOK_POLICY must be production or development');
  if (env.NODE_ENV === 'production') return 'production';
  if (env.NODE_ENV === 'development' || env.NODE_ENV === 'test') return 'development';
  return fallback;
}
