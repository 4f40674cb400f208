import SwaggerParser from '@apidevtools/swagger-parser';
import { registryDocumentJsonSchema } from '@acg/schemas';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { SPEC_2_3_FIELDS } from '../../../packages/registry/test/legacyRegistryFields.js';

const t = useTestGateway();

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${t.url}${path}`, { headers });
  return { res, text: await res.text() };
};

describe('discovery documents', () => {
  it('serves /gateway-catalog.json valid against the JSON Schema 2020-12 of docs/spec-notes.md 2.1, with honest statuses', async () => {
    const { res, text } = await get('/gateway-catalog.json');
    expect(res.status).toBe(200);
    const doc = JSON.parse(text);
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(registryDocumentJsonSchema());
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    const byId = Object.fromEntries(doc.capabilities.map((c: { id: string }) => [c.id, c]));
    for (const id of [
      'gateway.execute',
      'gateway.jobs',
      'gateway.registry',
      'gateway.health',
      'gateway.providers',
      'builder.send_bundle',
      'mev.liquidation_plan',
      'mev.liquidation_search',
      'intelligence.wallet_monitor',
      'intelligence.wallet_balances',
    ]) {
      expect(byId[id], id).toBeDefined();
    }
    // probed at startup: LIVE with evidence of the probe; not built: PLANNED
    expect(byId['intelligence.wallet_balances'].status).toBe('LIVE');
    expect(byId['intelligence.wallet_balances'].evidence.probe).toMatchObject({ method: 'POST', status: 402 });
    expect(byId['intelligence.wallet_balances'].evidence.probe.body_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(byId['gateway.registry'].status).toBe('LIVE');
    // provider onboarding is probed by a real challenge request
    expect(byId['gateway.providers'].status).toBe('LIVE');
    expect(byId['gateway.providers'].evidence.probe).toMatchObject({ method: 'POST', status: 200 });
    // a schema-valid document with an extra property is refused (no extra properties, docs/spec-notes.md 2.1)
    expect(validate({ ...doc, extra: 1 })).toBe(false);
  });

  it('sends Cache-Control 60 s and an ETag, and answers 304 to If-None-Match', async () => {
    for (const path of ['/gateway-catalog.json', '/registry']) {
      const { res } = await get(path);
      expect(res.headers.get('cache-control')).toBe('public, max-age=60');
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^".+"$/);
      const again = await get(path, { 'if-none-match': etag! });
      expect(again.res.status).toBe(304);
      expect(again.text).toBe('');
    }
  });

  it('serves /registry with the docs/spec-notes.md 2.3 fields per capability and a working example_request', async () => {
    const { res, text } = await get('/registry');
    expect(res.status).toBe(200);
    const doc = JSON.parse(text);
    expect(doc.network).toBeDefined();
    const entry = doc.capabilities.find((c: { id: string }) => c.id === 'intelligence.wallet_balances');
    for (const field of SPEC_2_3_FIELDS) {
      expect(entry, field).toHaveProperty(field);
    }
    expect(entry).toMatchObject({ price: '0.001', price_base_units: '1000', currency: 'USDC', authentication: 'x402' });
    // the example request is executable: unpaid it gets the 402 challenge for exactly the advertised price
    const r = await fetch(t.executeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(entry.example_request),
    });
    expect(r.status).toBe(402);
    expect(((await r.json()) as { maxAmountRequired: string }).maxAmountRequired).toBe(entry.price_base_units);
  });

  it('serves an OpenAPI 3.0 document that validates and lists the spec paths', async () => {
    const { res, text } = await get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = JSON.parse(text);
    expect(doc.openapi).toMatch(/^3\.0\./);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
    for (const path of ['/api/v1/execute', '/registry', '/gateway-catalog.json', '/status/health', '/api/v1/executions/{execution_id}']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/api/v1/execute'].post.responses['402']).toBeDefined();
  });

  it('serves /llms.txt in llmstxt.org form and a well-formed /sitemap.xml', async () => {
    const llms = await get('/llms.txt');
    expect(llms.res.headers.get('content-type')).toContain('text/plain');
    expect(llms.text.startsWith('# ')).toBe(true);
    expect(llms.text).toMatch(/^> /m);
    expect(llms.text).toContain(`${t.url}/registry`);
    expect(llms.text).toContain('intelligence.wallet_balances');
    const sitemap = await get('/sitemap.xml');
    expect(sitemap.res.headers.get('content-type')).toContain('application/xml');
    expect(sitemap.text).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    expect(sitemap.text).toContain(`<loc>${t.url}/gateway-catalog.json</loc>`);
    // every URL is dated: the catalog's generated_at, the health document's
    const catalog = JSON.parse((await get('/gateway-catalog.json')).text);
    expect(sitemap.text).toContain(`<loc>${t.url}/gateway-catalog.json</loc><lastmod>${catalog.generated_at}</lastmod>`);
    expect([...sitemap.text.matchAll(/<url><loc>[^<]+<\/loc><lastmod>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z<\/lastmod>/g)]).toHaveLength(6);
    expect(sitemap.text).toContain(`<loc>${t.url}/discovery/resources</loc>`);
    expect(llms.text).toContain(`${t.url}/discovery/resources`);
  });

  it('serves /status/health from real measurements, not cached by clients', async () => {
    const { res, text } = await get('/status/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const doc = JSON.parse(text);
    const wb = doc.capabilities.find((c: { id: string }) => c.id === 'intelligence.wallet_balances');
    expect(wb.status).toBe('up');
    expect(wb.latency_ms.samples).toBeGreaterThan(0);
    expect(wb.latency_ms.p50).toBeGreaterThan(0);
    const providers = doc.capabilities.find((c: { id: string }) => c.id === 'gateway.providers');
    expect(providers.status).toBe('up');
    expect(providers.latency_ms.samples).toBeGreaterThan(0);
    expect(doc.builder).toBeNull();
  });

  it('answers the native tRPC endpoint too', async () => {
    const { res, text } = await get('/trpc/discovery.registry?input=%7B%7D');
    expect(res.status).toBe(200);
    expect(JSON.parse(text).result.data.capabilities.length).toBeGreaterThan(0);
  });

  it('answers unknown paths with a 404 problem', async () => {
    const { res, text } = await get('/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.parse(text)).toMatchObject({ status: 404, title: 'Not Found' });
  });
});
