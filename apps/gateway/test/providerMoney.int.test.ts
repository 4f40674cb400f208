import { runPayoutPass } from '@acg/provider-ledger';
import { ProviderView } from '@acg/schemas';
import { pino } from 'pino';
import type { PrivateKeyAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { useRegisteredProvider } from './useRegisteredProvider.js';
import { treasurySender } from './harness.js';
import { waitFor } from './waitFor.js';
import { upperCaseAnswer, upperCaseCapability } from './providerServer.js';
import { paidPost, post } from './x402.js';

/**
 * A provider's money end to end (docs/decisions.md "Providers"): a paid provider execution through
 * `POST /api/v1/execute` is credited to the provider ledger (the gateway's default earnings),
 * shown on `GET /api/v1/providers/{id}`, disputed and refunded on-chain, released, and paid out.
 */

const ADMIN_TOKEN = `admin-${'m'.repeat(32)}`;
const PRICE = 500_000n; // 0.5 USDC: share 0.45, fee 0.05

const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' }, adminToken: ADMIN_TOKEN } });
const provider = useRegisteredProvider(t, upperCaseAnswer, { name: 'Money Co', capabilities: [upperCaseCapability('upper_money', '0.5')] });

async function signIn(account: PrivateKeyAccount | (typeof t.stack.payment.buyers)[number]): Promise<string> {
  const nonce = await post(`${t.url}/v1/auth/nonce`, { address: account.address });
  const token = await post(`${t.url}/v1/auth/token`, { message: nonce.body.message, signature: await account.signMessage({ message: nonce.body.message }) });
  return token.body.access_token;
}

async function execute(): Promise<string> {
  const { body } = await paidPost(t.stack.payment.buyers[0], `${t.url}/api/v1/execute`, { capability_id: 'intelligence.upper_money', input: { text: 'hi' } });
  expect(body.status).toBe('SUCCEEDED');
  return body.execution_id;
}

async function providerView(token: string) {
  const res = await fetch(`${t.url}/api/v1/providers/${provider.id}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ProviderView.parse(await res.json());
}

describe('provider money through the public API', () => {
  it('credits a paid provider execution, refunds a dispute on-chain, releases another and pays the provider', async () => {
    const buyer = t.stack.payment.buyers[0];
    const [buyerToken, ownerToken] = [await signIn(buyer), await signIn(provider.owner)];
    const ledger = t.gateway.services.providerLedger;

    const disputed = await execute();
    expect(await ledger.entry(disputed)).toMatchObject({
      provider_id: provider.id,
      payer: buyer.address,
      price: PRICE,
      share: 450_000n,
      fee: 50_000n,
      status: 'held',
    });
    expect((await providerView(ownerToken)).balance).toEqual({ held: '450000', available: '0', paid: '0' });

    const opened = await post(`${t.url}/api/v1/executions/${disputed}/dispute`, { reason: 'not upper-case enough' }, { authorization: `Bearer ${buyerToken}` });
    expect(opened.status).toBe(201);
    expect((await providerView(ownerToken)).disputes).toEqual([opened.body]);
    // the dispute shows evidence from both sides: the result, the gateway's proof, the provider's signature
    const read = await fetch(`${t.url}/api/v1/disputes/${opened.body.dispute_id}`, { headers: { authorization: `Bearer ${buyerToken}` } }).then(
      (r) => r.json() as any,
    );
    expect(read.evidence.result).toBeTruthy();
    expect(read.evidence.proof).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(read.evidence.provider_signature).toMatch(/^0x[0-9a-f]{130}$/);
    const paidOnce = await t.usdc(buyer.address);
    const refund = await post(`${t.url}/api/v1/disputes/${opened.body.dispute_id}/resolve`, { outcome: 'refund' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(refund.status).toBe(200);
    await waitFor(
      () => ledger.dispute(opened.body.dispute_id),
      (d) => d?.view.refund?.status === 'sent',
    );
    expect(await t.usdc(buyer.address)).toBe(paidOnce + PRICE);
    expect((await providerView(ownerToken)).balance).toEqual({ held: '0', available: '0', paid: '0' });

    const released = await execute();
    const second = await post(`${t.url}/api/v1/executions/${released}/dispute`, { reason: 'slow' }, { authorization: `Bearer ${buyerToken}` });
    await post(`${t.url}/api/v1/disputes/${second.body.dispute_id}/resolve`, { outcome: 'release' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect((await providerView(ownerToken)).balance).toEqual({ held: '0', available: '450000', paid: '0' });

    const { services } = t.gateway;
    const { config } = t;
    const report = await runPayoutPass({
      ledger,
      redis: services.redis,
      keys: services.keys,
      sender: treasurySender(t),
      minimum: 100_000n,
      disputeAutoResolveSeconds: config.providers.disputeAutoResolveSeconds,
      log: pino({ level: 'silent' }),
    });
    expect(report.sent).toEqual([expect.objectContaining({ provider_id: provider.id, amount: 450_000n })]);
    expect(await t.usdc(provider.owner.address)).toBe(450_000n);
    const view = await providerView(ownerToken);
    expect(view.balance).toEqual({ held: '0', available: '0', paid: '450000' });
    expect(view.payouts).toEqual([expect.objectContaining({ amount: '450000', status: 'sent', tx_hash: report.sent[0].tx_hash })]);
    const totals = await ledger.totals();
    expect(totals).toMatchObject({ credited: 2n * PRICE, refunded: PRICE, fees: 50_000n, paid: 450_000n });
  });
});
