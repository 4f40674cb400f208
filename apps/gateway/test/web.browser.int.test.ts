import type { LegacyRegistry } from '@acg/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeCheck, horizontalOverflow, openBrowser, VIEWPORTS, type TestBrowser } from './browser/chromium.js';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The web pages in headless Chromium (DESIGN "Web pages for people"): what each page shows
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

async function registry(): Promise<LegacyRegistry> {
  return (await (await fetch(`${t.url}/registry`)).json()) as LegacyRegistry;
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
