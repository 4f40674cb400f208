import { decodePaymentRequiredHeader } from '@x402/core/http';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { type DiscoveryExtension, type DiscoveryResource, validateDiscoveryExtension, withBazaar } from '@x402/extensions/bazaar';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { gatewayJobs } from '@acg/capabilities';
import { mcpToolName } from '@acg/schemas';
import { post } from './x402.js';

/**
 * `GET /discovery/resources` (apps/gateway README "Discovery for indexers"), read by the official
 * bazaar discovery client of @x402/extensions over a real gateway (anvil, Redis): every paid
 * resource is listed with the terms its live 402 gives, pages add up to the full list, bad query
 * parameters are 400 problems, and the document is cached like /registry.
 */

const t = useTestGateway();
let client: ReturnType<typeof withBazaar<HTTPFacilitatorClient>>;

beforeAll(async () => {
  client = withBazaar(new HTTPFacilitatorClient({ url: t.url }));
});

/** Every resource, read page by page with the official client (`limit` per page). */
async function allPages(limit: number, type?: string): Promise<DiscoveryResource[]> {
  const items: DiscoveryResource[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await client.extensions.bazaar.listResources({ limit, offset, ...(type ? { type } : {}) });
    expect(page.pagination).toMatchObject({ limit, offset });
    items.push(...page.items);
    if (offset + limit >= page.pagination.total) {
      expect(items).toHaveLength(page.pagination.total);
      return items;
    }
    expect(page.items).toHaveLength(limit);
  }
}

const key = (r: DiscoveryResource) => `${r.type} ${r.resource} ${JSON.stringify((r as { metadata?: unknown }).metadata)}`;

describe('GET /discovery/resources with the official bazaar client', () => {
  it('lists every paid resource: execute and an MCP tool per executable capability, jobs, deposit, liquidation search and plans', async () => {
    const page = await client.extensions.bazaar.listResources({ limit: 100 });
    expect(page.x402Version).toBe(2);
    expect(page.pagination).toEqual({ limit: 100, offset: 0, total: page.items.length });
    const executables = t.gateway.services.catalog.executable().map((d) => d.id);
    expect(executables.length).toBeGreaterThan(2);
    const meta = (r: DiscoveryResource) => (r as unknown as { metadata: Record<string, any> }).metadata;
    const execute = page.items.filter((r) => r.resource === t.executeUrl);
    expect(execute.map((r) => meta(r).capability_id).sort()).toEqual([...executables].sort());
    const tools = page.items.filter((r) => r.type === 'mcp');
    expect(tools.map((r) => meta(r).toolName).sort()).toEqual(executables.map((id) => mcpToolName(id)).sort());
    for (const r of tools) expect(r.resource).toBe(`${t.url}/mcp`);
    for (const path of ['/api/v1/jobs', '/v1/account/deposit', '/v1/liquidation-search', '/v1/liquidation-plans']) {
      expect(
        page.items.filter((r) => r.resource === `${t.url}${path}`),
        path,
      ).toHaveLength(1);
    }
    expect(page.items).toHaveLength(2 * executables.length + 4);
    for (const r of page.items) {
      expect(r.x402Version).toBe(2);
      expect(Number.isNaN(Date.parse(r.lastUpdated))).toBe(false);
      // the jobs 402 offers `upto` after `exact` (the budget its ceiling, the jobs' window); the others `exact` alone here
      const jobs = r.resource === `${t.url}/api/v1/jobs`;
      expect(r.accepts.map((a) => a.scheme)).toEqual(jobs ? ['exact', 'upto'] : ['exact']);
      expect(r.accepts[0]).toEqual(t.gateway.services.paywall.requirements(BigInt(r.accepts[0].amount)));
      const bazaar = r.extensions?.bazaar as DiscoveryExtension;
      expect(validateDiscoveryExtension(bazaar), key(r)).toEqual({ valid: true });
      expect(meta(r).input).toEqual(bazaar.info.input);
    }
  });

  it('gives the terms and bazaar declaration of the live 402', async () => {
    const page = await client.extensions.bazaar.listResources({ limit: 100 });
    const item = page.items.find(
      (r) => r.resource === t.executeUrl && (r as unknown as { metadata: { capability_id: string } }).metadata.capability_id === 'intelligence.wallet_balances',
    )!;
    const live = await post(t.executeUrl, {
      capability_id: 'intelligence.wallet_balances',
      input: { address: t.stack.payment.buyers[0].address, chain: 'base' },
    });
    const required = decodePaymentRequiredHeader(live.headers.get('payment-required')!);
    expect(item.accepts).toEqual(required.accepts);
    expect(item.extensions?.bazaar).toEqual(required.extensions?.bazaar);
    expect((item as unknown as { metadata: { inputSchema: object; outputSchema: object } }).metadata).toMatchObject({
      inputSchema: expect.objectContaining({ type: 'object' }),
      outputSchema: expect.any(Object),
    });
  });

  it('lists the jobs resource with the schemes and terms of its live 402: exact, then upto with the jobs window', async () => {
    const page = await client.extensions.bazaar.listResources({ limit: 100 });
    const item = page.items.find((r) => r.resource === `${t.url}/api/v1/jobs`)!;
    const live = await post(`${t.url}/api/v1/jobs`, gatewayJobs.example.request);
    expect(live.status).toBe(402);
    const required = decodePaymentRequiredHeader(live.headers.get('payment-required')!);
    expect(required.accepts.map((a) => a.scheme)).toEqual(['exact', 'upto']);
    expect(item.accepts).toEqual(required.accepts);
    expect(item.accepts[1].maxTimeoutSeconds).toBe(t.gateway.services.config.payment.jobUptoMaxTimeoutSeconds);
    expect(item.extensions?.bazaar).toEqual(required.extensions?.bazaar);
    // the official client's scheme filter finds it among the upto resources
    const upto = await client.extensions.bazaar.listResources({ limit: 100, scheme: 'upto' });
    expect(upto.items.map((r) => r.resource)).toContain(`${t.url}/api/v1/jobs`);
  });

  it('pages add up to the full list (limit and offset), with a type filter too', async () => {
    const full = (await client.extensions.bazaar.listResources({ limit: 100 })).items;
    expect((await allPages(3)).map(key)).toEqual(full.map(key));
    expect((await allPages(7)).map(key)).toEqual(full.map(key));
    const mcp = await allPages(2, 'mcp');
    expect(mcp.map(key)).toEqual(full.filter((r) => r.type === 'mcp').map(key));
    expect((await client.extensions.bazaar.listResources({ type: 'http', limit: 100 })).items.every((r) => r.type === 'http')).toBe(true);
    expect((await client.extensions.bazaar.listResources({ type: 'a2a' })).pagination.total).toBe(0);
    const past = await client.extensions.bazaar.listResources({ limit: 5, offset: full.length });
    expect(past).toMatchObject({ items: [], pagination: { limit: 5, offset: full.length, total: full.length } });
  });

  it('defaults to limit 20, offset 0 (x402 specification v2 §8.1)', async () => {
    const page = await client.extensions.bazaar.listResources();
    expect(page.pagination.limit).toBe(20);
    expect(page.pagination.offset).toBe(0);
    expect(page.items).toHaveLength(Math.min(20, page.pagination.total));
  });

  it('refuses a bad limit or offset with a 400 problem (and the official client throws)', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=2.5', 'offset=-1', 'offset=x', 'type=HTTP%20X']) {
      const res = await fetch(`${t.url}/discovery/resources?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.headers.get('content-type'), q).toContain('application/problem+json');
      expect(await res.json(), q).toMatchObject({ status: 400 });
    }
    await expect(client.extensions.bazaar.listResources({ limit: 101 })).rejects.toThrow(/\(400\)/);
  });

  it('is cached like /registry: public 60 s, ETag, 304 on If-None-Match', async () => {
    const first = await fetch(`${t.url}/discovery/resources?limit=5`);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await fetch(`${t.url}/discovery/resources?limit=5`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const other = await fetch(`${t.url}/discovery/resources?limit=6`, { headers: { 'if-none-match': etag } });
    expect(other.status).toBe(200);
  });

  it('is in the OpenAPI document, /llms.txt and the sitemap', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, unknown> } }>;
    };
    const op = doc.paths['/discovery/resources'].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['type', 'limit', 'offset']));
    expect(op.responses['400']).toBeDefined();
    expect(await (await fetch(`${t.url}/llms.txt`)).text()).toContain(`${t.url}/discovery/resources`);
    expect(await (await fetch(`${t.url}/sitemap.xml`)).text()).toContain(`<loc>${t.url}/discovery/resources</loc>`);
  });
});
