import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerProvider, startTestProvider, upperCaseAnswer, type TestProvider } from './providerServer.js';
import { useTestGateway } from './useTestGateway.js';
import { waitFor } from './waitFor.js';
import { paidPost, post } from './x402.js';

/**
 * Issue 36 item 10: when a contract's creator retires (docs/marketplace.md "Contracts and offers"),
 * the offers that joined keep it alive and the first of them defines it (its description, schemas and
 * `example_request`); the creator is never routed to again; a new creator of the same name takes the
 * definition back; once the last offer leaves, the contract is gone and nobody can join it.
 */
const ID = 'intelligence.upper_kept';
const outputSchema = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const offer = (description: string, maxLength: number, extra: Record<string, unknown>) => ({
  description,
  input_schema: { type: 'object', properties: { text: { type: 'string', maxLength } }, required: ['text'] },
  output_schema: outputSchema,
  example_request: { text: 'probe' },
  timeout_ms: 2000,
  ...extra,
});

const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });

interface Seller {
  account: LocalAccount;
  server: TestProvider;
  id: string;
}
const sellers: Seller[] = [];

async function seller(name: string, capability: Record<string, unknown>): Promise<Seller> {
  const s = { account: privateKeyToAccount(generatePrivateKey()), server: await startTestProvider(upperCaseAnswer), id: '' };
  sellers.push(s);
  const r = await registerProvider(t.url, s.account, { name, endpoint: s.server.url, capabilities: [capability] });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  s.id = r.body.provider_id;
  s.server.setSecret(r.body.signing_secret);
  s.server.signAs(s.account, [ID]);
  return s;
}

async function retire(s: Seller) {
  const c = await post(`${t.url}/api/v1/providers/challenge`, { address: s.account.address, action: 'retire', provider_id: s.id });
  const q = new URLSearchParams({ address: s.account.address, message: c.body.message, signature: await s.account.signMessage({ message: c.body.message }) });
  expect((await fetch(`${t.url}/api/v1/providers/${s.id}?${q}`, { method: 'DELETE' })).status).toBe(200);
  await t.gateway.services.providers.directory.reload();
}

async function entry(): Promise<Record<string, any> | undefined> {
  t.gateway.services.discovery.invalidate();
  const doc = (await fetch(`${t.url}/registry`).then((r) => r.json())) as { capabilities: Record<string, any>[] };
  return doc.capabilities.find((c) => c.id === ID);
}

const paidCalls = (s: Seller) => s.server.calls.filter((c) => (c.body.input as { text?: string }).text === 'paid').length;

let creator: Seller;
let first: Seller;
let second: Seller;

beforeAll(async () => {
  creator = await seller('Creator Co', offer('Upper-cases text (creator).', 1000, { name: 'upper_kept', price_usdc: '0.001' }));
  first = await seller('First Joiner Co', offer('Upper-cases text (first joiner).', 500, { capability_id: ID, price_usdc: '0.002' }));
  second = await seller('Second Joiner Co', offer('Upper-cases text (second joiner).', 200, { capability_id: ID, price_usdc: '0.003' }));
  await t.gateway.services.providers.directory.reload();
  for (const s of sellers) for (let i = 0; i < 3; i++) await t.gateway.prober.probeProvider(s.id);
});
afterAll(async () => {
  for (const s of sellers) await s.server.close();
});

describe('a contract whose creator retires', () => {
  it('before: the creator defines the contract and all three offers are listed', async () => {
    const e = (await entry())!;
    expect(e.description).toBe('Upper-cases text (creator).');
    expect(e.input_schema.properties.text.maxLength).toBe(1000);
    expect(e.offers.map((o: any) => o.provider_id)).toEqual([creator.id, first.id, second.id]);
  });

  it('after: the first joiner defines it (description, schemas), the other offers stay, and paid calls never reach the creator', async () => {
    await retire(creator);
    const e = (await entry())!;
    expect(e).toBeDefined();
    expect(e.description).toBe('Upper-cases text (first joiner).');
    expect(e.input_schema.properties.text.maxLength).toBe(500);
    expect(e.example_request).toMatchObject({ capability_id: ID, input: { text: 'probe' } });
    expect(e.offers.map((o: any) => o.provider_id)).toEqual([first.id, second.id]);
    expect(e.price).toBe('0.002');

    const buyer = t.stack.payment.buyers[2]!;
    const before = await t.usdc(buyer.address);
    const r = await paidPost(buyer, `${t.url}/api/v1/execute`, { capability_id: ID, input: { text: 'paid' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.result).toEqual({ upper: 'PAID' });
    expect(r.body.provider.provider_id).toBe(first.id);
    // a routed call settles the route's highest price and refunds the difference on-chain
    await waitFor(
      () => t.usdc(buyer.address),
      (b) => before - b === 2000n,
    );
    expect(before - (await t.usdc(buyer.address))).toBe(2000n);
    expect(paidCalls(creator)).toBe(0);
    expect(paidCalls(first)).toBe(1);
  });

  it('a new creator of the same name takes the definition back; the joiners stay', async () => {
    const comeback = await seller('Comeback Co', offer('Upper-cases text (new creator).', 300, { name: 'upper_kept', price_usdc: '0.004' }));
    await t.gateway.services.providers.directory.reload();
    const e = (await entry())!;
    expect(e.description).toBe('Upper-cases text (new creator).');
    expect(e.offers.map((o: any) => o.provider_id).sort()).toEqual([first.id, second.id, comeback.id].sort());
    await retire(comeback);
  });

  it('while the creator is away, a new offer joins against the defining joiner: its schema must accept that example_request', async () => {
    const misfit = privateKeyToAccount(generatePrivateKey());
    const server = await startTestProvider(upperCaseAnswer);
    const r = await registerProvider(t.url, misfit, {
      name: 'Misfit Co',
      endpoint: server.url,
      capabilities: [
        {
          ...offer('misfit', 100, { capability_id: ID, price_usdc: '0.001' }),
          input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
          example_request: { n: 1 },
        },
      ],
    });
    await server.close();
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('contract_mismatch');
    const late = await seller('Late Joiner Co', offer('Upper-cases text (late joiner).', 100, { capability_id: ID, price_usdc: '0.005' }));
    await t.gateway.services.providers.directory.reload();
    expect((await entry())!.offers.map((o: any) => o.provider_id)).toEqual([first.id, second.id, late.id]);
    await retire(late);
  });

  it('once the last offer retires the contract is gone: not listed, execute 404, a join 404 unknown_contract', async () => {
    await retire(first);
    expect((await entry())!.description).toBe('Upper-cases text (second joiner).');
    await retire(second);
    expect(await entry()).toBeUndefined();
    expect((await post(`${t.url}/api/v1/execute`, { capability_id: ID, input: { text: 'x' } })).status).toBe(404);
    const late = privateKeyToAccount(generatePrivateKey());
    const server = await startTestProvider(upperCaseAnswer);
    const r = await registerProvider(t.url, late, {
      name: 'Late Co',
      endpoint: server.url,
      capabilities: [offer('late', 100, { capability_id: ID, price_usdc: '0.001' })],
    });
    await server.close();
    expect(r.status).toBe(404);
    expect(r.body.reason).toBe('unknown_contract');
  });
});
