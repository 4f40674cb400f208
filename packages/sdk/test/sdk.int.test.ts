import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../apps/gateway/test/harness.js';
import {
  GatewayError,
  PaymentRequiredError,
  SpendLimitExceededError,
  UnknownCapabilityError,
  createGatewayClient,
  verifyExecutionProof,
} from '../src/index.js';

/**
 * The SDK against a real gateway on a real anvil chain (chain id 8453, real USDC) and a private
 * Redis, started here and stopped after. Each test uses its own funded buyer (dev accounts 2-9).
 */
const CAPABILITY = 'intelligence.wallet_balances';
const PRICE = 1_000n; // 0.001 USDC in base units, as the catalog sets it

let t: TestGateway;
let balanceOf: (who: Address) => Promise<bigint>;

beforeAll(async () => {
  t = await startTestGateway();
  const chain = createPublicClient({ transport: http(t.stack.payment.rpcUrl) });
  balanceOf = (who) => chain.readContract({ address: t.stack.payment.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
});

afterAll(async () => {
  await t?.close();
});

describe('agent-capability-gateway-sdk against the gateway', () => {
  it('discovers intelligence.wallet_balances with its price and x402 terms', async () => {
    const gw = createGatewayClient({ baseUrl: t.url });
    const caps = await gw.capabilities();
    const cap = caps.find((c) => c.id === CAPABILITY);
    expect(cap).toBeDefined();
    expect(cap!.price).toBe('0.001');
    expect(cap!.price_base_units).toBe('1000');
    expect(cap!.currency).toBe('USDC');
    expect(cap!.x402?.network).toBe('eip155:8453');
    expect(cap!.x402?.asset.toLowerCase()).toBe(t.stack.payment.usdc.toLowerCase());
    expect(cap!.x402?.payTo.toLowerCase()).toBe(t.stack.payment.treasury.address.toLowerCase());
    expect(await gw.capability(CAPABILITY)).toEqual(cap);
    await expect(gw.capability('no.such_capability')).rejects.toBeInstanceOf(UnknownCapabilityError);
  });

  it('execute pays the challenge and the buyer balance drops by exactly the price', async () => {
    const buyer = t.stack.payment.buyers[0]!;
    const treasury = t.stack.payment.treasury.address;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' } });
    const [before, treasuryBefore] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);

    const exe = await gw.execute<{ address: string; usdc: { balance: string } }>(CAPABILITY, { address: buyer.address });

    expect(exe.status).toBe('SUCCEEDED');
    expect(exe.execution_id).toMatch(/^exe_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(exe.payment.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(exe.payment.amount).toBe(PRICE.toString());
    expect(exe.result.address).toBe(buyer.address);
    const [after, treasuryAfter] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);
    expect(before - after).toBe(PRICE);
    expect(treasuryAfter - treasuryBefore).toBe(PRICE);
    expect(gw.spent()).toEqual({ baseUnits: PRICE, usdc: '0.001', pendingBaseUnits: 0n });

    // The settlement is on-chain and the execution is stored.
    const chain = createPublicClient({ transport: http(t.stack.payment.rpcUrl) });
    const receipt = await chain.getTransactionReceipt({ hash: exe.payment.tx_hash });
    expect(receipt.status).toBe('success');
    const record = await gw.getExecution(exe.execution_id);
    expect(record.status).toBe('SUCCEEDED');
    // the record also says how far the settlement got: settled, then final once its block is (docs/decisions.md "Confirmations and reorgs")
    expect(record.payment).toMatchObject(exe.payment);
    expect(['settled', 'final']).toContain(record.payment.status);

    // the result is proven: verifyExecutionProof checks the JWS against the JWKS and both hashes
    const jwksUrl = (await gw.capability(CAPABILITY)).jwks_url!;
    const claims = await verifyExecutionProof(exe, { jwksUrl, input: { address: buyer.address } });
    expect(claims).toMatchObject({
      execution_id: exe.execution_id,
      capability_id: CAPABILITY,
      payment: { payer: buyer.address, tx_hash: exe.payment.tx_hash },
    });
    const changed = { ...exe, result: { ...exe.result, address: t.stack.payment.buyers[1]!.address } };
    await expect(verifyExecutionProof(changed, { jwksUrl })).rejects.toMatchObject({ name: 'ProofVerificationError', code: 'result_mismatch' });
    await expect(verifyExecutionProof(exe, { jwksUrl, input: { address: t.stack.payment.buyers[1]!.address } })).rejects.toMatchObject({
      code: 'input_mismatch',
    });
  });

  it('signs in with x402 sign-in-with-x when it pays: the session reads the execution without Sign-In with Ethereum', async () => {
    const buyer = t.stack.payment.buyers[2]!;
    const paths: string[] = [];
    const signInHeaders: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      paths.push(new URL(request.url).pathname);
      const siwx = request.headers.get('sign-in-with-x');
      if (siwx) signInHeaders.push(siwx);
      return fetch(request);
    };
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, fetch: recording, spendLimits: { perCallUsdc: '0.01' } });
    const exe = await gw.execute(CAPABILITY, { address: buyer.address });
    // the payment carried the signed challenge, and the answer the session
    expect(signInHeaders).toHaveLength(1);
    const session = gw.auth.token();
    expect(session).toMatchObject({ token_type: 'Bearer', expires_in: 86_400, address: buyer.address });
    const record = await gw.getExecution(exe.execution_id);
    expect(record).toMatchObject({ execution_id: exe.execution_id, payer: buyer.address });
    expect(paths.filter((p) => p.startsWith('/v1/auth/'))).toEqual([]);
    // the same kind of token as Sign-In with Ethereum's: it reads the metered account too
    const account = await fetch(`${t.url}/v1/account`, { headers: { authorization: `Bearer ${session!.access_token}` } });
    expect(account.status).toBe(200);
  });

  it('the same Idempotency-Key twice runs and charges once', async () => {
    const buyer = t.stack.payment.buyers[1]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer });
    const before = await balanceOf(buyer.address);
    const key = `sdk-int-${Date.now()}`;
    const a = await gw.execute(CAPABILITY, { address: buyer.address }, { idempotencyKey: key });
    const b = await gw.execute(CAPABILITY, { address: buyer.address }, { idempotencyKey: key });
    expect(b.execution_id).toBe(a.execution_id);
    expect(b.payment.tx_hash).toBe(a.payment.tx_hash);
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
    // the key is the payer's: the second call proved it with a fresh authorization, answered from
    // the first (Idempotent-Replayed: true) and never settled, so the client does not count it
    expect(gw.spent().baseUnits).toBe(PRICE);
  });

  it('a per-call limit below the price throws SpendLimitExceededError and moves no USDC', async () => {
    const buyer = t.stack.payment.buyers[2]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { perCallUsdc: '0.0005' } });
    const before = await balanceOf(buyer.address);
    const err = await gw.execute(CAPABILITY, { address: buyer.address }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect((err as SpendLimitExceededError).limit).toBe('perCall');
    expect((err as SpendLimitExceededError).amount).toBe(PRICE);
    expect(await balanceOf(buyer.address)).toBe(before);
    expect(gw.spent().baseUnits).toBe(0n);
  });

  it('a total limit allows exactly as many calls as it covers', async () => {
    const buyer = t.stack.payment.buyers[3]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { totalUsdc: '0.002' } });
    const before = await balanceOf(buyer.address);
    await gw.execute(CAPABILITY, { address: buyer.address });
    await gw.execute(CAPABILITY, { address: buyer.address });
    const err = await gw.execute(CAPABILITY, { address: buyer.address }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect((err as SpendLimitExceededError).limit).toBe('total');
    expect(before - (await balanceOf(buyer.address))).toBe(2n * PRICE);
    expect(gw.spent().usdc).toBe('0.002');
  });

  it('without an account a 402 throws PaymentRequiredError with the decoded challenge', async () => {
    const gw = createGatewayClient({ baseUrl: t.url });
    const err = await gw.execute(CAPABILITY, { address: t.stack.payment.buyers[4]!.address }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentRequiredError);
    const pr = (err as PaymentRequiredError).paymentRequired;
    expect(pr.x402Version).toBe(2);
    expect(pr.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: PRICE.toString(),
      payTo: t.stack.payment.treasury.address,
    });
    expect(pr.accepts[0]!.asset.toLowerCase()).toBe(t.stack.payment.usdc.toLowerCase());
    expect((err as PaymentRequiredError).challenge?.maxAmountRequired).toBe(PRICE.toString());
  });

  it('bad input throws GatewayError 400 with the issue path and costs nothing', async () => {
    const buyer = t.stack.payment.buyers[5]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer });
    const before = await balanceOf(buyer.address);
    const err = await gw.execute(CAPABILITY, { address: 'not-an-address' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).errors?.some((i) => i.path.join('.') === 'input.address')).toBe(true);
    expect(await balanceOf(buyer.address)).toBe(before);
    expect(gw.spent().baseUnits).toBe(0n);
  });

  it('getExecution of an unknown id is a GatewayError 404 (the client signs in with its account: only payers read executions)', async () => {
    const gw = createGatewayClient({ baseUrl: t.url, account: t.stack.payment.buyers[5]! });
    const err = await gw.getExecution('exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(404);
  });

  it('deposit pays amount_usdc into the metered account and the signed-in account shows it', async () => {
    const buyer = t.stack.payment.buyers[6]!;
    const treasury = t.stack.payment.treasury.address;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer, spendLimits: { perCallUsdc: '0.1', totalUsdc: '0.1' } });
    const [before, treasuryBefore] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);

    const r = await gw.deposit({ amount_usdc: '0.05' });

    expect(r.deposit.amount).toBe('50000');
    expect(r.deposit.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(r.address.toLowerCase()).toBe(buyer.address.toLowerCase());
    expect(BigInt(r.deposited)).toBe(50_000n);
    expect(BigInt(r.balance)).toBe(50_000n);
    const [after, treasuryAfter] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);
    expect(before - after).toBe(50_000n);
    expect(treasuryAfter - treasuryBefore).toBe(50_000n);
    expect(gw.spent().usdc).toBe('0.05');

    await gw.auth.signIn();
    expect((await gw.account()).balance).toBe('50000');

    const err = await gw.deposit({ amount_usdc: '0.06' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect((err as SpendLimitExceededError).limit).toBe('total');
    expect(await balanceOf(buyer.address)).toBe(after);
  });

  it('a deposit below the gateway minimum is a GatewayError 400 and costs nothing', async () => {
    const buyer = t.stack.payment.buyers[7]!;
    const gw = createGatewayClient({ baseUrl: t.url, account: buyer });
    const before = await balanceOf(buyer.address);
    const err = await gw.deposit({ amount_usdc: '0.001' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect(await balanceOf(buyer.address)).toBe(before);
    expect(gw.spent().baseUnits).toBe(0n);
  });
});
