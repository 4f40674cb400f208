import { AcgError, GatewayError, GatewayRequestError } from './errors.js';
import { parseJson, parseProblem } from './protocol.js';

/** Chains the wallet monitor watches. */
export type WalletMonitorChain = 'ethereum' | 'base' | 'arbitrum';
/** Subscribable events. */
export type WalletEventType = 'transfer_in' | 'transfer_out';

/** Body of `POST /v1/wallet-monitor` (SPEC 2.6). */
export interface SubscribeRequest {
  /** 1 to 1,000 addresses, EIP-55 checksummed or all lowercase */
  addresses: string[];
  chains: WalletMonitorChain[];
  events: WalletEventType[];
  /** https URL (http only to a loopback host on a development gateway) */
  webhook_url: string;
}

/** A created subscription. Keep `secret`: it is shown only once and verifies every webhook ({@link verifyWebhook}). */
export interface SubscriptionCreated {
  /** `sub_` + ULID */
  subscription_id: string;
  /** UNIX seconds; renewed by 30 days while the metered account holds at least 0.001 USDC */
  expires_at: number;
  /** `whsec_...` Standard Webhooks signing secret */
  secret: string;
}

/** `GET /v1/wallet-monitor/{id}`: status, expiry (UNIX seconds) and delivery stats (`billed` in integer USDC base units). */
export interface Subscription {
  subscription_id: string;
  status: 'active' | 'expired' | 'cancelled';
  addresses: `0x${string}`[];
  chains: WalletMonitorChain[];
  events: WalletEventType[];
  webhook_url: string;
  created_at: number;
  expires_at: number;
  cancelled_at: number | null;
  renewals: number;
  delivery: {
    events: number;
    delivered: number;
    pending: number;
    failed_attempts: number;
    dead_lettered: number;
    dropped: number;
    billed: string;
    last_delivery_at: string | null;
    last_status: number | null;
  };
}

/** Webhook payload of one wallet event (`amount` and `block_number` are integer strings). */
export interface WalletEvent {
  type: WalletEventType;
  subscription_id: string;
  chain: WalletMonitorChain;
  block_number: string;
  block_hash: `0x${string}`;
  tx_hash: `0x${string}`;
  /** null for native ETH transfers */
  log_index: number | null;
  from: `0x${string}`;
  to: `0x${string}`;
  /** `address` null for native ETH */
  asset: { address: `0x${string}` | null; symbol: string; decimals: number };
  amount: string;
  observed_at: string;
}

/** An event that exhausted its retries. */
export interface DeadLetter {
  webhook_id: string;
  event: WalletEvent;
  attempts: number;
  /** HTTP status of the last attempt, 0 for a network error, null if nothing was sent (e.g. no balance) */
  last_status: number | null;
  last_error: string;
  dead_lettered_at: number;
}

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
}

/**
 * The wallet monitor (SPEC 4, DESIGN "Wallet monitor") with a bearer token from
 * `createAuthClient(...).signIn(account)`:
 *
 * ```ts
 * const wm = createWalletMonitorClient({ baseUrl, token: () => auth.token()?.access_token });
 * const { subscription_id, secret } = await wm.subscribe({ addresses: [me], chains: ['base'], events: ['transfer_in'], webhook_url });
 * ```
 * Each delivered event costs 0.001 USDC from the metered account (`POST /v1/account/deposit`).
 */
export function createWalletMonitorClient(options: WalletMonitorClientOptions): WalletMonitorClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;

  async function send<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    if (!token) throw new AcgError('The wallet monitor needs a bearer token: sign in first (createAuthClient(...).signIn(account)).');
    const url = `${baseUrl}${path}`;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, {
        method,
        headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      text = await res.text();
    } catch (cause) {
      throw new GatewayRequestError(url, `Could not reach the gateway at ${baseUrl}.`, { cause });
    }
    if (!res.ok) throw new GatewayError(parseProblem(res.status, text));
    const parsed = parseJson(text);
    if (parsed === undefined) throw new GatewayRequestError(url, `The gateway answered ${path} without a JSON body.`, { status: res.status });
    return parsed as T;
  }
  const id = (s: string) => encodeURIComponent(s);

  return {
    subscribe: (req) => send('POST', '/v1/wallet-monitor', req),
    get: (s) => send('GET', `/v1/wallet-monitor/${id(s)}`),
    cancel: (s) => send('POST', `/v1/wallet-monitor/${id(s)}/cancel`, {}),
    deadLetters: async (s, opts = {}) =>
      (await send<{ dead_letters: DeadLetter[] }>('GET', `/v1/wallet-monitor/${id(s)}/dead-letters${opts.limit ? `?limit=${opts.limit}` : ''}`)).dead_letters,
    replay: async (s, webhookIds) =>
      (await send<{ replayed: string[] }>('POST', `/v1/wallet-monitor/${id(s)}/dead-letters/replay`, webhookIds ? { webhook_ids: webhookIds } : {})).replayed,
  };
}
