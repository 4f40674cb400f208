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
