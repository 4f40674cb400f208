import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.js';
import { echoCapability as offer, registerProvider, startTestProvider } from '../providerServer.js';
import { post } from '../x402.js';

/**
 * Attack (issue 23 item 8): a signature collected for "register" also worked, for 10 minutes, for
 * PUT (a new endpoint and a new signing secret) or DELETE. Now a challenge names the action, the
 * provider and the SHA-256 of the body it authorizes; used for anything else it is refused with a
 * 403 problem (`challenge_mismatch`), burnt, and the provider is left exactly as it was.
 */

let t: TestGateway;
let provider: Awaited<ReturnType<typeof startTestProvider>>;
let evil: Awaited<ReturnType<typeof startTestProvider>>;
const owner = privateKeyToAccount(generatePrivateKey());
let providerId: string;

beforeAll(async () => {
  provider = await startTestProvider(() => ({ status: 200, body: { result: { text: 'ok' } } }));
  evil = await startTestProvider(() => ({ status: 200, body: { result: { text: 'evil' } } }));
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
  const r = await registerProvider(t.url, owner, { name: 'Bound Co', endpoint: provider.url, capabilities: [offer('bound_echo')] });
  expect(r.status).toBe(201);
  providerId = r.body.provider_id;
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
  await evil?.close();
});

/** A challenge for `scope`, signed by `account`. */
async function signed(account: PrivateKeyAccount, scope: Record<string, unknown>) {
  const c = await post(`${t.url}/api/v1/providers/challenge`, { address: account.address, ...scope });
  expect(c.status).toBe(200);
  return { address: account.address, message: c.body.message as string, signature: await account.signMessage({ message: c.body.message }) };
}
const put = (body: unknown) =>
  fetch(`${t.url}/api/v1/providers/${providerId}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
    async (r) => ({ status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as any }),
  );
const del = (s: { address: string; message: string; signature: string }) =>
  fetch(`${t.url}/api/v1/providers/${providerId}?${new URLSearchParams(s)}`, { method: 'DELETE' }).then(async (r) => ({
    status: r.status,
    type: r.headers.get('content-type'),
    body: (await r.json()) as any,
  }));
const stored = () => t.gateway.services.providers.store.get(providerId);

describe('a provider challenge used for another action or body', () => {
  it('a register challenge is refused for PUT and DELETE (403), burnt, and the provider is unchanged', async () => {
    const before = await stored();
    const hijack = { name: 'Hijacked', endpoint: evil.url, capabilities: [offer('bound_echo')] };
    // a register challenge the owner signed (e.g. for a registration it never sent)
    const forRegister = await signed(owner, { action: 'register', ...hijack });
    const asPut = await put({ ...forRegister, ...hijack });
    expect(asPut.status).toBe(403);
    expect(asPut.type).toMatch(/application\/problem\+json/);
    expect(asPut.body).toMatchObject({ reason: 'challenge_mismatch', signed_action: 'register' });
    // burnt by the mismatch: not usable for anything afterwards
    expect((await del(forRegister)).body.reason).toBe('challenge_used');

    const forRegister2 = await signed(owner, { action: 'register', ...hijack });
    const asDelete = await del(forRegister2);
    expect(asDelete.status).toBe(403);
    expect(asDelete.body.reason).toBe('challenge_mismatch');

    const after = await stored();
    expect(after).toEqual(before);
    expect(after?.status).toBe('active');
    expect(after?.endpoint).toBe(provider.url);
  });

  it('an update challenge for one body is refused for another body, and for retirement; a retire challenge is refused for PUT', async () => {
    const before = await stored();
    const agreed = { name: 'Bound Co', endpoint: provider.url, capabilities: [offer('bound_echo')] };
    const forUpdate = await signed(owner, { action: 'update', provider_id: providerId, ...agreed });
    const swapped = await put({ ...forUpdate, ...agreed, endpoint: evil.url });
    expect(swapped.status).toBe(403);
    expect(swapped.body.reason).toBe('challenge_mismatch');

    const forUpdate2 = await signed(owner, { action: 'update', provider_id: providerId, ...agreed });
    expect((await del(forUpdate2)).body.reason).toBe('challenge_mismatch');

    const forRetire = await signed(owner, { action: 'retire', provider_id: providerId });
    const retireAsPut = await put({ ...forRetire, ...agreed, endpoint: evil.url });
    expect(retireAsPut.status).toBe(403);
    expect(retireAsPut.body.reason).toBe('challenge_mismatch');
    expect(await stored()).toEqual(before);
    expect(evil.calls).toEqual([]);
  });

  it('a challenge for another provider id is refused; the right challenge for the right body still works', async () => {
    const agreed = { name: 'Bound Co Two', endpoint: provider.url, capabilities: [offer('bound_echo')] };
    const other = await signed(owner, { action: 'update', provider_id: 'prv_01JABCDEFGHJKMNPQRSTVWXYZ0', ...agreed });
    expect((await put({ ...other, ...agreed })).body.reason).toBe('challenge_mismatch');

    const right = await signed(owner, { action: 'update', provider_id: providerId, ...agreed });
    const ok = await put({ ...right, ...agreed });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ provider_id: providerId, name: 'Bound Co Two' });
    const retire = await signed(owner, { action: 'retire', provider_id: providerId });
    expect((await del(retire)).status).toBe(200);
    expect((await stored())?.status).toBe('retired');
  });

  it('a challenge request must name its action and carry exactly the fields that action authorizes (400)', async () => {
    for (const body of [
      { address: owner.address },
      { address: owner.address, action: 'register' },
      { address: owner.address, action: 'retire' },
      { address: owner.address, action: 'register', provider_id: providerId, name: 'x', endpoint: provider.url, capabilities: [offer('x')] },
    ]) {
      const r = await post(`${t.url}/api/v1/providers/challenge`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });
});
