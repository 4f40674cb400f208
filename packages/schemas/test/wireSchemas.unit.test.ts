import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as schemas from '../src/index.js';
import {
  ExecuteRequest,
  ExecutionResponse,
  HealthDocument,
  JobRequest,
  LiquidationSearchQuery,
  PaymentChallenge,
  ProblemDetails,
  SendBundleRequest,
  WalletMonitorSubscriptionRequest,
  toJsonSchema,
} from '../src/index.js';
import { strictAjv } from './ajv.js';

const ULID = '01JD5X0Q6Z8R3M2N4P5Q6R7S8T';
const TX = `0x${'ab'.repeat(32)}`;
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const zodExports = Object.entries(schemas).filter(([, value]) => value instanceof z.ZodType) as [string, z.ZodType][];

describe('every exported wire schema', () => {
  it('is found (sanity check of the export scan)', () => {
    expect(zodExports.length).toBeGreaterThan(40);
  });

  for (const [name, schema] of zodExports) {
    it(`${name}: JSON Schema 2020-12 (input and output) compiles under strict Ajv2020`, () => {
      const ajv = strictAjv();
      expect(() => ajv.compile(toJsonSchema(schema, { io: 'input' }))).not.toThrow();
      expect(() => ajv.compile(toJsonSchema(schema, { io: 'output' }))).not.toThrow();
    });
  }
});

describe('execution (docs/spec-notes.md 2.7, docs/decisions.md x402 payments)', () => {
  const succeeded = {
    execution_id: `exe_${ULID}`,
    status: 'SUCCEEDED',
    result: { ok: true },
    payment: { tx_hash: TX, amount: '1000' },
  };
  const failed = {
    execution_id: `exe_${ULID}`,
    status: 'FAILED',
    result: null,
    error: { code: 'upstream_unavailable', message: 'The chain RPC did not answer.' },
    payment: { tx_hash: TX, amount: '1000' },
    refund: { status: 'pending', amount: '1000' },
  };

  it('accepts SUCCEEDED and FAILED responses, in zod and in the generated JSON Schema', () => {
    const validate = strictAjv().compile(toJsonSchema(ExecutionResponse));
    for (const body of [succeeded, failed]) {
      expect(ExecutionResponse.safeParse(body).success).toBe(true);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('rejects a bad execution id, a decimal amount, and FAILED without refund', () => {
    expect(ExecutionResponse.safeParse({ ...succeeded, execution_id: 'exe_123' }).success).toBe(false);
    expect(ExecutionResponse.safeParse({ ...succeeded, execution_id: `job_${ULID}` }).success).toBe(false);
    expect(ExecutionResponse.safeParse({ ...succeeded, payment: { tx_hash: TX, amount: '0.001' } }).success).toBe(false);
    const { refund: _refund, ...noRefund } = failed;
    expect(ExecutionResponse.safeParse(noRefund).success).toBe(false);
  });

  it('execute request needs a well-formed capability id and an object input, nothing else', () => {
    expect(ExecuteRequest.safeParse({ capability_id: 'intelligence.wallet_balances', input: {} }).success).toBe(true);
    expect(ExecuteRequest.safeParse({ capability_id: 'wallet_balances', input: {} }).success).toBe(false);
    expect(ExecuteRequest.safeParse({ capability_id: 'intelligence.wallet_balances', input: [] }).success).toBe(false);
    expect(ExecuteRequest.safeParse({ capability_id: 'intelligence.wallet_balances', input: {}, x: 1 }).success).toBe(false);
  });
});

describe('payment challenge (docs/spec-notes.md 2.9 + x402 v2)', () => {
  const challenge = {
    x402Version: 2,
    scheme: 'exact',
    network: 'eip155:8453',
    payTo: PAY_TO,
    maxAmountRequired: '1000',
    asset: USDC,
    error: 'PAYMENT-SIGNATURE header is required',
    resource: { url: 'https://gw.example.com/api/v1/execute', description: 'intelligence.wallet_balances', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '1000',
        asset: USDC,
        payTo: PAY_TO,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
  };

  it('accepts the spec fields plus the v2 fields', () => {
    expect(PaymentChallenge.safeParse(challenge).success).toBe(true);
    const validate = strictAjv().compile(toJsonSchema(PaymentChallenge));
    expect(validate(challenge), JSON.stringify(validate.errors)).toBe(true);
  });

  it('rejects x402Version 1, a non-CAIP-2 network, a decimal amount and empty accepts', () => {
    expect(PaymentChallenge.safeParse({ ...challenge, x402Version: 1 }).success).toBe(false);
    expect(PaymentChallenge.safeParse({ ...challenge, network: 'base' }).success).toBe(false);
    expect(PaymentChallenge.safeParse({ ...challenge, maxAmountRequired: '0.001' }).success).toBe(false);
    expect(PaymentChallenge.safeParse({ ...challenge, accepts: [] }).success).toBe(false);
  });
});

describe('problem details (RFC 9457, docs/decisions.md "Errors")', () => {
  it('accepts the members of docs/decisions.md "Errors" with issues and extension members', () => {
    const problem = {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'input.address: must be 0x followed by 40 hex characters',
      instance: '/api/v1/execute',
      errors: [{ path: ['input', 'address'], message: 'must be 0x followed by 40 hex characters', code: 'invalid_format' }],
      trace_id: 'abc',
    };
    expect(ProblemDetails.safeParse(problem).success).toBe(true);
    expect(ProblemDetails.safeParse({ ...problem, status: 42 }).success).toBe(false);
    expect(ProblemDetails.safeParse({ title: 'x', status: 400, detail: 'y' }).success).toBe(false);
  });
});

describe('jobs (docs/spec-notes.md 2.8, docs/decisions.md Jobs)', () => {
  const job = { objective: 'check balances', budget_usdc: 0.5, capabilities: ['intelligence.wallet_balances'] };

  it('accepts a job with and without steps', () => {
    expect(JobRequest.safeParse(job).success).toBe(true);
    const steps = [{ capability_id: 'intelligence.wallet_balances', input: { address: PAY_TO } }];
    expect(JobRequest.safeParse({ ...job, steps }).success).toBe(true);
  });

  it('rejects a zero budget, more than 6 decimals, no capabilities, and a step outside capabilities', () => {
    expect(JobRequest.safeParse({ ...job, budget_usdc: 0 }).success).toBe(false);
    expect(JobRequest.safeParse({ ...job, budget_usdc: 0.0000001 }).success).toBe(false);
    expect(JobRequest.safeParse({ ...job, capabilities: [] }).success).toBe(false);
    const steps = [{ capability_id: 'mev.liquidation_search', input: {} }];
    expect(JobRequest.safeParse({ ...job, steps }).success).toBe(false);
  });
});

describe('wallet monitor (docs/spec-notes.md 2.6)', () => {
  const request = {
    addresses: [PAY_TO],
    chains: ['base', 'ethereum'],
    events: ['transfer_in'],
    webhook_url: 'https://hooks.example.com/in',
  };
  it('accepts a subscription and rejects unknown events, chains, schemes and empty lists', () => {
    expect(WalletMonitorSubscriptionRequest.safeParse(request).success).toBe(true);
    expect(WalletMonitorSubscriptionRequest.safeParse({ ...request, events: ['approval'] }).success).toBe(false);
    expect(WalletMonitorSubscriptionRequest.safeParse({ ...request, chains: ['solana'] }).success).toBe(false);
    expect(WalletMonitorSubscriptionRequest.safeParse({ ...request, webhook_url: 'ftp://x.example/a' }).success).toBe(false);
    expect(WalletMonitorSubscriptionRequest.safeParse({ ...request, addresses: [] }).success).toBe(false);
  });
});

describe('liquidation search query (docs/spec-notes.md 4, docs/decisions.md)', () => {
  it('coerces query strings and applies the defaults of docs/decisions.md "Liquidation search"', () => {
    expect(LiquidationSearchQuery.parse({ min_profit_usd: '25' })).toEqual({
      min_profit_usd: 25,
      chain: 'ethereum',
      max_health_factor: 1,
      limit: 50,
    });
    expect(LiquidationSearchQuery.safeParse({ limit: '501' }).success).toBe(false);
    expect(LiquidationSearchQuery.safeParse({ max_health_factor: '1.2' }).success).toBe(false);
  });
});

describe('bundle submit (docs/spec-notes.md 4)', () => {
  it('accepts the spec sample shape and rejects a decimal block number', () => {
    const body = { jsonrpc: '2.0', method: 'eth_sendBundle', params: [{ txs: ['0x02f8'], blockNumber: '0x10' }], id: 1 };
    expect(SendBundleRequest.safeParse(body).success).toBe(true);
    expect(SendBundleRequest.safeParse({ ...body, params: [{ txs: ['0x02f8'], blockNumber: '16' }] }).success).toBe(false);
  });
});

describe('health document (docs/spec-notes.md 2.4, docs/decisions.md)', () => {
  it('accepts null latencies before the first sample and a null builder', () => {
    const doc = {
      operational_status: 'degraded',
      generated_at: '2025-01-01T00:00:00Z',
      capabilities: [{ id: 'gateway.health', status: 'up', latency_ms: { p50: null, p99: null, samples: 0 }, checked_at: null }],
      builder: null,
    };
    expect(HealthDocument.safeParse(doc).success).toBe(true);
    const validate = strictAjv().compile(toJsonSchema(HealthDocument));
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(HealthDocument.safeParse({ ...doc, capabilities: [{ ...doc.capabilities[0], status: 'ok' }] }).success).toBe(false);
  });
});
