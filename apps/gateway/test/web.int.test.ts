import { LatencySeriesDocument } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { asset } from '../src/web/assets.js';
import { isProblem, rawRequest, type RawResult } from './rawHttp.js';

/**
 * The web pages' HTTP edge (docs/decisions.md "Web pages for people"): content negotiation (browsers get
 * HTML, API clients keep their JSON answers), the route table's 404/405/HEAD for the new paths,
 * favicon, robots.txt and the offline assets. What the pages show is tested in Chromium
 * (web.browser.int.test.ts).
 */

const t = useTestGateway({ config: { rateLimitPerSecond: 0 } });

/** What Chromium sends for a navigation. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';

async function send(method: string, path: string, headers: Record<string, string> = {}) {
  const r: RawResult = await rawRequest(t.url, { method, path, headers });
  if (r.kind !== 'answer') throw new Error(`no answer: ${JSON.stringify(r)}`);
  return r;
}

describe('content negotiation', () => {
  it('serves the catalog page at / to a browser and the JSON 404 to every API client', async () => {
    const page = await send('GET', '/', { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers.vary).toBe('Accept');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.text).toMatch(/^<!doctype html>/);
    expect(page.text).toContain('<main id="main"');
    for (const accept of [undefined, '*/*', 'application/json', 'application/problem+json, application/json', 'text/*;q=0.1, application/json']) {
      const r = await send('GET', '/', accept ? { accept } : {});
      expect(r.status, String(accept)).toBe(404);
      expect(r.headers['content-type'], String(accept)).toBe('application/problem+json');
      expect(r.headers.vary).toBe('Accept');
      expect(isProblem(r.text, 404), String(accept)).toBe(true);
    }
  });

  it('keeps /status/health JSON for browsers too, while /status is a page', async () => {
    const health = await send('GET', '/status/health', { accept: BROWSER_ACCEPT });
    expect(health.status).toBe(200);
    expect(health.headers['content-type']).toBe('application/json');
    expect(JSON.parse(health.text)).toHaveProperty('operational_status');
    const page = await send('GET', '/status', { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const api = await send('GET', '/status', { accept: 'application/json' });
    expect(api.status).toBe(404);
    expect(isProblem(api.text, 404)).toBe(true);
    for (const path of ['/registry', '/gateway-catalog.json', '/openapi.json']) {
      const r = await send('GET', path, { accept: BROWSER_ACCEPT });
      expect(r.status, path).toBe(200);
      expect(r.headers['content-type'], path).toBe('application/json');
    }
  });

  it('answers an unknown path and an unknown capability with an HTML 404 page to a browser and problem+json to others', async () => {
    for (const path of ['/no-such-page', '/capabilities/nope.nothing']) {
      const html = await send('GET', path, { accept: BROWSER_ACCEPT });
      expect(html.status, path).toBe(404);
      expect(html.headers['content-type'], path).toBe('text/html; charset=utf-8');
      expect(html.text).toContain('Not found');
      const json = await send('GET', path);
      expect(json.status, path).toBe(404);
      expect(isProblem(json.text, 404), path).toBe(true);
    }
  });

  it('escapes what the request puts on a page', async () => {
    const r = await send('GET', `/capabilities/${encodeURIComponent('<script>alert(1)</script>')}`, { accept: BROWSER_ACCEPT });
    expect(r.status).toBe(404);
    expect(r.text).not.toContain('<script>alert(1)');
    expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const q = await send('GET', `/?q=${encodeURIComponent('"><img src=x onerror=alert(1)>')}`, { accept: BROWSER_ACCEPT });
    expect(q.status).toBe(200);
    expect(q.text).not.toContain('<img src=x');
    expect(q.text).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('route table', () => {
  it('answers other methods on the pages and files with 405 and Allow, and HEAD like GET without a body', async () => {
    for (const path of ['/', '/status', '/capabilities/gateway.execute', '/favicon.ico', '/robots.txt', '/assets/site.css']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const r = await send(method, path);
        expect(r.status, `${method} ${path}`).toBe(405);
        expect(r.headers.allow, path).toBe('GET, HEAD, OPTIONS');
        expect(isProblem(r.text, 405), path).toBe(true);
      }
    }
    const head = await send('HEAD', '/', { accept: BROWSER_ACCEPT });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.text).toBe('');
    const options = await send('OPTIONS', '/');
    expect(options.status).toBe(204);
  });
});

describe('/status/series', () => {
  it('serves the last hour per minute from samples stored as probes run, as JSON to every client, documented in the OpenAPI', async () => {
    t.gateway.services.discovery.invalidate();
    const before = LatencySeriesDocument.parse(JSON.parse((await send('GET', '/status/series')).text));
    const probed = before.capabilities.find((c) => c.id === 'gateway.health')!;
    await t.gateway.prober.runOnce();
    t.gateway.services.discovery.invalidate();
    const r = await send('GET', '/status/series', { accept: BROWSER_ACCEPT });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['cache-control']).toBe('no-store');
    const doc = LatencySeriesDocument.parse(JSON.parse(r.text));
    expect(doc.bucket_seconds).toBe(60);
    expect(doc.window_minutes).toBe(60);
    const after = doc.capabilities.find((c) => c.id === 'gateway.health')!;
    expect(after.source).toBe('executions_and_probes');
    expect(after.points).toHaveLength(60);
    // one more probe: one more sample in the hour, and in the health document's count
    expect(after.window.samples).toBe(probed.window.samples + 1);
    const health = JSON.parse((await send('GET', '/status/health')).text);
    expect(health.capabilities.find((c: { id: string }) => c.id === 'gateway.health').latency_ms).toEqual(after.window);
    // minutes oldest first, one apart, the current one last
    const ts = after.points.map((p) => p.t);
    expect(ts.every((v, i) => i === 0 || v - ts[i - 1] === 60)).toBe(true);
    expect(ts.at(-1)).toBe(Math.floor(Date.parse(doc.generated_at) / 60_000) * 60);
    expect(after.points.reduce((n, p) => n + p.samples, 0)).toBe(after.window.samples);
    // the wallet monitor's latency is its webhook deliveries, as in /status/health
    expect(doc.capabilities.find((c) => c.id === 'intelligence.wallet_monitor')?.source).toBe('webhook_deliveries');
    const openapi = JSON.parse((await send('GET', '/openapi.json')).text);
    expect(openapi.paths['/status/series']?.get).toBeDefined();
  });
});

describe('files', () => {
  it('serves a real icon at /favicon.ico and /favicon.svg', async () => {
    const ico = await rawBytes('/favicon.ico');
    expect(ico.type).toBe('image/x-icon');
    // ICONDIR: reserved 0, type 1 (icon), at least one image; the image is a PNG
    expect([...ico.body.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(ico.body.readUInt16LE(4)).toBeGreaterThanOrEqual(1);
    expect(ico.body.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
    const svg = await send('GET', '/favicon.svg');
    expect(svg.status).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.text).toContain('<svg');
  });

  it('serves robots.txt allowing the pages and the discovery documents, with the sitemap', async () => {
    const r = await send('GET', '/robots.txt');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    const lines = r.text.split('\n');
    expect(lines[0]).toBe('User-agent: *');
    for (const path of [
      '/',
      '/capabilities/',
      '/status',
      '/registry',
      '/gateway-catalog.json',
      '/openapi.json',
      '/llms.txt',
      '/sitemap.xml',
      '/status/health',
    ]) {
      expect(lines, path).toContain(`Allow: ${path}`);
    }
    for (const path of ['/api/', '/trpc/', '/mcp']) expect(lines, path).toContain(`Disallow: ${path}`);
    expect(lines).toContain(`Sitemap: ${t.url}/sitemap.xml`);
  });

  it('serves uPlot from its npm package with caching headers, versioned URLs immutable, and 304 on a matching ETag', async () => {
    const js = asset('uplot.min.js');
    expect(js).toBeDefined();
    const plain = await send('GET', '/assets/uplot.min.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=3600');
    expect(plain.text).toContain('uPlot');
    const versioned = await send('GET', js!.url);
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(versioned.headers.etag).toBe(js!.etag);
    const again = await send('GET', '/assets/uplot.min.js', { 'if-none-match': js!.etag });
    expect(again.status).toBe(304);
    const css = await send('GET', '/assets/uplot.min.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const unknown = await send('GET', '/assets/nope.js');
    expect(unknown.status).toBe(404);
    expect(isProblem(unknown.text, 404)).toBe(true);
    const traversal = await send('GET', '/assets/..%2Fpackage.json');
    expect(traversal.status).toBe(404);
  });
});

async function rawBytes(path: string): Promise<{ type: string | null; body: Buffer }> {
  const res = await fetch(`${t.url}${path}`);
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

describe('a capability page after a probe', () => {
  it('says the capability itself ran when the probe ran a built-in on the gateway, and only the challenge otherwise', async () => {
    await t.gateway.prober.runOnce();
    const records = await t.gateway.services.probes.all();
    // wallet_balances: the x402 challenge and a real balance read; gateway.execute: the challenge alone
    expect(records['intelligence.wallet_balances']).toMatchObject({ ok: true, ran: true, probe: { status: 402 } });
    expect(records['gateway.execute']).toMatchObject({ ok: true, probe: { status: 402 } });
    expect(records['gateway.execute']!.ran).toBeUndefined();
    t.gateway.services.discovery.invalidate();
    const meaning = async (id: string) => {
      const page = (await send('GET', `/capabilities/${id}`, { accept: BROWSER_ACCEPT })).text;
      return /<p data-field="status-meaning">([\s\S]*?)<\/p>/.exec(page)?.[1] ?? '';
    };
    expect(await meaning('intelligence.wallet_balances')).toContain('the capability itself ran on the gateway with a valid result');
    const execute = await meaning('gateway.execute');
    expect(execute).toContain('no paid call was made');
    expect(execute).not.toContain('the capability itself ran');
  });

  it('says on a paid capability page which x402 scheme suits which caller', async () => {
    const page = (await send('GET', '/capabilities/intelligence.wallet_balances', { accept: BROWSER_ACCEPT })).text;
    const schemes = /<dd data-field="payment-schemes">([\s\S]*?)<\/dd>/.exec(page)?.[1] ?? '';
    expect(schemes).toContain('<code>exact</code> for one-off calls');
    expect(schemes).toContain('<code>upto</code> (where the 402 offers it) for calls whose cost is known only afterwards');
    expect(schemes).toContain('<code>batch-settlement</code> (where the 402 offers it) for many small calls from one agent');
  });
});
