import type { ClientChannelStorage } from '@x402/evm/batch-settlement/client';
import type { LocalAccount } from 'viem';
import { DEFAULT_SCHEMES, PAYMENT_SCHEMES, type PaymentScheme } from './chooseRequirement.js';
import { ChannelBook } from './channelBook.js';
import { PAYMENT_NETWORK } from './protocol.js';
import { RegistryCache } from './registryCache.js';
import { SpendLedger, type SpendLimits } from './spend.js';
import type { BearerToken } from './types.js';

/**
 * USDC contracts the SDK pays with by default, by CAIP-2 network: Base (`eip155:8453`, also the
 * dev chain's address) and Base Sepolia (`eip155:84532`). A 402 requirement for any other asset
 * is refused before signing unless `assets` names it.
 */
export const KNOWN_USDC: Readonly<Record<string, readonly `0x${string}`[]>> = {
  'eip155:8453': ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
  'eip155:84532': ['0x036CbD53842c5426634e7929541eC2318f3dCF7e'],
};

/** Options of {@link createGatewayContext} (the transport settings every action shares). */
export interface GatewayContextOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080` (a trailing `/` is ignored). */
  baseUrl: string;
  /** viem local account that signs x402 payments (EIP-3009, EIP-712); it needs USDC, no ETH. */
  account?: LocalAccount;
  /** Spend limits in USDC (decimal), checked before anything is signed. Ignored when `ledger` is given. */
  spendLimits?: SpendLimits;
  /** A ledger to share with another client (its limits and `spent()` totals). */
  ledger?: SpendLedger;
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** CAIP-2 network payments must be made on (default `eip155:8453`, Base, docs/spec-notes.md 2.9). */
  network?: string;
  /** Token contracts payments may use on `network` (default: {@link KNOWN_USDC} of that network). */
  assets?: readonly string[];
  /** Re-sends of a paid request with the SAME payment (network error, 409/503 with Retry-After); default 2. */
  maxRetries?: number;
  /** Send a random `Idempotency-Key` with each paid POST unless the call passes one (default true). */
  idempotency?: boolean;
  /** How long the `/registry` document is reused, milliseconds (default 60 000, as the gateway caches it). */
  registryTtlMs?: number;
  /**
   * x402 schemes to pay with, most preferred first (README "Schemes"): any of `exact`, `upto`,
   * `batch-settlement`. Default `['exact']`. E.g. `['batch-settlement', 'upto', 'exact']` pays over a
   * channel when the 402 offers one, else with an `upto` ceiling, else `exact`.
   */
  schemes?: readonly PaymentScheme[];
  /**
   * Where batch-settlement channel state (the cumulative charged amount and the balance the client
   * knows of, by channel id) is kept: a directory (the official `@x402/evm` `FileClientChannelStorage`,
   * files `<dir>/client/<channelId>.json`, Node only), or your own `ClientChannelStorage`
   * (`get`/`set`/`delete` of `@x402/evm/batch-settlement/client`). Default: in memory, lost with the client.
   * Keep it across restarts to go on with the same channel and cumulative vouchers.
   */
  channelStorage?: string | ClientChannelStorage;
  /**
   * Size of a channel deposit (opening and each automatic top-up), decimal USDC, at least what the
   * next voucher needs. Default: the 402's `extra.minDeposit`, else 5x the price (the official client's).
   * A deposit counts towards `totalUsdc` when it is made, and is made smaller to fit it when it can.
   */
  channelDepositUsdc?: string | number;
  /**
   * JSON-RPC URL of the payment chain, optional: lets the official clients read the chain (a
   * channel's on-chain balance when no local state exists, the Permit2 allowance behind EIP-2612
   * gas sponsoring of `upto`). Nothing is ever sent to it.
   */
  rpcUrl?: string;
}

/**
 * What every action needs to reach one gateway: base URL, fetch, headers, the paying account and
 * the one {@link SpendLedger} that applies the spend limits and counts `spent()`. Build it with
 * {@link createGatewayContext}; `createGatewayClient` builds one and binds the actions to it.
 */
export interface GatewayContext {
  readonly baseUrl: string;
  readonly fetch: typeof globalThis.fetch;
  readonly headers: Readonly<Record<string, string>>;
  readonly account: LocalAccount | undefined;
  readonly ledger: SpendLedger;
  /** CAIP-2 payment network. */
  readonly network: string;
  /** Known token contracts on `network`, lowercase. */
  readonly assets: readonly string[];
  readonly maxRetries: number;
  readonly idempotency: boolean;
  /** The cached `/registry` document (terms of paid capabilities are checked against it). */
  readonly registry: RegistryCache;
  /** The bearer session a paid answer announced after x402 sign-in-with-x (`Authentication-Info`), if any (signInWithX.ts). */
  readonly session: { token?: BearerToken };
  /** Schemes paid with, most preferred first. */
  readonly schemes: readonly PaymentScheme[];
  /** Batch-settlement channels of this client: storage, deposit sizing, one payment at a time per context. */
  readonly channels: ChannelBook;
  /** Payment chain JSON-RPC URL, when given (reads only). */
  readonly rpcUrl: string | undefined;
}

/**
 * Builds a {@link GatewayContext}. Throws TypeError for a missing or non-http(s) `baseUrl` or no
 * fetch implementation, {@link InvalidAmountError} for a malformed spend limit.
 *
 * @example
 * const ctx = createGatewayContext({ baseUrl: 'http://127.0.0.1:8080', account, spendLimits: { perCallUsdc: '0.05' } })
 * const { opportunities } = await searchLiquidations(ctx, { min_profit_usd: 100 })
 */
export function createGatewayContext(options: GatewayContextOptions, caller = 'createGatewayContext'): GatewayContext {
  if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError(`${caller}: baseUrl must be an http(s) URL, e.g. "http://127.0.0.1:8080"`);
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  if (typeof doFetch !== 'function') throw new TypeError(`${caller}: no fetch implementation; pass options.fetch`);
  const network = options.network ?? PAYMENT_NETWORK;
  const schemes = options.schemes ?? DEFAULT_SCHEMES;
  const unknown = schemes.filter((s) => !PAYMENT_SCHEMES.includes(s));
  if (schemes.length === 0 || unknown.length > 0) {
    throw new TypeError(`${caller}: schemes must list one or more of ${PAYMENT_SCHEMES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
  }
  const ctx: Omit<GatewayContext, 'registry'> & { registry?: RegistryCache } = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: doFetch,
    headers: options.headers ?? {},
    account: options.account,
    ledger: options.ledger ?? new SpendLedger(options.spendLimits),
    network,
    assets: (options.assets ?? KNOWN_USDC[network] ?? []).map((a) => a.toLowerCase()),
    maxRetries: Math.max(0, options.maxRetries ?? 2),
    idempotency: options.idempotency ?? true,
    session: {},
    schemes,
    channels: new ChannelBook({ storage: options.channelStorage, depositUsdc: options.channelDepositUsdc }),
    rpcUrl: options.rpcUrl,
  };
  ctx.registry = new RegistryCache(ctx as GatewayContext, options.registryTtlMs);
  return ctx as GatewayContext;
}
