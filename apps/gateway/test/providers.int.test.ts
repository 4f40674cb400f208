import { resultSha256, resultSignatureMessage } from '@acg/provider-kit';
import { verifyMessage } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderCredit } from '@acg/provider-directory';
import { startTestGateway, type TestGateway } from './harness.js';
import { registerProvider, startTestProvider, upperCaseAnswer as upper, type Answer, type ReceivedCall } from './providerServer.js';
import { paidPost, post, readExecution, usdcReader } from './x402.js';

/**
 * Third-party providers end to end (docs/decisions.md "Providers"), on a real anvil payment chain and a
 * private Redis, with a provider endpoint started here that verifies Standard Webhooks signatures.
 */

const PRICE = 2500n; // 0.0025 USDC
const inputSchema = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['text'],
  additionalProperties: false,
};
const outputSchema = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const offer = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `Upper-cases text (${name}).`,
  price_usdc: '0.0025',
  input_schema: inputSchema,
  output_schema: outputSchema,
  example_request: { text: 'probe' },
  timeout_ms: 1000,
  ...extra,
});

let t: TestGateway;
const credits: ProviderCredit[] = [];
let balanceOf: (a: `0x${string}`) => Promise<bigint>;
/** what the provider answers, by capability id (default: a valid upper-cased result) */
const answers = new Map<string, (call: ReceivedCall) => Answer>();
/** A probe is sent exactly like a paid call (docs/trust-v1.md "Probes"): the test knows it by its input, the offers' example_request. */
const isProbeCall = (c: ReceivedCall) => (c.body.input as { text?: string }).text === 'probe';
let provider: Awaited<ReturnType<typeof startTestProvider>>;

/** A signed challenge for `scope` (action, provider_id, and the body it authorizes). */
async function signedChallenge(account: PrivateKeyAccount, scope: Record<string, unknown>) {
  const c = await post(`${t.url}/api/v1/providers/challenge`, { address: account.address, ...scope });
  expect(c.status).toBe(200);
  return { address: account.address, message: c.body.message as string, signature: await account.signMessage({ message: c.body.message }) };
}

async function register(account: PrivateKeyAccount, body: Record<string, unknown>) {
  return registerProvider(t.url, account, { name: 'Upper Co', endpoint: provider.url, ...body });
}

async function registryEntry(id: string) {
  const doc = (await fetch(`${t.url}/registry`, { headers: { 'cache-control': 'no-cache' } }).then((r) => r.json())) as any;
  return (doc.capabilities as any[]).find((c) => c.id === id);
}

beforeAll(async () => {
  provider = await startTestProvider((call) => (answers.get(call.body.capability_id) ?? upper)(call));
  t = await startTestGateway({
    config: { walletMonitor: { webhookPolicy: 'development' } },
    earnings: { credit: async (c) => void credits.push(c) },
  });
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

describe('onboarding (EIP-191)', () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  let providerId: string;

  it('registers with a valid signature: 201, the signing secret once, capabilities PILOT', async () => {
    const r = await register(owner, { capabilities: [offer('upper_text')] });
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/api/v1/providers/${r.body.provider_id}`);
    expect(r.body).toMatchObject({
      name: 'Upper Co',
      address: owner.address,
      endpoint: provider.url,
      capabilities: [{ id: 'intelligence.upper_text', status: 'PILOT' }],
    });
    expect(r.body.provider_id).toMatch(/^prv_[0-9A-Z]{26}$/);
    expect(r.body.signing_secret).toMatch(/^whsec_/);
    providerId = r.body.provider_id;
    provider.setSecret(r.body.signing_secret);
    provider.signAs(owner, ['intelligence.upper_text']);
  });

  it('refuses a signature by another key, a replayed nonce, and an address that already has a provider', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const forgedBody = { name: 'Forger', endpoint: provider.url, capabilities: [offer('forged')] };
    const c = await post(`${t.url}/api/v1/providers/challenge`, { address: owner.address, action: 'register', ...forgedBody });
    const forged = await post(`${t.url}/api/v1/providers`, {
      address: owner.address,
      message: c.body.message,
      signature: await other.signMessage({ message: c.body.message }),
      ...forgedBody,
    });
    expect(forged.status).toBe(401);
    expect(forged.contentType).toMatch(/application\/problem\+json/);
    expect(forged.body.reason).toBe('bad_signature');

    const newcomer = privateKeyToAccount(generatePrivateKey());
    const onceBody = { name: 'Once', endpoint: provider.url, capabilities: [offer('once_only')] };
    const signed = await signedChallenge(newcomer, { action: 'register', ...onceBody });
    const first = await post(`${t.url}/api/v1/providers`, { ...signed, ...onceBody });
    expect(first.status).toBe(201);
    const replay = await post(`${t.url}/api/v1/providers`, { ...signed, name: 'Twice', endpoint: provider.url, capabilities: [offer('twice_only')] });
    expect(replay.status).toBe(401);
    expect(replay.body.reason).toBe('challenge_used');

    const again = await register(owner, { capabilities: [offer('another_one')] });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ reason: 'provider_exists', provider_id: providerId });
  });

  it('refuses an id clash with another provider and with a built-in capability', async () => {
    const clash = await register(privateKeyToAccount(generatePrivateKey()), { capabilities: [offer('upper_text')] });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({ reason: 'capability_exists', capability_ids: ['intelligence.upper_text'] });
    const builtin = await register(privateKeyToAccount(generatePrivateKey()), { capabilities: [offer('wallet_balances')] });
    expect(builtin.status).toBe(409);
    expect(builtin.body.reason).toBe('capability_exists');
  });

  it('refuses a bad JSON Schema, an example that does not match, an unreachable or private endpoint', async () => {
    const someone = privateKeyToAccount(generatePrivateKey());
    const badSchema = await register(someone, {
      capabilities: [offer('bad_schema', { input_schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } })],
    });
    expect(badSchema.status).toBe(400);
    expect(badSchema.body.reason).toBe('invalid_schema');
    const badExample = await register(someone, { capabilities: [offer('bad_example', { example_request: { text: 42 } })] });
    expect(badExample.status).toBe(400);
    expect(badExample.body.reason).toBe('invalid_example');
    expect(badExample.body.errors[0].path).toEqual(['capabilities', 0, 'example_request', 'text']);
    const unreachable = await register(someone, { endpoint: 'http://127.0.0.1:1/acg', capabilities: [offer('unreachable')] });
    expect(unreachable.status).toBe(422);
    expect(unreachable.body.reason).toBe('endpoint_unreachable');
    const privateHost = await register(someone, { endpoint: 'http://10.0.0.1/acg', capabilities: [offer('private_host')] });
    expect(privateHost.status).toBe(400);
    expect(privateHost.body.reason).toBe('endpoint_refused');
    // nothing of these is in the catalog
    for (const name of ['bad_schema', 'bad_example', 'unreachable', 'private_host']) expect(await registryEntry(`intelligence.${name}`)).toBeUndefined();
  });

  it('lists the capability in /registry with its schemas and provider name, LIVE once its signed probe passed', async () => {
    // a probe is sent exactly like a paid call (an exe_ id, no probe header); the test knows it by its example input
    const isProbe = (c: (typeof provider.calls)[number]) =>
      c.body.capability_id === 'intelligence.upper_text' && (c.body.input as { text?: string }).text === 'probe';
    const probes = provider.calls.filter(isProbe);
    await t.gateway.prober.probeProvider(providerId);
    const probe = provider.calls.filter(isProbe).at(-1)!;
    expect(provider.calls.filter(isProbe).length).toBeGreaterThan(probes.length);
    expect(probe.verified).toBe(true);
    expect(probe.headers['webhook-id']).toMatch(/^exe_[0-9A-Z]{26}$/);
    expect(probe.headers['webhook-id']).toBe(probe.body.execution_id);
    expect(probe.headers['x-acg-probe']).toBeUndefined();
    expect(probe.body.input).toEqual({ text: 'probe' });
    t.gateway.services.discovery.invalidate();
    const entry = await registryEntry('intelligence.upper_text');
    expect(entry).toMatchObject({
      status: 'LIVE',
      provider: 'Upper Co',
      price_base_units: PRICE.toString(),
      input_schema: inputSchema,
      output_schema: outputSchema,
      authentication: 'x402',
    });
    const openapi = (await fetch(`${t.url}/openapi.json`).then((r) => r.json())) as any;
    expect(openapi.paths['/api/v1/execute'].post.requestBody.content['application/json'].examples['intelligence.upper_text']).toBeDefined();
  });

  it('a capability whose probe fails is not LIVE', async () => {
    const someone = privateKeyToAccount(generatePrivateKey());
    answers.set('intelligence.flaky', () => ({ status: 500, body: { detail: 'down' } }));
    const r = await register(someone, { name: 'Flaky', capabilities: [offer('flaky')] });
    expect(r.status).toBe(201);
    provider.setSecret(r.body.signing_secret);
    provider.signAs(someone, ['intelligence.flaky']);
    await t.gateway.prober.probeProvider(r.body.provider_id);
    t.gateway.services.discovery.invalidate();
    expect((await registryEntry('intelligence.flaky')).status).not.toBe('LIVE');
    answers.set('intelligence.flaky', upper);
    await t.gateway.prober.probeProvider(r.body.provider_id);
    t.gateway.services.discovery.invalidate();
    expect((await registryEntry('intelligence.flaky')).status).toBe('LIVE');
  });
});

describe('paid provider calls', () => {
  const owner = privateKeyToAccount(generatePrivateKey());
  let providerId: string;

  beforeAll(async () => {
    const r = await register(owner, {
      name: 'Routing Co',
      capabilities: [offer('route_ok'), offer('route_500'), offer('route_hang'), offer('route_invalid'), offer('route_forged')],
    });
    expect(r.status).toBe(201);
    providerId = r.body.provider_id;
    provider.setSecret(r.body.signing_secret);
    provider.signAs(owner, ['intelligence.route_ok', 'intelligence.route_500', 'intelligence.route_hang', 'intelligence.route_invalid']);
    // answers to route_forged are signed by a key that is not the provider's registered address
    provider.signAs(privateKeyToAccount(generatePrivateKey()), ['intelligence.route_forged']);
    answers.set('intelligence.route_500', (c) => (isProbeCall(c) ? upper(c) : { status: 500, body: { detail: 'boom' } }));
    answers.set('intelligence.route_hang', (c) => (isProbeCall(c) ? upper(c) : 'hang'));
    answers.set('intelligence.route_invalid', (c) => (isProbeCall(c) ? upper(c) : { status: 200, body: { result: { upper: 42 } } }));
  });

  async function pay(buyerIndex: number, capability_id: string) {
    const buyer = t.stack.payment.buyers[buyerIndex];
    const res = await paidPost(buyer, `${t.url}/api/v1/execute`, { capability_id, input: { text: 'hello' } });
    return { buyer, status: res.status, body: res.body };
  }

  it('refuses input that does not match the input_schema before any payment (400 with the path)', async () => {
    const r = await post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.route_ok', input: { text: 'x', extra: 1 } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].path[0]).toBe('input');
  });

  it('a buyer paying with @x402/fetch gets the result; the provider sees a valid signature; the share is credited', async () => {
    const before = await balanceOf(t.stack.payment.buyers[3].address);
    const r = await pay(3, 'intelligence.route_ok');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCEEDED', result: { upper: 'HELLO' }, payment: { amount: PRICE.toString() } });
    expect(before - (await balanceOf(r.buyer.address))).toBe(PRICE);
    const call = provider.calls.find((c) => c.body.execution_id === r.body.execution_id)!;
    expect(call.verified).toBe(true);
    expect(call.headers['webhook-id']).toBe(r.body.execution_id);
    expect(call.body).toEqual({ capability_id: 'intelligence.route_ok', execution_id: r.body.execution_id, input: { text: 'hello' } });
    // the provider's EIP-191 signature over the result is kept in the execution record as evidence
    const stored = await readExecution(t.url, r.body.execution_id, r.buyer);
    expect(stored.provider_signature).toMatch(/^0x[0-9a-f]{130}$/);
    expect(
      await verifyMessage({
        address: owner.address,
        message: resultSignatureMessage(r.body.execution_id, resultSha256(r.body.result)),
        signature: stored.provider_signature,
      }),
    ).toBe(true);
    expect(credits.find((c) => c.execution_id === r.body.execution_id)).toEqual({
      execution_id: r.body.execution_id,
      provider_id: providerId,
      provider_address: owner.address,
      capability_id: 'intelligence.route_ok',
      payer: r.buyer.address,
      price: PRICE,
      payment_tx_hash: r.body.payment.tx_hash,
    });
  });

  it.each([
    ['intelligence.route_500', 502, 'provider_error'],
    ['intelligence.route_hang', 504, 'provider_timeout'],
    ['intelligence.route_invalid', 502, 'provider_invalid_output'],
    ['intelligence.route_forged', 502, 'provider_unsigned_result'],
  ])('%s: FAILED, refunded on-chain, nothing credited', async (capabilityId, status, code) => {
    const buyerIndex = { 'intelligence.route_500': 4, 'intelligence.route_hang': 5, 'intelligence.route_invalid': 6, 'intelligence.route_forged': 7 }[
      capabilityId
    ]!;
    const before = await balanceOf(t.stack.payment.buyers[buyerIndex].address);
    const r = await pay(buyerIndex, capabilityId);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ execution_status: 'FAILED', error: { code } });
    expect(credits.some((c) => c.execution_id === r.body.execution_id)).toBe(false);
    // the refund worker sends the price back from the treasury
    let refund: any;
    for (let i = 0; i < 100 && refund?.status !== 'sent'; i++) {
      refund = (await readExecution(t.url, r.body.execution_id, r.buyer)).refund;
      if (refund?.status !== 'sent') await new Promise((res) => setTimeout(res, 200));
    }
    expect(refund).toMatchObject({ status: 'sent', amount: PRICE.toString() });
    expect(await balanceOf(r.buyer.address)).toBe(before);
  });

  it('counts calls and failures per provider capability, shown in /status/health', async () => {
    const counts = await t.gateway.services.providers.store.counts('intelligence.route_500');
    expect(counts.failures).toBeGreaterThanOrEqual(1);
    expect(counts.calls).toBeGreaterThanOrEqual(counts.failures);
    t.gateway.services.discovery.invalidate();
    const health = (await fetch(`${t.url}/status/health`).then((r) => r.json())) as any;
    const entry = health.capabilities.find((c: any) => c.id === 'intelligence.route_500');
    expect(entry.provider).toEqual({ name: 'Routing Co', ...counts });
    expect(entry.latency_ms.samples).toBeGreaterThan(0);
    expect(health.capabilities.find((c: any) => c.id === 'intelligence.wallet_balances').provider).toBeUndefined();
  });

  it('a retired provider leaves the catalog at once; execute answers 404', async () => {
    const c = await post(`${t.url}/api/v1/providers/challenge`, { address: owner.address, action: 'retire', provider_id: providerId });
    const q = new URLSearchParams({ address: owner.address, message: c.body.message, signature: await owner.signMessage({ message: c.body.message }) });
    const res = await fetch(`${t.url}/api/v1/providers/${providerId}?${q}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ provider_id: providerId, status: 'retired' });
    const r = await post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.route_ok', input: { text: 'x' } });
    expect(r.status).toBe(404);
    t.gateway.services.discovery.invalidate();
    expect(await registryEntry('intelligence.route_ok')).toBeUndefined();
  });
});
