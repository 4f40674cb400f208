import { STATUS_CODES } from 'node:http';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { Capability, PaymentRequired, PaymentRequirements, Registry } from '../src/index.js';

export const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as const;
export const TREASURY = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;
export const BASE = 'http://gateway.test';

/** A /registry entry shaped like the gateway's `intelligence.wallet_balances` (price 0.001 USDC). */
export function walletBalancesEntry(over: Partial<Capability> = {}): Capability {
  return {
    id: 'intelligence.wallet_balances',
    product: 'intelligence',
    name: 'Wallet balances',
    status: 'LIVE',
    surface: 'REST',
    endpoint: `${BASE}/api/v1/execute`,
    method: 'POST',
    auth: 'x402',
    provider: 'test',
    evidence: { source: 'prober' },
    price: '0.001',
    price_base_units: '1000',
    price_unit: 'call',
    currency: 'USDC',
    latency_ms_p50: null,
    latency_ms_p99: null,
    authentication: 'x402',
    x402: {
      x402Version: 2,
      scheme: 'exact',
      network: 'eip155:8453',
      asset: USDC,
      payTo: TREASURY,
      resource: `${BASE}/api/v1/execute`,
      maxAmountRequired: '1000',
    },
    input_schema: null,
    output_schema: null,
    availability: 'up',
    example_request: null,
    example_response: null,
    ...over,
  };
}

export function registryDoc(capabilities: Capability[] = [walletBalancesEntry()]): Registry {
  return {
    registry_version: '1.0.0',
    generated_at: '2026-01-01T00:00:00.000Z',
    network: {
      organization: 'test',
      domains: { discover: BASE, execute: BASE, intelligence: BASE },
      operational_status: 'ok',
      operational_status_source: 'test',
    },
    capabilities,
  };
}

export function requirement(over: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: USDC,
    amount: '1000',
    payTo: TREASURY,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
    ...over,
  };
}

export function paymentRequired(accepts: PaymentRequirements[] = [requirement()], error?: string): PaymentRequired {
  return {
    x402Version: 2,
    ...(error ? { error } : {}),
    resource: { url: `${BASE}/api/v1/execute`, description: 'Execute intelligence.wallet_balances', mimeType: 'application/json' },
    accepts,
  };
}

/** A 402 answer as the gateway sends it: PAYMENT-REQUIRED header + docs/spec-notes.md 2.9 body. */
export function challengeResponse(pr: PaymentRequired = paymentRequired(), extra: Record<string, unknown> = {}): Response {
  const a = pr.accepts[0]!;
  const body = { ...pr, scheme: a.scheme, network: a.network, payTo: a.payTo, maxAmountRequired: a.amount, asset: a.asset, ...extra };
  return new Response(JSON.stringify(body), {
    status: 402,
    headers: { 'content-type': 'application/json', 'PAYMENT-REQUIRED': encodePaymentRequiredHeader(pr) },
  });
}

/**
 * An RFC 9457 problem body as the gateway writes one (docs/decisions.md "Errors"): `type` "about:blank",
 * `title` the HTTP reason phrase of `status` ("Not Found" for 404), `detail`, then any `extra` members
 * (`errors`, `execution_id`, `refund`, `reason`, …).
 */
export function problem<E extends Record<string, unknown>>(status: number, detail: string, extra = {} as E) {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? `HTTP ${status}`, status, detail, ...extra };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers },
  });
}

/** What `p` rejects with, for assertions on a typed error's fields; throws if `p` resolves. */
export async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
