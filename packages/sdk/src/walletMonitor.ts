import { cancelSubscription } from './actions/walletMonitor/cancelSubscription.js';
import { getDeadLetters } from './actions/walletMonitor/getDeadLetters.js';
import { getDeliveries } from './actions/walletMonitor/getDeliveries.js';
import { getSubscription } from './actions/walletMonitor/getSubscription.js';
import { replayDeadLetters } from './actions/walletMonitor/replayDeadLetters.js';
import { sendTestEvent } from './actions/walletMonitor/sendTestEvent.js';
import { subscribe } from './actions/walletMonitor/subscribe.js';
import { createGatewayContext } from './context.js';
import type { DeadLetter, DeliveryAttempt, SubscribeRequest, Subscription, SubscriptionCreated, TestEventQueued } from './types.js';

export type {
  DeadLetter,
  DeliveryAttempt,
  SubscribeRequest,
  Subscription,
  SubscriptionCreated,
  TestEventQueued,
  WalletEvent,
  WalletEventType,
  WalletMonitorChain,
} from './types.js';

/** Options of {@link createWalletMonitorClient}. */
export interface WalletMonitorClientOptions {
  baseUrl: string;
  /** The bearer token, or a function returning it (e.g. `() => auth.token()?.access_token`). */
  token: string | (() => string | undefined | Promise<string | undefined>);
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** Wallet-monitor client: see {@link createWalletMonitorClient}. */
export interface WalletMonitorClient {
  /** `POST /v1/wallet-monitor`. Throws {@link GatewayError} (400 invalid body or webhook URL, 401 no/expired token). */
  subscribe(req: SubscribeRequest): Promise<SubscriptionCreated>;
  /** `GET /v1/wallet-monitor/{id}`. Throws {@link GatewayError} (403 not yours, 404 unknown). */
  get(subscriptionId: string): Promise<Subscription>;
  /** `POST /v1/wallet-monitor/{id}/cancel` → `{subscription_id, status: "cancelled", cancelled_at}` (idempotent). */
  cancel(subscriptionId: string): Promise<{ subscription_id: string; status: 'cancelled'; cancelled_at: number }>;
  /** `GET /v1/wallet-monitor/{id}/dead-letters`, oldest first. */
  deadLetters(subscriptionId: string, opts?: { limit?: number }): Promise<DeadLetter[]>;
  /** `POST /v1/wallet-monitor/{id}/dead-letters/replay`: all dead letters, or those named. Returns the webhook ids queued again. */
  replay(subscriptionId: string, webhookIds?: string[]): Promise<string[]>;
  /** `GET /v1/wallet-monitor/{id}/deliveries`: the most recent attempts, newest first, each with outcome, status and error. */
  deliveries(subscriptionId: string, opts?: { limit?: number }): Promise<DeliveryAttempt[]>;
  /** `POST /v1/wallet-monitor/{id}/test-event`: queues a test event (`test: true`), billed 0.001 USDC when delivered. Throws {@link GatewayError} 409 when not active. */
  sendTestEvent(subscriptionId: string): Promise<TestEventQueued>;
}

/**
 * The wallet monitor (docs/spec-notes.md 4, docs/decisions.md "Wallet monitor") with a bearer token from
 * `createAuthClient(...).signIn(account)`:
 *
 * ```ts
 * const wm = createWalletMonitorClient({ baseUrl, token: () => auth.token()?.access_token });
 * const { subscription_id, secret } = await wm.subscribe({ addresses: [me], chains: ['base'], events: ['transfer_in'], webhook_url });
 * ```
 * Each delivered event costs 0.001 USDC from the metered account (`POST /v1/account/deposit`).
 */
export function createWalletMonitorClient(options: WalletMonitorClientOptions): WalletMonitorClient {
  const ctx = createGatewayContext({ baseUrl: options.baseUrl, fetch: options.fetch, headers: options.headers }, 'createWalletMonitorClient');
  const token = async () => (typeof options.token === 'function' ? await options.token() : options.token);
  return {
    subscribe: async (req) => subscribe(ctx, { ...req, accessToken: await token() }),
    get: async (subscriptionId) => getSubscription(ctx, { accessToken: await token(), subscriptionId }),
    cancel: async (subscriptionId) => cancelSubscription(ctx, { accessToken: await token(), subscriptionId }),
    deadLetters: async (subscriptionId, opts = {}) => getDeadLetters(ctx, { accessToken: await token(), subscriptionId, limit: opts.limit }),
    replay: async (subscriptionId, webhookIds) => replayDeadLetters(ctx, { accessToken: await token(), subscriptionId, webhookIds }),
    deliveries: async (subscriptionId, opts = {}) => getDeliveries(ctx, { accessToken: await token(), subscriptionId, limit: opts.limit }),
    sendTestEvent: async (subscriptionId) => sendTestEvent(ctx, { accessToken: await token(), subscriptionId }),
  };
}
