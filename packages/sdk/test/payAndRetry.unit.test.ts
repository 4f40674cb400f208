import { decodePaymentSignatureHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  GatewayError,
  PaymentTermsMismatchError,
  SpendLedger,
  SpendLimitExceededError,
  chooseRequirement,
  createGatewayClient,
  createLiquidationsClient,
  type PaymentRequired,
} from '../src/index.js';
import { BASE, USDC, caught, challengeResponse, json, paymentRequired, problem, requirement } from './fixtures.js';

/**
 * The one x402 transport (payAndRetry / chooseRequirement) through the liquidation search, whose
 * old copy paid `accepts[0]` unchecked, and through execute. Signing is real (viem, EIP-712).
 */
const account = privateKeyToAccount(generatePrivateKey());
const RESULT = { chain: 'ethereum', block_number: 1, opportunities: [] };
const OTHER_ASSET = '0x000000000000000000000000000000000000bEEF';
const PRICE = '20000';
const liqReq = (over: Parameters<typeof requirement>[0] = {}) => requirement({ amount: PRICE, ...over });

/** A liquidation-search endpoint: 402 with `pr` for unpaid requests, `paid(n)` for the n-th paid one. */
function liquidationGateway(pr: PaymentRequired, paid: (n: number) => Response = () => json(200, RESULT)) {
  const signatures: string[] = [];
  let requests = 0;
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    requests++;
    const sig = req.headers.get('payment-signature');
    if (!sig) return challengeResponse(pr);
    signatures.push(sig);
    return paid(signatures.length - 1);
  }) as typeof globalThis.fetch;
  return { fetch, signatures, requests: () => requests };
}

describe('payAndRetry: choice of requirement (liquidation search)', () => {
  it('refuses a requirement on an unknown network, nothing signed', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq({ network: 'eip155:1' })]));
    const err = (await caught(createLiquidationsClient({ baseUrl: BASE, account, fetch: gw.fetch }).search())) as PaymentTermsMismatchError;
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(err.problems.join()).toMatch(/network "eip155:1"/);
    expect(gw.signatures).toHaveLength(0);
  });

  it('refuses an unknown asset, nothing signed', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq({ asset: OTHER_ASSET })]));
    const err = (await caught(createLiquidationsClient({ baseUrl: BASE, account, fetch: gw.fetch }).search())) as PaymentTermsMismatchError;
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(err.problems.join()).toMatch(/not a known asset/);
    expect(gw.signatures).toHaveLength(0);
  });

  it('refuses a scheme other than exact with a typed error, nothing signed', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq({ scheme: 'upto' as 'exact' })]));
    const err = (await caught(createLiquidationsClient({ baseUrl: BASE, account, fetch: gw.fetch }).search())) as PaymentTermsMismatchError;
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(err.problems.join()).toMatch(/scheme "upto"/);
    expect(gw.signatures).toHaveLength(0);
  });

  it('an amount over the spend limit: refused alone, skipped for a payable one after it', async () => {
    const over = liqReq({ amount: '30000' });
    const alone = liquidationGateway(paymentRequired([over]));
    const ledger = new SpendLedger({ perCallUsdc: '0.02' });
    const err = (await caught(
      createLiquidationsClient({ baseUrl: BASE, account, ledger, maxPriceBaseUnits: 100_000n, fetch: alone.fetch }).search(),
    )) as SpendLimitExceededError;
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect(err.limit).toBe('perCall');
    expect(alone.signatures).toHaveLength(0);

    const both = liquidationGateway(paymentRequired([over, liqReq()]));
    await createLiquidationsClient({ baseUrl: BASE, account, ledger, maxPriceBaseUnits: 100_000n, fetch: both.fetch }).search();
    expect(both.signatures).toHaveLength(1);
    expect(decodePaymentSignatureHeader(both.signatures[0]!).accepted.amount).toBe(PRICE);
    expect(ledger.totals().baseUnits).toBe(20_000n);
  });

  it('several accepts: pays the first payable one, not accepts[0]', async () => {
    const gw = liquidationGateway(
      paymentRequired([liqReq({ network: 'eip155:1' }), liqReq({ asset: OTHER_ASSET }), liqReq({ scheme: 'upto' as 'exact' }), liqReq()]),
    );
    const r = await createLiquidationsClient({ baseUrl: BASE, account, fetch: gw.fetch }).search();
    expect(r).toEqual(RESULT);
    expect(gw.signatures).toHaveLength(1);
    const accepted = decodePaymentSignatureHeader(gw.signatures[0]!).accepted;
    expect(accepted).toEqual(liqReq());
  });

  it('an amount above maxPriceBaseUnits is refused before signing', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq({ amount: '20001' })]));
    const err = await caught(createLiquidationsClient({ baseUrl: BASE, account, fetch: gw.fetch }).search());
    expect(err).toBeInstanceOf(PaymentTermsMismatchError);
    expect(gw.signatures).toHaveLength(0);
  });
});

describe('payAndRetry: replays of one payment', () => {
  const unavailable = () => json(503, problem(503, 'verification unavailable; nothing was charged'), { 'Retry-After': '0' });

  it('503 with Retry-After after paying: re-sends the SAME payment and counts it once', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq()]), (n) => (n < 2 ? unavailable() : json(200, RESULT)));
    const ledger = new SpendLedger();
    expect(await createLiquidationsClient({ baseUrl: BASE, account, ledger, fetch: gw.fetch }).search()).toEqual(RESULT);
    expect(gw.signatures).toHaveLength(3);
    expect(new Set(gw.signatures).size).toBe(1);
    expect(ledger.totals().baseUnits).toBe(20_000n);
  });

  it('a 200 marked Idempotent-Replayed (an earlier payment answered): the fresh authorization is not counted', async () => {
    const replayed = liquidationGateway(paymentRequired([liqReq()]), () => json(200, RESULT, { 'Idempotent-Replayed': 'true' }));
    const ledger = new SpendLedger();
    expect(await createLiquidationsClient({ baseUrl: BASE, account, ledger, fetch: replayed.fetch }).search()).toEqual(RESULT);
    expect(replayed.signatures).toHaveLength(1);
    expect(ledger.totals()).toMatchObject({ baseUnits: 0n, pendingBaseUnits: 0n });
    // the same answer without the header is a charge of this payment
    const charged = liquidationGateway(paymentRequired([liqReq()]));
    await createLiquidationsClient({ baseUrl: BASE, account, ledger, fetch: charged.fetch }).search();
    expect(ledger.totals().baseUnits).toBe(20_000n);
  });

  it('503 with Retry-After every time: gives up after maxRetries without signing again; counted (outcome unclear)', async () => {
    const gw = liquidationGateway(paymentRequired([liqReq()]), unavailable);
    const ledger = new SpendLedger();
    const err = (await caught(createLiquidationsClient({ baseUrl: BASE, account, ledger, fetch: gw.fetch }).search())) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(503);
    expect(gw.signatures).toHaveLength(3); // the paid request + 2 replays (default maxRetries)
    expect(new Set(gw.signatures).size).toBe(1);
    expect(ledger.totals()).toMatchObject({ baseUnits: 20_000n, pendingBaseUnits: 0n });
  });

  it('execute: a 503 with Retry-After is replayed with the same payment and Idempotency-Key', async () => {
    const { registryDoc } = await import('./fixtures.js');
    const EXECUTION = {
      execution_id: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
      status: 'SUCCEEDED',
      result: {},
      payment: { tx_hash: `0x${'ab'.repeat(32)}`, amount: '1000' },
    };
    const paid: Request[] = [];
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      if (new URL(req.url).pathname === '/registry') return json(200, registryDoc());
      if (!req.headers.get('payment-signature')) return challengeResponse();
      paid.push(req);
      return paid.length === 1 ? unavailable() : json(200, EXECUTION);
    }) as typeof globalThis.fetch;
    const c = createGatewayClient({ baseUrl: BASE, account, fetch });
    expect((await c.execute('intelligence.wallet_balances', {})).execution_id).toBe(EXECUTION.execution_id);
    expect(paid).toHaveLength(2);
    expect(paid[1]!.headers.get('payment-signature')).toBe(paid[0]!.headers.get('payment-signature'));
    expect(paid[1]!.headers.get('idempotency-key')).toBe(paid[0]!.headers.get('idempotency-key'));
    expect(c.spent().baseUnits).toBe(1000n);
  });
});

describe('chooseRequirement', () => {
  const base = { network: 'eip155:8453', assets: [USDC], label: 'x.y' };

  it('picks the first payable requirement and its amount', () => {
    const pr = paymentRequired([liqReq({ network: 'eip155:1' }), liqReq({ amount: '5' })]);
    expect(chooseRequirement({ ...base, paymentRequired: pr })).toEqual({ requirement: liqReq({ amount: '5' }), amount: 5n });
  });

  it('matches assets case-insensitively and applies exactAmount', () => {
    const pr = paymentRequired([liqReq({ asset: USDC.toLowerCase() as `0x${string}`, amount: '7' })]);
    expect(chooseRequirement({ ...base, paymentRequired: pr, terms: { exactAmount: 7n } }).amount).toBe(7n);
    expect(() => chooseRequirement({ ...base, paymentRequired: pr, terms: { exactAmount: 8n } })).toThrow(PaymentTermsMismatchError);
  });

  it('the total limit counts what was already spent', () => {
    const ledger = new SpendLedger({ totalUsdc: '0.03' });
    ledger.reserve(20_000n).commit();
    expect(() => chooseRequirement({ ...base, ledger, paymentRequired: paymentRequired([liqReq()]) })).toThrow(SpendLimitExceededError);
  });
});
