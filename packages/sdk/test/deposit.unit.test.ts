import { decodePaymentSignatureHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { InvalidAmountError, PaymentTermsMismatchError, SpendLimitExceededError, createGatewayClient, type PaymentRequired } from '../src/index.js';
import { BASE, TREASURY, challengeResponse, json, paymentRequired, problem, registryDoc, requirement } from './fixtures.js';

/** client.deposit against a scripted gateway: x402-paid POST /v1/account/deposit (signing is real). */
const account = privateKeyToAccount(generatePrivateKey());
const view = (amount: string) => ({
  address: account.address,
  balance: amount,
  spent: '0',
  deposited: amount,
  usage: [{ kind: 'credit', amount, item: 'deposit', ref: 'dep_1', at: '2026-01-01T00:00:00.000Z' }],
  deposit: { amount, tx_hash: `0x${'cd'.repeat(32)}` },
});

function depositGateway(challenge: (amount: bigint) => PaymentRequired) {
  const deposits: { body: unknown; headers: Headers }[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    if (path === '/registry') return json(200, registryDoc());
    if (path !== '/v1/account/deposit') return json(404, problem(404, 'no route'));
    const body = (await req.json()) as { amount_usdc: string };
    deposits.push({ body, headers: req.headers });
    const units = BigInt(Math.round(Number(body.amount_usdc) * 1e6));
    if (!req.headers.get('payment-signature')) return challengeResponse(challenge(units));
    return json(200, view(units.toString()));
  }) as typeof globalThis.fetch;
  return { fetch, deposits };
}

const honest = (units: bigint) => paymentRequired([requirement({ amount: units.toString() })]);

describe('client.deposit', () => {
  it('pays exactly amount_usdc to the treasury and returns the credited account', async () => {
    const gw = depositGateway(honest);
    const c = createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch, spendLimits: { totalUsdc: '1' } });
    const r = await c.deposit({ amount_usdc: '0.25' });
    expect(r.deposit.amount).toBe('250000');
    expect(r.balance).toBe('250000');
    expect(gw.deposits).toHaveLength(2);
    expect(gw.deposits[0]!.body).toEqual({ amount_usdc: '0.25' });
    const key = gw.deposits[0]!.headers.get('idempotency-key');
    expect(key).toBeTruthy();
    expect(gw.deposits[1]!.headers.get('idempotency-key')).toBe(key);
    const auth = (decodePaymentSignatureHeader(gw.deposits[1]!.headers.get('payment-signature')!).payload as { authorization: Record<string, string> })
      .authorization;
    expect(auth.value).toBe('250000');
    expect(auth.to).toBe(TREASURY);
    expect(c.spent().usdc).toBe('0.25');
  });

  it('refuses a challenge that asks more than the deposit, nothing signed', async () => {
    const gw = depositGateway((units) => honest(units + 1n));
    const c = createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch });
    const err = await c.deposit({ amount_usdc: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(gw.deposits).toHaveLength(1);
    expect(c.spent().baseUnits).toBe(0n);
  });

  it('refuses a challenge paying another address than the registry treasury', async () => {
    const gw = depositGateway((units) => paymentRequired([requirement({ amount: units.toString(), payTo: '0x000000000000000000000000000000000000dEaD' })]));
    const err = await createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch })
      .deposit({ amount_usdc: '1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(gw.deposits).toHaveLength(1);
  });

  it('applies the spend limits', async () => {
    const gw = depositGateway(honest);
    const c = createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch, spendLimits: { perCallUsdc: '0.5' } });
    expect(await c.deposit({ amount_usdc: '0.75' }).catch((e: unknown) => e)).toBeInstanceOf(SpendLimitExceededError);
    expect(gw.deposits).toHaveLength(1);
  });

  it('a malformed amount throws InvalidAmountError before any request', async () => {
    const gw = depositGateway(honest);
    const c = createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch });
    expect(await c.deposit({ amount_usdc: '1e-3' }).catch((e: unknown) => e)).toBeInstanceOf(InvalidAmountError);
    expect(gw.deposits).toHaveLength(0);
  });
});
