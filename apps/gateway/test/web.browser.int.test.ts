import { BuilderStats } from '@acg/bundles';
import type { HealthDocument, LatencySeriesDocument, LegacyRegistry } from '@acg/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeCheck, horizontalOverflow, openBrowser, VIEWPORTS, type TestBrowser } from './browser/chromium.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { challenge, officialPayload, paymentHeader, post } from './x402.js';

/**
 * The web pages in headless Chromium (docs/decisions.md "Web pages for people"): what each page shows
 * against the JSON documents it is built from, the filters, axe-core (no serious or critical
 * violation) and both widths (375 px and 1280 px, no sideways scrolling).
 */

let t: TestGateway;
let browser: TestBrowser;
beforeAll(async () => {
  t = await startTestGateway({ config: { rateLimitPerSecond: 0 } });
  // one probe round: LIVE and STALE statuses with evidence, and the first latency samples
  await t.gateway.prober.runOnce();
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** /registry, its capabilities in the catalog page's order: what can be bought first, then the gateway's own entries (product `gateway`). */
async function registry(): Promise<LegacyRegistry> {
  const doc = (await (await fetch(`${t.url}/registry`)).json()) as LegacyRegistry;
  const infrastructure = (c: LegacyRegistry['capabilities'][number]) => c.product === 'gateway';
  return { ...doc, capabilities: [...doc.capabilities.filter((c) => !infrastructure(c)), ...doc.capabilities.filter(infrastructure)] };
}

/** The capability ids and statuses of the catalog cards that are visible now. */
async function visibleCards(page: Awaited<ReturnType<TestBrowser['newPage']>>): Promise<{ id: string; status: string }[]> {
  return page.$$eval('#catalog [data-capability]', (cards) =>
    cards
      .filter((c) => !c.hasAttribute('hidden'))
      .map((c) => ({ id: c.getAttribute('data-capability') ?? '', status: c.querySelector('[data-status]')?.textContent?.trim() ?? '' })),
  );
}

describe('catalog (/)', () => {
  it('lists every capability of /registry with the same statuses, each linking to its page', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/`);
    const doc = await registry();
    expect(await visibleCards(page)).toEqual(doc.capabilities.map((c) => ({ id: c.id, status: c.status })));
    // the first card is one you can buy; the gateway's own entries are grouped apart, after them
    expect(doc.capabilities[0]?.product).not.toBe('gateway');
    expect(await page.textContent('#buyable-title')).toBe('Capabilities you can buy');
    const products = (list: string) =>
      page.$$eval(`#catalog ul[aria-labelledby="${list}"] [data-capability]`, (cards) => cards.map((c) => c.getAttribute('data-product')));
    expect(await products('buyable-title')).not.toContain('gateway');
    expect(new Set(await products('infrastructure-title'))).toEqual(new Set(['gateway']));
    for (const c of doc.capabilities) {
      const href = await page.getAttribute(`[data-capability="${c.id}"] h3 a`, 'href');
      expect(href).toBe(`/capabilities/${encodeURIComponent(c.id)}`);
    }
    expect(await page.textContent('#catalog-count')).toBe(`Showing ${doc.capabilities.length} of ${doc.capabilities.length} capabilities.`);
    expect(await page.getAttribute('[data-operational]', 'data-operational')).toBe(doc.network.operational_status);
    for (const href of ['/openapi.json', '/llms.txt', '/status']) expect(await page.locator(`main a[href="${href}"]`).count(), href).toBeGreaterThan(0);
    expect(await page.textContent('main')).toContain(`${t.url}/mcp`);
    expect(page.errors).toEqual([]);
  });

  it('filters by product, status, price and text, instantly with the script and by the GET form without it', async () => {
    const doc = await registry();
    const expectIds = (pred: (c: LegacyRegistry['capabilities'][number]) => boolean) => doc.capabilities.filter(pred).map((c) => c.id);
    const page = await browser.newPage();
    await page.goto(`${t.url}/`);
    const ids = async () => (await visibleCards(page)).map((c) => c.id);

    await page.selectOption('#f-product', 'intelligence');
    expect(await ids()).toEqual(expectIds((c) => c.product === 'intelligence'));
    expect(page.url()).toBe(`${t.url}/?product=intelligence`);
    await page.selectOption('#f-product', '');

    await page.selectOption('#f-status', 'STALE');
    const stale = expectIds((c) => c.status === 'STALE');
    expect(await ids()).toEqual(stale);
    await page.selectOption('#f-status', '');

    await page.selectOption('#f-price', 'free');
    expect(await ids()).toEqual(expectIds((c) => c.price !== null && Number(c.price) === 0));
    await page.selectOption('#f-price', 'paid');
    await page.fill('#f-max', '0.01');
    const cheap = expectIds((c) => c.price !== null && Number(c.price) > 0 && Number(c.price) <= 0.01);
    expect(cheap.length).toBeGreaterThan(0);
    expect(await ids()).toEqual(cheap);
    await page.selectOption('#f-price', '');
    await page.fill('#f-max', '');

    await page.fill('#f-q', 'wallet');
    const wallet = expectIds((c) => `${c.id} ${c.name} ${c.description ?? ''}`.toLowerCase().includes('wallet'));
    expect(wallet.length).toBeGreaterThan(0);
    expect(await ids()).toEqual(wallet);
    await page.fill('#f-q', 'no capability has this text');
    expect(await ids()).toEqual([]);
    expect(await page.isVisible('#catalog-empty')).toBe(true);
    expect(await page.textContent('#catalog-count')).toBe(`Showing 0 of ${doc.capabilities.length} capabilities.`);

    // without script: the server applies the same filters to the GET form's query
    const plain = await browser.newPage();
    await plain.route('**/assets/catalog.js*', (route) => route.abort());
    await plain.goto(`${t.url}/?product=intelligence&price=paid&max_price=0.01`);
    expect((await visibleCards(plain)).map((c) => c.id)).toEqual(
      expectIds((c) => c.product === 'intelligence' && c.price !== null && Number(c.price) > 0 && Number(c.price) <= 0.01),
    );
    expect(await plain.inputValue('#f-max')).toBe('0.01');
    await plain.selectOption('#f-status', 'LIVE');
    await Promise.all([plain.waitForURL(/status=LIVE/), plain.click('form[data-catalog-filters] button[type="submit"]')]);
    expect((await visibleCards(plain)).map((c) => c.id)).toEqual(
      expectIds((c) => c.product === 'intelligence' && c.status === 'LIVE' && c.price !== null && Number(c.price) > 0 && Number(c.price) <= 0.01),
    );
  });
});

type TestPage = Awaited<ReturnType<TestBrowser['newPage']>>;

/** The text of the element `selector` (trimmed), failing when it is missing. */
async function text(page: TestPage, selector: string): Promise<string> {
  const t = await page.textContent(selector);
  if (t === null) throw new Error(`no ${selector}`);
  return t.trim();
}

describe('capability page (/capabilities/{id})', () => {
  const ID = 'intelligence.wallet_balances';

  it('shows the registry entry: price, status with its probe evidence, latency, schemas and the example', async () => {
    t.gateway.services.discovery.invalidate();
    const page = await browser.newPage();
    await page.goto(`${t.url}/capabilities/${ID}`);
    const c = (await registry()).capabilities.find((x) => x.id === ID)!;
    const health = (await (await fetch(`${t.url}/status/health`)).json()) as HealthDocument;
    expect(await text(page, 'h1')).toBe(c.name);
    expect(await page.getAttribute('main [data-status]', 'data-status')).toBe(c.status);
    expect(await text(page, '[data-field="price"]')).toContain(`${c.price} USDC per call`);
    // evidence: the last probe's HTTP status and body hash
    expect(c.evidence.probe).toBeDefined();
    expect(await text(page, '[data-field="probe-status"]')).toBe(String(c.evidence.probe!.status));
    expect(await text(page, '[data-field="probe-sha256"]')).toBe(c.evidence.probe!.body_sha256);
    const probes = await t.gateway.services.probes.all();
    expect(await page.getAttribute('[data-field="probe-checked-at"] time', 'datetime')).toBe(probes[ID].checked_at);
    // latency: the health document's numbers
    const h = health.capabilities.find((x) => x.id === ID)!;
    expect(await page.getAttribute('[data-latency]', 'data-p50')).toBe(String(h.latency_ms.p50));
    expect(await page.getAttribute('[data-latency]', 'data-p99')).toBe(String(h.latency_ms.p99));
    // schemas: one row per property, nested ones with their path; the raw JSON is the registry's
    const rows = (table: string) =>
      page.$$eval(`table[data-schema="${table}"] tbody tr`, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].slice(0, 3).map((cell) => cell.textContent?.trim() ?? '')),
      );
    expect(await rows('input')).toEqual([
      ['address', 'string', 'yes'],
      ['chain', 'string', 'no'],
    ]);
    const output = await rows('output');
    expect(output.map((r) => r[0])).toEqual(expect.arrayContaining(['address', 'chain_id', 'native', 'native.balance', 'usdc.balance']));
    expect(output.find((r) => r[0] === 'native.balance')).toEqual(['native.balance', 'string', 'yes']);
    expect(JSON.parse(await text(page, '[data-raw-schema="input"]'))).toEqual(c.input_schema);
    expect(JSON.parse(await text(page, '[data-raw-schema="output"]'))).toEqual(c.output_schema);
    expect(await page.isVisible('[data-raw-schema="input"]')).toBe(false);
    await page.click('details:has([data-raw-schema="input"]) > summary');
    expect(await page.isVisible('[data-raw-schema="input"]')).toBe(true);
    // the example request and response
    expect(JSON.parse(await text(page, '#example-request'))).toEqual(c.example_request);
    expect(JSON.parse(await text(page, '#example-response'))).toEqual(c.example_response);
    expect(page.errors).toEqual([]);
  });

  it('gives snippets that work: the curl request gets the 402 challenge, and paying it runs the capability', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/capabilities/${ID}`);
    const curl = await text(page, '#snippet-curl');
    expect(curl).toContain('402');
    expect(curl).toContain('PAYMENT-SIGNATURE');
    const js = await text(page, '#snippet-js');
    expect(js).toContain("from 'agent-capability-gateway-sdk'");
    expect(js).toContain(`gateway.execute("${ID}"`);
    expect(await text(page, '#snippet-python')).toContain(`gw.execute("${ID}"`);
    expect(await text(page, '#snippet-mcp')).toContain(`"url": "${t.url}/mcp"`);
    // the body of the snippet's first curl, sent as it is
    const body = JSON.parse(/-d '([^']*)'/.exec(curl)![1]);
    const unpaid = await post(`${t.url}/api/v1/execute`, body);
    expect(unpaid.status).toBe(402);
    expect(unpaid.headers.get('payment-required')).toBeTruthy();
    const buyer = t.stack.payment.buyers[0];
    const paid = await post(`${t.url}/api/v1/execute`, body, {
      'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, await challenge(`${t.url}/api/v1/execute`, body))),
    });
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('SUCCEEDED');
    // the copy button puts the snippet on the clipboard
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    await page.click('button[data-copy="snippet-curl"]');
    await expect.poll(() => page.textContent('button[data-copy="snippet-curl"]')).toBe('Copied');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(curl);
  });

  it('answers an unknown id with the HTML 404 page', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${t.url}/capabilities/intelligence.nothing_here`);
    expect(res?.status()).toBe(404);
    expect(await text(page, 'h1')).toBe('Not found');
    expect(await text(page, 'main')).toContain('/capabilities/intelligence.nothing_here');
  });
});

describe('status page (/status)', () => {
  /** The JSON documents the page was rendered from: fetched until their generated_at equals the page's (both cached 10 s on the server). */
  async function documentsOf(page: TestPage): Promise<{ health: HealthDocument; series: LatencySeriesDocument }> {
    for (let i = 0; ; i++) {
      const [health, series] = await Promise.all([
        fetch(`${t.url}/status/health`).then((r) => r.json() as Promise<HealthDocument>),
        fetch(`${t.url}/status/series`).then((r) => r.json() as Promise<LatencySeriesDocument>),
      ]);
      const live = page.locator('#status-live');
      if (
        health.generated_at === (await live.getAttribute('data-health-generated-at')) &&
        series.generated_at === (await live.getAttribute('data-series-generated-at'))
      )
        return { health, series };
      if (i === 3) throw new Error('the page and the JSON documents never came from the same build');
      await page.reload();
      await page.waitForSelector('[data-chart][data-plotted]');
    }
  }

  /** Checks everything the page shows against the documents it came from. */
  async function expectMatches(page: TestPage, health: HealthDocument, series: LatencySeriesDocument) {
    expect(await page.getAttribute('#status-live [data-operational]', 'data-operational')).toBe(health.operational_status);
    // per-capability state and latency: /status/health
    const rows = await page.$$eval('[data-health-row]', (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute('data-health-row'),
        status: tr.getAttribute('data-status'),
        p50: tr.getAttribute('data-p50'),
        p99: tr.getAttribute('data-p99'),
        samples: tr.getAttribute('data-samples'),
      })),
    );
    const str = (v: number | null) => (v === null ? '' : String(v));
    expect(rows).toEqual(
      health.capabilities.map((c) => ({
        id: c.id,
        status: c.status,
        p50: str(c.latency_ms.p50),
        p99: str(c.latency_ms.p99),
        samples: String(c.latency_ms.samples),
      })),
    );
    // charts: what uPlot was given is /status/series, point for point
    const charted = series.capabilities.filter((s) => s.window.samples > 0);
    expect(charted.length).toBeGreaterThan(0);
    for (const s of charted) {
      const plotted = JSON.parse((await page.getAttribute(`[data-chart="${s.id}"]`, 'data-plotted')) ?? 'null');
      // the time axis fits the data: from the minute before the first measured one to now, not the whole hour
      const first = s.points.findIndex((p) => p.samples > 0);
      const points = s.points.slice(Math.max(0, first - 1));
      expect(plotted, s.id).toEqual([points.map((p) => p.t), points.map((p) => p.p50), points.map((p) => p.p99)]);
      // a canvas was drawn
      expect(await page.locator(`[data-chart="${s.id}"] canvas`).count(), s.id).toBe(1);
      // and the hour's window is the health document's latency (every sample of this run is within the hour)
      const h = health.capabilities.find((c) => c.id === s.id)!;
      const figure = page.locator(`[data-chart-figure="${s.id}"]`);
      expect(
        {
          p50: await figure.getAttribute('data-window-p50'),
          p99: await figure.getAttribute('data-window-p99'),
          samples: await figure.getAttribute('data-window-samples'),
        },
        s.id,
      ).toEqual({ p50: str(h.latency_ms.p50), p99: str(h.latency_ms.p99), samples: String(h.latency_ms.samples) });
      expect(s.window).toEqual(h.latency_ms);
    }
    // builder relays and counts, wallet-monitor backlog
    const b = health.builder!;
    const builder = page.locator('[data-builder]');
    expect([await builder.getAttribute('data-bids'), await builder.getAttribute('data-submits'), await builder.getAttribute('data-accepted')]).toEqual(
      [b.bids_received, b.submits, b.accepted].map(String),
    );
    const relays = await page.$$eval('[data-relay]', (trs) =>
      trs.map((tr) => [tr.getAttribute('data-relay'), tr.getAttribute('data-submits'), tr.getAttribute('data-accepted')]),
    );
    expect(relays).toEqual(b.relays.map((r) => [r.name, String(r.submits), String(r.accepted)]));
    const wm = page.locator('[data-wallet-monitor]');
    const backlog = health.wallet_monitor!.backlog;
    expect([
      await wm.getAttribute('data-waiting'),
      await wm.getAttribute('data-delayed'),
      await wm.getAttribute('data-active'),
      await wm.getAttribute('data-dead-letters'),
    ]).toEqual([backlog.waiting, backlog.delayed, backlog.active, backlog.dead_letters].map(String));
  }

  it('on a fresh start says "no data yet" where nothing was measured, never "up" with 0 samples', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/status`);
    const { health } = await documentsOf(page);
    // the wallet monitor's probe checks it directly, which records no latency: health up, 0 samples
    const unmeasured = health.capabilities.filter((c) => c.latency_ms.samples === 0 && c.status !== 'down').map((c) => c.id);
    expect(unmeasured).toContain('intelligence.wallet_monitor');
    for (const id of unmeasured) {
      const cell = page.locator(`[data-health-row="${id}"] [data-no-data]`);
      expect(await cell.textContent(), id).toBe('no data yet');
    }
    expect(await page.locator('[data-health-row][data-samples="0"] [data-health="up"]').count()).toBe(0);
    // no webhook delivered yet: the wallet monitor's latency says so instead of "p50 —, p99 — (0 deliveries)"
    expect(health.wallet_monitor?.delivery_latency_ms.samples).toBe(0);
    expect(await page.locator('[data-wallet-monitor] [data-no-data]').textContent()).toBe('no data yet');
    expect(await page.textContent('[data-wallet-monitor]')).not.toContain('(0 deliveries)');
    expect(page.errors).toEqual([]);
    // its refresh timer must not run on while the next test installs the context's fake clock
    await page.close();
  });

  it('draws latency charts from stored samples whose numbers match /status/health, with builder relays and the wallet-monitor backlog, and refreshes itself', async () => {
    const { redis, keys } = t.gateway.services;
    const stats = new BuilderStats(redis, keys);
    await stats.register(`0x${'b'.repeat(96)}`, [
      { name: 'flashbots', url: 'http://127.0.0.1:1/flashbots' },
      { name: 'ultrasound', url: 'http://127.0.0.1:1/ultrasound' },
    ]);
    await stats.recordSubmission('flashbots', true, new Date());
    await stats.recordSubmission('ultrasound', false, new Date());
    // real traffic: paid executions, then a probe round
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: t.stack.payment.buyers[1].address, chain: 'base' } };
    for (let i = 0; i < 2; i++) {
      const buyer = t.stack.payment.buyers[1];
      const r = await post(`${t.url}/api/v1/execute`, body, {
        'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, await challenge(`${t.url}/api/v1/execute`, body))),
      });
      expect(r.status).toBe(200);
    }
    await t.gateway.prober.runOnce();
    t.gateway.services.discovery.invalidate();

    const page = await browser.newPage();
    // the page's timers run only when the test says so: no refresh swaps the page while it is being checked
    // (installed, the fake clock still runs in real time: paused, a slow check under load cannot let a refresh in)
    const now = new Date();
    await page.clock.install({ time: now });
    await page.clock.pauseAt(new Date(now.getTime() + 1_000));
    await page.goto(`${t.url}/status?refresh=2`);
    await page.waitForSelector('[data-chart][data-plotted]');
    const first = await documentsOf(page);
    await expectMatches(page, first.health, first.series);
    // the executions are in the series: samples beyond the probes' for the executed capability
    const executed = first.series.capabilities.find((s) => s.id === 'intelligence.wallet_balances')!;
    expect(executed.source).toBe('executions_and_probes');
    expect(executed.window.samples).toBeGreaterThanOrEqual(4);

    // more traffic; the open page picks it up without a reload
    await stats.recordSubmission('flashbots', true, new Date());
    await t.gateway.prober.runOnce();
    t.gateway.services.discovery.invalidate();
    const before = Number(await page.getAttribute('[data-health-row="gateway.health"]', 'data-samples'));
    expect(await page.getAttribute('html', 'data-refreshes')).toBeNull();
    await page.clock.runFor(2_000);
    await expect.poll(() => page.getAttribute('html', 'data-refreshes'), { timeout: 30_000 }).toBe('1');
    expect(Number(await page.getAttribute('[data-health-row="gateway.health"]', 'data-samples'))).toBeGreaterThan(before);
    const second = await documentsOf(page);
    expect(second.health.builder!.submits).toBe(3);
    await expectMatches(page, second.health, second.series);
    expect(page.errors).toEqual([]);
    // the fake clock is the whole browser context's: let time run again for the tests after this one
    await page.clock.resume();
    await page.close();
  });
});

describe('quality on every page', () => {
  const PAGES = ['/', '/capabilities/intelligence.wallet_balances', '/capabilities/gateway.execute', '/status', '/no-such-page'];
  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`has no serious or critical axe-core violation and no sideways scrolling at ${viewport.width} px (${name})`, async () => {
      for (const path of PAGES) {
        const page = await browser.newPage(viewport);
        await page.goto(`${t.url}${path}`);
        await page.waitForLoadState('networkidle');
        expect(await axeCheck(page), path).toEqual([]);
        const { scrollWidth, innerWidth } = await horizontalOverflow(page);
        expect(scrollWidth, path).toBeLessThanOrEqual(innerWidth);
        expect(await page.locator('header').count(), path).toBe(1);
        expect(await page.locator('main#main').count(), path).toBe(1);
        expect(await page.locator('footer').count(), path).toBe(1);
        expect(await page.locator('nav[aria-label]').count(), path).toBeGreaterThan(0);
        // the 404 page's own status is the one console error Chromium reports there
        const notFound = path === '/no-such-page';
        expect(
          page.errors.filter((e) => !(notFound && e.includes('status of 404'))),
          path,
        ).toEqual([]);
        await page.close();
      }
    });
  }
});
