import { devClients, type DevClients } from '@acg/devnet';
import { ProviderLedger, runPayoutPass } from '@acg/provider-ledger';
import { DisputeView } from '@acg/schemas';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { erc20Abi, type HDAccount } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { providerLedgerAt } from './harness.js';
import { post } from './x402.js';

const ADMIN_TOKEN = `admin-${'k'.repeat(32)}`;
const PRICE = 2_000_000n; // 2 USDC: share 1.8, fee 0.2 (PROVIDER_FEE_BPS 1000)

const t = useTestGateway({ config: { adminToken: ADMIN_TOKEN } });
let clients: DevClients;
let buyer: HDAccount;
let providerAccount: HDAccount;
let stranger: HDAccount;
const tokens = new Map<string, string>();
const providerId = `prv_${ulid()}`;

beforeAll(async () => {
  clients = await devClients(t.stack.payment.rpcUrl);
  [buyer, providerAccount, stranger] = [t.stack.payment.buyers[0], t.stack.payment.buyers[5], t.stack.payment.buyers[6]];
  for (const a of [buyer, providerAccount, stranger]) tokens.set(a.address, await signIn(a));
});

/** Sign-In with Ethereum: a bearer token of `account`. */
async function signIn(account: HDAccount): Promise<string> {
  const nonce = await post(`${t.url}/v1/auth/nonce`, { address: account.address });
  const signature = await account.signMessage({ message: nonce.body.message });
  const token = await post(`${t.url}/v1/auth/token`, { message: nonce.body.message, signature });
  expect(token.status).toBe(200);
  return token.body.access_token;
}

const bearer = (a: HDAccount | string) => ({ authorization: `Bearer ${typeof a === 'string' ? a : tokens.get(a.address)}` });
const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${t.url}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, contentType: res.headers.get('content-type') };
};

/**
 * A SUCCEEDED provider execution as the provider routing will record it: the buyer pays the price
 * to the treasury on-chain (the x402 settlement), and the ledger credits it.
 */
async function paidProviderExecution(ledger: ProviderLedger = t.gateway.services.providerLedger) {
  const hash = await clients.walletFor(buyer).writeContract({
    address: t.stack.payment.usdc,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [t.stack.payment.treasury.address, PRICE],
  });
  await clients.publicClient.waitForTransactionReceipt({ hash });
  const execution_id = `exe_${ulid()}`;
  await ledger.credit({
    execution_id,
    provider_id: providerId,
    provider_address: providerAccount.address,
    capability_id: 'intelligence.echo',
    payer: buyer.address,
    price: PRICE,
    payment_tx_hash: hash,
  });
  return execution_id;
}

const openDispute = (execution_id: string, who: HDAccount | string = buyer, reason = 'the answer was wrong') =>
  post(`${t.url}/api/v1/executions/${execution_id}/dispute`, { reason }, bearer(who));
const resolve = (dispute_id: string, outcome: 'refund' | 'release', token: string = ADMIN_TOKEN) =>
  post(`${t.url}/api/v1/disputes/${dispute_id}/resolve`, { outcome }, { authorization: `Bearer ${token}` });

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('disputes through the HTTP API', () => {
  it('the buyer opens a dispute; the share stays held; nobody else can open or read it', async () => {
    const ledger = t.gateway.services.providerLedger;
    const execution_id = await paidProviderExecution();
    const heldBefore = BigInt((await ledger.balance(providerId)).held);

    expect((await openDispute(execution_id, stranger)).status).toBe(404);
    expect((await openDispute(execution_id, providerAccount)).status).toBe(404);
    const none = await post(`${t.url}/api/v1/executions/${execution_id}/dispute`, { reason: 'x' });
    expect(none.status).toBe(401);

    const opened = await openDispute(execution_id);
    expect(opened.status).toBe(201);
    expect(opened.contentType).toContain('application/json');
    const view = DisputeView.parse(opened.body);
    expect(view).toMatchObject({
      execution_id,
      provider_id: providerId,
      payer: buyer.address,
      amount: '2000000',
      status: 'open',
      reason: 'the answer was wrong',
    });
    expect(opened.headers.get('location')).toBe(`${t.url}/api/v1/disputes/${view.dispute_id}`);
    expect(BigInt((await ledger.balance(providerId)).held)).toBe(heldBefore);
    expect((await ledger.entry(execution_id))?.dispute_id).toBe(view.dispute_id);

    const again = await openDispute(execution_id);
    expect(again.status).toBe(409);
    expect(again.contentType).toContain('application/problem+json');
    expect(again.body).toMatchObject({ status: 409, reason: 'already_disputed', dispute_id: view.dispute_id });

    for (const who of [buyer, providerAccount]) expect((await get(`/api/v1/disputes/${view.dispute_id}`, bearer(who))).body).toEqual(view);
    expect((await get(`/api/v1/disputes/${view.dispute_id}`, { authorization: `Bearer ${ADMIN_TOKEN}` })).body).toEqual(view);
    const strangerRead = await get(`/api/v1/disputes/${view.dispute_id}`, bearer(stranger));
    expect(strangerRead.status).toBe(404);
    expect(strangerRead.contentType).toContain('application/problem+json');
    expect((await get(`/api/v1/disputes/${view.dispute_id}`)).status).toBe(401);
    expect((await get(`/api/v1/disputes/dsp_${ulid()}`, bearer(buyer))).status).toBe(404);
    expect((await get('/api/v1/disputes/not-an-id', bearer(buyer))).status).toBe(400);
  });

  it('answers 404 for an unknown execution or one that is not a provider execution, 409 once the window has passed', async () => {
    expect((await openDispute(`exe_${ulid()}`)).status).toBe(404);
    // a ledger whose clock is a window and a second behind: the execution's window has passed
    const { services } = t.gateway;
    const past = new ProviderLedger({
      redis: services.redis,
      keys: services.keys,
      feeBps: 1000,
      disputeWindowSeconds: t.config.providers.disputeWindowSeconds,
      now: () => Date.now() - t.config.providers.disputeWindowSeconds * 1000 - 1000,
    });
    const late = await openDispute(await paidProviderExecution(past));
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ reason: 'window_passed' });
  });

  it('the provider answers; only the provider can', async () => {
    const d = DisputeView.parse((await openDispute(await paidProviderExecution())).body);
    const path = `${t.url}/api/v1/disputes/${d.dispute_id}/response`;
    expect((await post(path, { statement: 'it was right' }, bearer(buyer))).status).toBe(404);
    expect((await post(path, { statement: 'it was right' }, bearer(stranger))).status).toBe(404);
    expect((await post(path, {}, bearer(providerAccount))).status).toBe(400);
    const answered = await post(path, { statement: 'it was right' }, bearer(providerAccount));
    expect(answered.status).toBe(200);
    expect(DisputeView.parse(answered.body)).toMatchObject({ status: 'open', statement: 'it was right' });
    expect(answered.body.responded_at).not.toBeNull();
  });

  it('admin refund: share and fee cancelled, the buyer gets the full price back on-chain', async () => {
    const ledger = t.gateway.services.providerLedger;
    const execution_id = await paidProviderExecution();
    const d = DisputeView.parse((await openDispute(execution_id)).body);
    const before = { buyer: await t.usdc(buyer.address), totals: await ledger.totals(), balance: await ledger.balance(providerId) };

    expect((await resolve(d.dispute_id, 'refund', 'wrong-admin-token-000')).status).toBe(401);
    expect((await resolve(d.dispute_id, 'refund', tokens.get(buyer.address)!)).status).toBe(401);
    expect((await post(`${t.url}/api/v1/disputes/${d.dispute_id}/resolve`, { outcome: 'refund' })).status).toBe(401);

    const resolved = await resolve(d.dispute_id, 'refund');
    expect(resolved.status).toBe(200);
    expect(DisputeView.parse(resolved.body)).toMatchObject({ status: 'refunded', resolved_by: 'admin', refund: { status: 'pending' } });
    expect((await ledger.entry(execution_id))?.status).toBe('refunded');
    const after = await ledger.totals();
    expect(after.fees).toBe(before.totals.fees - 200_000n);
    expect(after.refunded).toBe(before.totals.refunded + PRICE);
    expect(BigInt((await ledger.balance(providerId)).held)).toBe(BigInt(before.balance.held) - 1_800_000n);
    expect(after.held + after.available + after.reserved + after.paid + after.fees).toBe(after.credited - after.refunded);

    const sent = await waitFor(
      async () => (await get(`/api/v1/disputes/${d.dispute_id}`, bearer(buyer))).body,
      (b) => b.refund?.status === 'sent',
    );
    expect(sent.refund.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await t.usdc(buyer.address)).toBe(before.buyer + PRICE);
    const receipt = await clients.publicClient.getTransactionReceipt({ hash: sent.refund.tx_hash });
    expect(receipt.from.toLowerCase()).toBe(t.stack.payment.treasury.address.toLowerCase());

    const twice = await resolve(d.dispute_id, 'release');
    expect(twice.status).toBe(409);
    expect(twice.body.reason).toBe('closed');
  });

  it('admin release: the share becomes available at once', async () => {
    const ledger = t.gateway.services.providerLedger;
    const d = DisputeView.parse((await openDispute(await paidProviderExecution())).body);
    const before = await ledger.balance(providerId);
    const resolved = await resolve(d.dispute_id, 'release');
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'released', resolved_by: 'admin', refund: null });
    const after = await ledger.balance(providerId);
    expect(BigInt(after.available)).toBe(BigInt(before.available) + 1_800_000n);
    expect(BigInt(after.held)).toBe(BigInt(before.held) - 1_800_000n);
    expect((await ledger.disputesOfProvider(providerId)).find((x) => x.dispute_id === d.dispute_id)?.status).toBe('released');
  });

  it('auto-resolves old disputes: released when the provider answered, refunded on-chain when not', async () => {
    const { services } = t.gateway;
    const answered = DisputeView.parse((await openDispute(await paidProviderExecution())).body);
    const silent = DisputeView.parse((await openDispute(await paidProviderExecution())).body);
    await post(`${t.url}/api/v1/disputes/${answered.dispute_id}/response`, { statement: 'delivered as specified' }, bearer(providerAccount));
    const buyerBefore = await t.usdc(buyer.address);
    // the worker's pass, a week and a second later
    const later = () => Date.now() + (t.config.providers.disputeAutoResolveSeconds + 1) * 1000;
    const ledger = providerLedgerAt(t, later);
    const report = await runPayoutPass({
      ledger,
      redis: services.redis,
      keys: services.keys,
      minimum: BigInt(t.config.providers.payoutMinBaseUnits),
      disputeAutoResolveSeconds: t.config.providers.disputeAutoResolveSeconds,
      log: pino({ level: 'silent' }),
      now: later,
    });
    expect(report.disputes.released).toContain(answered.dispute_id);
    expect(report.disputes.refunded).toContain(silent.dispute_id);
    expect((await get(`/api/v1/disputes/${answered.dispute_id}`, bearer(providerAccount))).body).toMatchObject({ status: 'released', resolved_by: 'auto' });
    const refunded = await waitFor(
      async () => (await get(`/api/v1/disputes/${silent.dispute_id}`, bearer(buyer))).body,
      (b) => b.refund?.status === 'sent',
    );
    expect(refunded).toMatchObject({ status: 'refunded', resolved_by: 'auto' });
    // the pass also resolved the disputes earlier tests left open, all paid by this buyer
    for (const id of report.disputes.refunded) {
      await waitFor(
        async () => (await get(`/api/v1/disputes/${id}`, bearer(buyer))).body,
        (b) => b.refund?.status === 'sent',
      );
    }
    expect(await t.usdc(buyer.address)).toBe(buyerBefore + PRICE * BigInt(report.disputes.refunded.length));
  });

  it('without ADMIN_TOKEN the resolve route does not exist (404); it is documented under the providers tag', async () => {
    const d = DisputeView.parse((await openDispute(await paidProviderExecution())).body);
    const { config } = t.gateway.services;
    config.adminToken = undefined;
    try {
      const res = await resolve(d.dispute_id, 'refund');
      expect(res.status).toBe(404);
      expect(res.contentType).toContain('application/problem+json');
      // the admin token is no bearer token any more either
      expect((await get(`/api/v1/disputes/${d.dispute_id}`, { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(401);
    } finally {
      config.adminToken = ADMIN_TOKEN;
    }
    expect((await get(`/api/v1/disputes/${d.dispute_id}`, bearer(buyer))).body.status).toBe('open');
    const doc = (await get('/openapi.json')).body;
    for (const [path, method] of [
      ['/api/v1/executions/{execution_id}/dispute', 'post'],
      ['/api/v1/disputes/{dispute_id}/response', 'post'],
      ['/api/v1/disputes/{dispute_id}/resolve', 'post'],
      ['/api/v1/disputes/{dispute_id}', 'get'],
    ]) {
      expect(doc.paths[path]?.[method]?.tags).toEqual(['providers']);
    }
  });
});
