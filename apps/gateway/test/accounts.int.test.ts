import { Ledger, InsufficientBalanceError } from '@acg/accounts';
import { createSiweMessage } from 'viem/siwe';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { asReadOnChain, challenge, officialPayload, paidPost, paymentHeader, post } from './x402.js';

const t = useTestGateway();

async function signIn(index: number) {
  const account = t.stack.payment.buyers[index];
  const nonce = await post(`${t.url}/v1/auth/nonce`, { address: account.address });
  expect(nonce.status).toBe(200);
  const signature = await account.signMessage({ message: nonce.body.message });
  return { account, nonce: nonce.body, signature };
}

const getAccount = (token: string) => fetch(`${t.url}/v1/account`, { headers: { authorization: `Bearer ${token}` } });

describe('Sign-In with Ethereum', () => {
  it('issues a bearer token for a signed message and the token reads the account', async () => {
    const { account, nonce, signature } = await signIn(0);
    expect(nonce.message).toContain(account.address);
    expect(nonce.message).toContain('Chain ID: 8453');
    const token = await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature });
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer' });
    expect(token.body.access_token).toMatch(/^acg_/);
    expect(token.body.expires_in).toBeGreaterThan(0);
    const res = await getAccount(token.body.access_token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ address: account.address, balance: '0', usage: [] });
  });

  it('uses a nonce once', async () => {
    const { nonce, signature } = await signIn(0);
    expect((await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature })).status).toBe(200);
    const again = await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature });
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe('unknown_nonce');
  });

  it('refuses a wrong signature, an expired message, another domain and a non-SIWE text', async () => {
    const { account, nonce } = await signIn(1);
    const other = t.stack.payment.buyers[2];
    const forged = await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature: await other.signMessage({ message: nonce.message }) });
    expect(forged.status).toBe(401);
    expect(forged.body.reason).toBe('bad_signature');

    const base = { address: account.address, chainId: 8453, domain: new URL(t.url).host, uri: t.url, nonce: nonce.nonce, version: '1' as const };
    const expired = createSiweMessage({ ...base, issuedAt: new Date(Date.now() - 600_000), expirationTime: new Date(Date.now() - 300_000) });
    const r1 = await post(`${t.url}/v1/auth/token`, { message: expired, signature: await account.signMessage({ message: expired }) });
    expect(r1.status).toBe(401);
    expect(r1.body.reason).toBe('expired');

    const elsewhere = createSiweMessage({ ...base, domain: 'evil.example', uri: 'https://evil.example' });
    const r2 = await post(`${t.url}/v1/auth/token`, { message: elsewhere, signature: await account.signMessage({ message: elsewhere }) });
    expect(r2.status).toBe(401);
    expect(r2.body.reason).toBe('wrong_domain');

    const r3 = await post(`${t.url}/v1/auth/token`, { message: 'hello', signature: '0x1234' });
    expect(r3.status).toBe(400);
  });

  it('rejects missing, malformed, unknown and revoked tokens with 401 and WWW-Authenticate', async () => {
    const none = await fetch(`${t.url}/v1/account`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await getAccount('acg_' + 'x'.repeat(43))).status).toBe(401);
    expect((await fetch(`${t.url}/v1/account`, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    const { nonce, signature } = await signIn(3);
    const token = (await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature })).body.access_token;
    expect((await getAccount(token)).status).toBe(200);
    const revoked = await post(`${t.url}/v1/auth/revoke`, {}, { authorization: `Bearer ${token}` });
    expect(revoked.status).toBe(200);
    expect((await getAccount(token)).status).toBe(401);
  });
});

describe('metered account', () => {
  it('is topped up by an x402 deposit, credited once even when the payment is replayed', async () => {
    const { account, nonce, signature } = await signIn(4);
    const token = (await post(`${t.url}/v1/auth/token`, { message: nonce.message, signature })).body.access_token;
    const before = await t.usdc(account.address);
    const res = await paidPost(account, `${t.url}/v1/account/deposit`, { amount_usdc: '0.25' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ balance: '250000', deposit: { amount: '250000' } });
    expect(before - (await t.usdc(account.address))).toBe(250_000n);

    const pr = await challenge(`${t.url}/v1/account/deposit`, { amount_usdc: '0.05' });
    const header = paymentHeader(asReadOnChain(await officialPayload(account, pr)));
    expect((await post(`${t.url}/v1/account/deposit`, { amount_usdc: '0.05' }, { 'PAYMENT-SIGNATURE': header })).status).toBe(200);
    // a resend by the payer (its bearer token) gets the stored answer; by anyone else the receipt; never a second credit
    const again = await post(`${t.url}/v1/account/deposit`, { amount_usdc: '0.05' }, { 'PAYMENT-SIGNATURE': header, authorization: `Bearer ${token}` });
    expect(again.status).toBe(200);
    const receipt = await post(`${t.url}/v1/account/deposit`, { amount_usdc: '0.05' }, { 'PAYMENT-SIGNATURE': header });
    expect(receipt.status).toBe(409);
    expect(receipt.body).toMatchObject({ reason: 'payment_already_used', result_url: `${t.url}/v1/account` });
    const view = (await (await getAccount(token)).json()) as { balance: string; usage: { kind: string }[] };
    expect(view.balance).toBe('300000');
    expect(view.usage.filter((u: { kind: string }) => u.kind === 'credit')).toHaveLength(2);
  });

  it('refuses deposits outside 0.01..10000 USDC before any payment', async () => {
    for (const amount_usdc of ['0.001', '0', '10000.01', 'abc', '1.0000001']) {
      const r = await post(`${t.url}/v1/account/deposit`, { amount_usdc });
      expect(r.status, amount_usdc).toBe(400);
    }
  });

  it('debits atomically, never below zero, once per reference', async () => {
    const ledger = new Ledger(t.gateway.services.redis, t.gateway.services.keys);
    const who = '0x00000000000000000000000000000000000000aa';
    await ledger.credit(who, 5000n, 'deposit', 'dep1');
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => ledger.debit(who, 1000n, 'test', `call${i}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(refused.every((r) => r.reason instanceof InsufficientBalanceError)).toBe(true);
    expect(await ledger.balance(who)).toBe(0n);
    await ledger.credit(who, 2000n, 'deposit', 'dep2');
    expect((await ledger.debit(who, 1000n, 'test', 'again')).applied).toBe(true);
    expect((await ledger.debit(who, 1000n, 'test', 'again')).applied).toBe(false);
    expect(await ledger.balance(who)).toBe(1000n);
  });
});
