import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerView } from '../../src/routers/providers.js';
import { startTestGateway, type TestGateway } from '../harness.js';
import { echoCapability, registerTestProvider, startTestProvider, type TestProvider } from '../providerServer.js';

/**
 * Attack (issue 23 item 9): `/registry` (`evidence.probe.url`) and `/capabilities/{id}` published
 * each provider's own endpoint, so anyone could bypass the gateway or flood the provider. Now every
 * public document shows the gateway's URL and the probe's result only; the endpoint stays on the
 * provider's own (bearer) view.
 */

let t: TestGateway;
let provider: TestProvider;
const owner = privateKeyToAccount(generatePrivateKey());
const ID = 'intelligence.private_echo';

beforeAll(async () => {
  provider = await startTestProvider(() => ({ status: 200, body: { result: { text: 'ok' } } }));
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
  const registered = await registerTestProvider(t.url, owner, provider, {
    name: 'Private Co',
    endpoint: `${provider.url}/secret-path`,
    capabilities: [echoCapability('private_echo')],
  });
  await t.gateway.services.providers.directory.reload();
  await t.gateway.prober.probeProvider(registered.provider_id);
  t.gateway.services.discovery.invalidate();
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

const text = (path: string, accept = 'application/json') =>
  fetch(`${t.url}${path}`, { headers: { accept, 'cache-control': 'no-cache' } }).then(async (r) => ({ status: r.status, body: await r.text() }));

describe("a provider's private endpoint", () => {
  it('is in no public document; the probe evidence names the gateway URL and the probe result', async () => {
    const hostPort = new URL(provider.url).host;
    const registry = await text('/registry');
    expect(registry.status).toBe(200);
    const entry = (JSON.parse(registry.body).capabilities as any[]).find((c) => c.id === ID);
    expect(entry.status).toBe('LIVE');
    expect(entry.endpoint).toBe(`${t.url}/api/v1/execute`);
    expect(entry.evidence.probe).toMatchObject({
      url: `${t.url}/api/v1/execute`,
      method: 'POST',
      status: 200,
      body_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    const documents = await Promise.all([
      Promise.resolve(registry),
      text(`/capabilities/${ID}`, 'text/html'),
      text('/gateway-catalog.json'),
      text('/llms.txt', 'text/plain'),
      text('/openapi.json'),
      text('/status/health'),
    ]);
    for (const d of documents) {
      expect(d.status, d.body.slice(0, 200)).toBe(200);
      expect(d.body).not.toContain(hostPort);
      expect(d.body).not.toContain('secret-path');
    }
    expect(documents[1].body).toContain(`${t.url}/api/v1/execute`);

    const client = new Client({ name: 'privacy-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const tools = JSON.stringify(await client.listTools());
      expect(tools).toContain('private_echo');
      expect(tools).not.toContain(hostPort);
    } finally {
      await client.close();
    }
  });

  it("stays on the provider's own view (GET /api/v1/providers/{id} with its bearer token, and its dashboard)", async () => {
    const record = await t.gateway.services.providers.store.byAddress(owner.address);
    expect(record).toBeDefined();
    const view = await providerView(t.gateway.services, record!);
    expect(view.endpoint).toBe(`${provider.url}/secret-path`);
    // and that view is behind the bearer token: anonymous gets 401
    expect((await text(`/api/v1/providers/${record!.provider_id}`)).status).toBe(401);
  });
});
