import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import type { LocalAccount } from 'viem';
import { AcgError, GatewayError, GatewayRequestError, PaymentRequiredError } from './errors.js';
import { parseJson, parseProblem, readPaymentRequired } from './protocol.js';
import type { SpendLedger } from './spend.js';
import type { PaymentRequirements } from './types.js';

/** Lending protocols searched. */
export type LendingProtocol = 'aave_v3' | 'spark' | 'compound_v3' | 'morpho_blue';

/** Query of {@link LiquidationsClient.search} (GET /v1/liquidation-search; every field optional). */
export interface LiquidationSearchParams {
  /** Minimum estimated profit net of gas, USD (default 0). */
  min_profit_usd?: number;
  /** `ethereum` (default), `base` or `arbitrum`. */
  chain?: 'ethereum' | 'base' | 'arbitrum';
  /** One protocol or several (default: all four). */
  protocol?: LendingProtocol | LendingProtocol[];
  /** Unitless, (0, 1.1]; default 1.0 = liquidatable now. */
  max_health_factor?: number;
  /** 1..500, default 50. */
  limit?: number;
}

/** One opportunity (SPEC 2.5 with DESIGN's types). USD amounts are numbers; base units are strings. */
export interface LiquidationOpportunity {
  protocol: LendingProtocol;
  borrower: `0x${string}`;
  collateral_token: `0x${string}`;
  collateral_symbol: string;
  debt_token: `0x${string}`;
  debt_symbol: string;
  collateral_usd: number;
  debt_usd: number;
  /** Unitless; < 1 means liquidatable now. */
  health_factor: number;
  /** USD, net of gas at the block's base fee. */
  estimated_profit_usd: number;
  /** Block by which the liquidation must land to be valid on the state read. */
  deadline_block: number;
  /** Contract to call (Aave/Spark Pool, Comet, Morpho Blue). */
  market?: `0x${string}`;
  /** Morpho Blue market id. */
  market_id?: `0x${string}`;
  /** Debt one liquidation may repay, integer string in debt-token base units. */
  max_repay_amount?: string;
  max_repay_usd?: number;
  gas_cost_usd?: number;
}

/** Answer of {@link LiquidationsClient.search}. */
export interface LiquidationSearchResult {
  chain: string;
  block_number: number;
  opportunities: LiquidationOpportunity[];
}

/** Options of {@link createLiquidationsClient}. */
export interface LiquidationsClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Bearer access token (SIWE sign-in): queries are debited from the metered account. */
  accessToken?: string;
  /** Or an account that pays each query with x402 (0.02 USDC, EIP-3009 on Base). */
  account?: LocalAccount;
  /** Spend limits shared with the main client (its `SpendLedger`); checked before signing. */
  ledger?: SpendLedger;
  /** Most a single query may cost, USDC base units (default 20000 = 0.02 USDC). */
  maxPriceBaseUnits?: bigint;
  fetch?: typeof globalThis.fetch;
  headers?: Record<string, string>;
}

/** `client.liquidations`: the liquidation search. */
export interface LiquidationsClient {
  /**
   * `GET /v1/liquidation-search`: opportunities sorted by `estimated_profit_usd` descending.
   * With `accessToken` the price (0.02 USD) is debited from the metered account; otherwise, with
   * an `account`, the 402 challenge is paid with x402 (at most `maxPriceBaseUnits`).
   *
   * Throws {@link GatewayError} (400 bad parameters with `errors`, 401 bad token, 402 account
   * below the price, 503 index not ready), {@link PaymentRequiredError} (402 and no way to pay,
   * or the price is above `maxPriceBaseUnits`), {@link GatewayRequestError} (unreachable).
   *
   * @example
   * const liq = createLiquidationsClient({ baseUrl, accessToken });
   * const { block_number, opportunities } = await liq.search({ min_profit_usd: 100, protocol: ['aave_v3', 'spark'] });
   */
  search(params?: LiquidationSearchParams, opts?: { signal?: AbortSignal }): Promise<LiquidationSearchResult>;
}

const CAPABILITY_ID = 'mev.liquidation_search';

/** Builds the query string (protocol repeated). */
export function liquidationSearchQuery(params: LiquidationSearchParams = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * A standalone liquidation-search client (the main client exposes it as `client.liquidations`).
 * Throws TypeError for a missing `baseUrl`.
 */
export function createLiquidationsClient(options: LiquidationsClientOptions): LiquidationsClient {
  if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError('createLiquidationsClient: baseUrl must be an http(s) URL');
  }
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const maxPrice = options.maxPriceBaseUnits ?? 20_000n;

  async function send(path: string, headers: Record<string, string>, signal?: AbortSignal) {
    const url = `${baseUrl}${path}`;
    let response: Response;
    try {
      response = await doFetch(url, { method: 'GET', headers: { accept: 'application/json', ...options.headers, ...headers }, signal });
    } catch (cause) {
      throw new GatewayRequestError(url, `Could not reach the gateway at ${baseUrl}.`, { cause });
    }
    return { response, text: await response.text() };
  }

  function result(path: string, r: { response: Response; text: string }): LiquidationSearchResult {
    const body = parseJson(r.text) as LiquidationSearchResult | undefined;
    if (!body || !Array.isArray(body.opportunities)) {
      throw new GatewayRequestError(`${baseUrl}${path}`, 'The gateway answered the liquidation search with an unexpected body.', { status: r.response.status });
    }
    return body;
  }

  return {
    async search(params = {}, opts = {}) {
      const path = `/v1/liquidation-search${liquidationSearchQuery(params)}`;
      const auth: Record<string, string> = options.accessToken ? { authorization: `Bearer ${options.accessToken}` } : {};
      const first = await send(path, auth, opts.signal);
      if (first.response.ok) return result(path, first);
      if (first.response.status !== 402 || options.accessToken) throw new GatewayError(parseProblem(first.response.status, first.text));

      const challenge = parseJson(first.text) as Record<string, unknown> | undefined;
      const pr = readPaymentRequired(first.response.headers.get('payment-required'), challenge);
      if (!pr) throw new GatewayRequestError(`${baseUrl}${path}`, 'The gateway answered 402 without a readable x402 PaymentRequired.', { status: 402 });
      const requirement = pr.accepts[0] as PaymentRequirements | undefined;
      const amount = BigInt(String((requirement as { amount?: string } | undefined)?.amount ?? '0'));
      if (!options.account || !requirement || amount > maxPrice) throw new PaymentRequiredError(CAPABILITY_ID, pr, { challenge });
      const reservation = options.ledger?.reserve(amount, CAPABILITY_ID);
      let paymentHeaders: Record<string, string>;
      try {
        const client = new x402Client();
        registerExactEvmScheme(client, { signer: options.account, networks: [requirement.network] });
        client.setSpendControls({ maxAmountPerPayment: false, allowedAssets: [{ network: requirement.network, asset: requirement.asset, maxAmountPerPayment: amount.toString() }] });
        const payload = await client.createPaymentPayload({ ...pr, accepts: [requirement] });
        paymentHeaders = new x402HTTPClient(client).encodePaymentSignatureHeader(payload);
      } catch (cause) {
        reservation?.release();
        throw new AcgError('Could not sign the x402 payment with the given account; nothing was paid.', { cause, details: (cause as Error)?.message });
      }
      const paid = await send(path, paymentHeaders, opts.signal);
      if (paid.response.ok) {
        reservation?.commit();
        return result(path, paid);
      }
      if (paid.response.status === 402) reservation?.release();
      else reservation?.commit();
      throw new GatewayError(parseProblem(paid.response.status, paid.text));
    },
  };
}
