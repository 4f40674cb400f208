import { decodePaymentSignatureHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  GatewayError,
  GatewayRequestError,
  PaymentRequiredError,
  PaymentTermsMismatchError,
  SpendLimitExceededError,
  UnknownCapabilityError,
  createGatewayClient,
  type GatewayClientOptions,
} from '../src/index.js';
import { BASE, TREASURY, USDC, caught, challengeResponse, json, paymentRequired, problem, registryDoc, requirement, walletBalancesEntry } from './fixtures.js';

/**
 * Unit tests of the client's payment flow against a scripted fake gateway (no network, no chain):
 * signing is real (viem local account, EIP-712), answers are scripted per request.
 */

const account = privateKeyToAccount(generatePrivateKey());
const EXECUTION = {
  execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
  status: 'SUCCEEDED',
  result: { ok: true },
  payment: { tx_hash: `0x${'ab'.repeat(32)}`, amount: '1000' },
};
const INPUT = { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' };

interface Seen {
  method: string;
  path: string;
  headers: Headers;
  body: string;
}

type Handler = (req: Seen, n: number) => Response | Promise<Response>;

/**
 * A fake gateway: GET /registry answers `registry` (default: wallet_balances at 0.001 USDC);
 * the n-th POST /api/v1/execute (0-based) answers `execute(req, n)`.
 */
function fakeGateway(execute: Handler, registry: () => unknown = () => registryDoc()) {
  const seen: Seen[] = [];
  let executes = 0;
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    const s: Seen = { method: req.method, path, headers: req.headers, body: req.method === 'POST' ? await req.text() : '' };
    seen.push(s);
    if (path === '/registry') return json(200, registry());
    if (path === '/api/v1/execute') return execute(s, executes++);
    return json(404, problem(404, 'no route'));
  }) as typeof globalThis.fetch;
  return {
    fetch,
    seen,
    executes: () => seen.filter((s) => s.path === '/api/v1/execute'),
    registryReads: () => seen.filter((s) => s.path === '/registry').length,
  };
}

function client(gw: { fetch: typeof globalThis.fetch }, over: Partial<GatewayClientOptions> = {}) {
  return createGatewayClient({ baseUrl: `${BASE}/`, account, fetch: gw.fetch, ...over });
}

/** Pays on the second request; scripted answers after that. */
function payThen(...after: Handler[]): Handler {
  return (req, n) => {
    if (n === 0) {
      expect(req.headers.get('payment-signature')).toBeNull();
      return challengeResponse();
    }
    return after[Math.min(n - 1, after.length - 1)]!(req, n);
  };
}

describe('createGatewayClient: discovery', () => {
  it('caches /registry and refetches on refresh', async () => {
    const gw = fakeGateway(() => json(500, {}));
    const c = client(gw);
    expect((await c.capabilities()).map((x) => x.id)).toEqual(['intelligence.wallet_balances']);
    expect((await c.capability('intelligence.wallet_balances')).price).toBe('0.001');
    expect(gw.registryReads()).toBe(1);
    await c.capabilities({ refresh: true });
    expect(gw.registryReads()).toBe(2);
  });

  it('unknown id: refetches once, then UnknownCapabilityError without calling execute', async () => {
    const gw = fakeGateway(() => json(500, {}));
    const c = client(gw);
    await c.capabilities();
    const err = await caught(c.execute('nope.nope', {}));
    expect(err).toBeInstanceOf(UnknownCapabilityError);
    expect((err as UnknownCapabilityError).available).toEqual(['intelligence.wallet_balances']);
    expect(gw.registryReads()).toBe(2);
    expect(gw.executes()).toHaveLength(0);
  });

  it('an unreachable gateway is a GatewayRequestError naming the URL', async () => {
    const c = createGatewayClient({
      baseUrl: BASE,
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as never,
    });
    const err = await caught(c.capabilities());
    expect(err).toBeInstanceOf(GatewayRequestError);
    expect((err as GatewayRequestError).url).toBe(`${BASE}/registry`);
    expect((err as GatewayRequestError).paymentOutcome).toBe('none');
  });

  it('rejects a malformed baseUrl and spend limit at construction', () => {
    expect(() => createGatewayClient({ baseUrl: 'localhost:8080' })).toThrow(TypeError);
    expect(() => createGatewayClient({ baseUrl: BASE, spendLimits: { perCallUsdc: '1e-3' } })).toThrow(/perCallUsdc/);
  });
});

describe('createGatewayClient: execute and x402 payment', () => {
  it('pays the 402 challenge with an EIP-3009 authorization for exactly the asked amount', async () => {
    const gw = fakeGateway(payThen(() => json(200, EXECUTION, { 'PAYMENT-RESPONSE': 'x' })));
    const c = client(gw);
    const exe = await c.execute('intelligence.wallet_balances', INPUT);
    expect(exe).toEqual(EXECUTION);
    const [unpaid, paid] = gw.executes();
    expect(JSON.parse(unpaid!.body)).toEqual({ capability_id: 'intelligence.wallet_balances', input: INPUT });
    expect(paid!.body).toBe(unpaid!.body);
    const key = unpaid!.headers.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(paid!.headers.get('idempotency-key')).toBe(key);
    const payload = decodePaymentSignatureHeader(paid!.headers.get('payment-signature')!);
    expect(payload.x402Version).toBe(2);
    expect(payload.accepted).toEqual(requirement());
    const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
    expect(auth.from).toBe(account.address);
    expect(auth.to).toBe(TREASURY);
    expect(auth.value).toBe('1000');
    expect(c.spent()).toEqual({ baseUnits: 1000n, usdc: '0.001', pendingBaseUnits: 0n });
  });

  it('a network error on the paid request re-sends the SAME signed payment and key, and counts it once', async () => {
    let failed = false;
    const gw = fakeGateway(
      payThen(() => {
        if (!failed) {
          failed = true;
          throw new TypeError('socket hang up');
        }
        return json(200, EXECUTION);
      }),
    );
    const c = client(gw);
    await c.execute('intelligence.wallet_balances', INPUT);
    const [, first, retry] = gw.executes();
    expect(retry!.headers.get('payment-signature')).toBe(first!.headers.get('payment-signature'));
    expect(retry!.headers.get('idempotency-key')).toBe(first!.headers.get('idempotency-key'));
    expect(c.spent().baseUnits).toBe(1000n);
  });

  it('no answer after all retries: GatewayRequestError with outcome unknown, amount kept as spent', async () => {
    const gw = fakeGateway(
      payThen(() => {
        throw new TypeError('ECONNRESET');
      }),
    );
    const c = client(gw, { maxRetries: 1 });
    const err = await caught(c.execute('intelligence.wallet_balances', INPUT));
    expect(err).toBeInstanceOf(GatewayRequestError);
    expect((err as GatewayRequestError).paymentOutcome).toBe('unknown');
    expect(gw.executes()).toHaveLength(3); // unpaid + paid + 1 retry
    const sigs = new Set(
      gw
        .executes()
        .slice(1)
        .map((s) => s.headers.get('payment-signature')),
    );
    expect(sigs.size).toBe(1);
    expect(c.spent().baseUnits).toBe(1000n);
  });

  it('409 "in progress" with Retry-After: asks again with the same payment', async () => {
    const gw = fakeGateway(payThen((_r, n) => (n === 1 ? json(409, problem(409, 'in progress'), { 'Retry-After': '0' }) : json(200, EXECUTION))));
    const c = client(gw);
    expect((await c.execute('intelligence.wallet_balances', INPUT)).execution_id).toBe(EXECUTION.execution_id);
    const [, a, b] = gw.executes();
    expect(b!.headers.get('payment-signature')).toBe(a!.headers.get('payment-signature'));
    expect(c.spent().baseUnits).toBe(1000n);
  });

  it('without an account a 402 is a PaymentRequiredError carrying the decoded challenge', async () => {
    const gw = fakeGateway(() => challengeResponse());
    const c = client(gw, { account: undefined });
    const err = (await caught(c.execute('intelligence.wallet_balances', INPUT))) as PaymentRequiredError;
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect(err.paymentRequired).toEqual(paymentRequired());
    expect(err.amount).toBe(1000n);
    expect(err.challenge?.maxAmountRequired).toBe('1000');
    expect(err.challenge?.payTo).toBe(TREASURY);
    expect(err.reason).toBeUndefined();
    expect(gw.executes()).toHaveLength(1);
  });

  it('per-call limit below the price: SpendLimitExceededError before signing', async () => {
    const gw = fakeGateway(() => challengeResponse());
    const c = client(gw, { spendLimits: { perCallUsdc: '0.0009' } });
    const err = (await caught(c.execute('intelligence.wallet_balances', INPUT))) as SpendLimitExceededError;
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect(err.limit).toBe('perCall');
    expect(err.amount).toBe(1000n);
    expect(err.limitBaseUnits).toBe(900n);
    expect(gw.executes()).toHaveLength(1);
    expect(c.spent()).toEqual({ baseUnits: 0n, usdc: '0', pendingBaseUnits: 0n });
  });

  it('concurrent calls never pass the total limit together', async () => {
    const gw = fakeGateway((req) => (req.headers.get('payment-signature') ? json(200, EXECUTION) : challengeResponse()));
    const c = client(gw, { spendLimits: { totalUsdc: '0.0015' } });
    const results = await Promise.allSettled([c.execute('intelligence.wallet_balances', INPUT), c.execute('intelligence.wallet_balances', INPUT)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(SpendLimitExceededError);
    expect((rejected.reason as SpendLimitExceededError).limit).toBe('total');
    expect(gw.executes().filter((s) => s.headers.get('payment-signature'))).toHaveLength(1);
    expect(c.spent().usdc).toBe('0.001');
  });

  it('a challenge paying another address: PaymentTermsMismatchError after one registry refresh, nothing signed', async () => {
    const evil = paymentRequired([requirement({ payTo: '0x000000000000000000000000000000000000dEaD' })]);
    const gw = fakeGateway(() => challengeResponse(evil));
    const c = client(gw);
    const err = (await caught(c.execute('intelligence.wallet_balances', INPUT))) as PaymentTermsMismatchError;
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(err.problems.join()).toMatch(/payTo/);
    expect(gw.registryReads()).toBe(2);
    expect(gw.executes()).toHaveLength(1);
    expect(c.spent().baseUnits).toBe(0n);
  });

  it('a challenge above the advertised price is refused even within the limits', async () => {
    const gw = fakeGateway(() => challengeResponse(paymentRequired([requirement({ amount: '2000' })])));
    const c = client(gw, { spendLimits: { perCallUsdc: 1 } });
    expect(await caught(c.execute('intelligence.wallet_balances', INPUT))).toBeInstanceOf(PaymentTermsMismatchError);
    expect(gw.executes()).toHaveLength(1);
  });

  it('the registry changed terms: the refreshed registry is used', async () => {
    const NEW_PAY_TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as const;
    let reads = 0;
    const gw = fakeGateway(
      (req) => (req.headers.get('payment-signature') ? json(200, EXECUTION) : challengeResponse(paymentRequired([requirement({ payTo: NEW_PAY_TO })]))),
      () => {
        reads++;
        const base = walletBalancesEntry();
        return registryDoc([reads === 1 ? base : walletBalancesEntry({ x402: { ...base.x402!, payTo: NEW_PAY_TO } })]);
      },
    );
    const c = client(gw);
    await c.capabilities();
    expect((await c.execute('intelligence.wallet_balances', INPUT)).status).toBe('SUCCEEDED');
    expect(reads).toBe(2);
  });

  it('a refused payment (402 again) is a PaymentRequiredError with the reason and is not counted', async () => {
    const gw = fakeGateway(
      payThen(() => challengeResponse(paymentRequired([requirement()], 'The payer does not hold enough USDC.'), { reason: 'insufficient_funds' })),
    );
    const c = client(gw);
    const err = (await caught(c.execute('intelligence.wallet_balances', INPUT))) as PaymentRequiredError;
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect(err.reason).toBe('insufficient_funds');
    expect(err.shortMessage).toContain('refused');
    expect(c.spent()).toEqual({ baseUnits: 0n, usdc: '0', pendingBaseUnits: 0n });
  });

  it('failure after payment (503 with execution_id and refund): GatewayError, counted as spent', async () => {
    const failure = problem(503, "Could not read balances on base: the chain's RPC did not answer.", {
      execution_id: EXECUTION.execution_id,
      status_text: 'FAILED',
      refund: { status: 'pending', amount: '1000' },
    });
    const gw = fakeGateway(payThen(() => json(503, failure)));
    const c = client(gw);
    const err = (await caught(c.execute('intelligence.wallet_balances', INPUT))) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(503);
    expect(err.executionId).toBe(EXECUTION.execution_id);
    expect(err.refund).toEqual({ status: 'pending', amount: '1000' });
    expect(c.spent().baseUnits).toBe(1000n);
  });

  it('bad input: GatewayError 400 with the issues, nothing signed', async () => {
    const badInput = problem(400, 'The input does not match.', {
      errors: [{ path: ['input', 'address'], message: 'must be 0x followed by 40 hex characters' }],
    });
    const gw = fakeGateway(() => json(400, badInput));
    const c = client(gw);
    const err = (await caught(c.execute('intelligence.wallet_balances', { address: 'nope' }))) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).not.toBeInstanceOf(UnknownCapabilityError);
    expect(err.status).toBe(400);
    expect(err.errors?.[0]?.path).toEqual(['input', 'address']);
    expect(gw.executes()).toHaveLength(1);
    expect(c.spent().baseUnits).toBe(0n);
  });

  it('a 404 from execute for the capability is an UnknownCapabilityError', async () => {
    const gw = fakeGateway(() => json(404, problem(404, 'Unknown capability "intelligence.wallet_balances".')));
    expect(await caught(client(gw).execute('intelligence.wallet_balances', INPUT))).toBeInstanceOf(UnknownCapabilityError);
  });

  it('a 200 without payment (stored execution for the same Idempotency-Key) pays nothing', async () => {
    const gw = fakeGateway(() => json(200, EXECUTION));
    const c = client(gw);
    const exe = await c.execute('intelligence.wallet_balances', INPUT, { idempotencyKey: 'order-42' });
    expect(exe.execution_id).toBe(EXECUTION.execution_id);
    expect(gw.executes()[0]!.headers.get('idempotency-key')).toBe('order-42');
    expect(c.spent().baseUnits).toBe(0n);
  });

  it('idempotency: false sends no Idempotency-Key', async () => {
    const gw = fakeGateway(() => json(200, EXECUTION));
    await client(gw, { idempotency: false }).execute('intelligence.wallet_balances', INPUT);
    expect(gw.executes()[0]!.headers.has('idempotency-key')).toBe(false);
  });
});

describe('createGatewayClient: getExecution', () => {
  it('GETs /api/v1/executions/{id} with the bearer token of the payer and maps 404 to GatewayError', async () => {
    const record = { ...EXECUTION, capability_id: 'intelligence.wallet_balances', created_at: 'x', finished_at: 'y' };
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      const auth = new Headers(init?.headers).get('authorization');
      if (auth !== 'Bearer tok_payer') return json(401, problem(401, 'token'));
      if (url === `${BASE}/api/v1/executions/${EXECUTION.execution_id}`) return json(200, record);
      return json(404, problem(404, 'No execution.'));
    }) as typeof globalThis.fetch;
    const anonymous = createGatewayClient({ baseUrl: BASE, fetch });
    await expect(anonymous.getExecution(EXECUTION.execution_id)).rejects.toThrow(/bearer token/);
    const c = createGatewayClient({ baseUrl: BASE, fetch, accessToken: 'tok_payer' });
    expect(await c.getExecution(EXECUTION.execution_id)).toEqual(record);
    const err = (await caught(c.getExecution('exe_missing'))) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(404);
    expect(USDC).toBeTruthy();
  });
});
