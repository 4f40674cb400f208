/**
 * `npm run screenshots`: starts a gateway on a fresh dev chain and a private Redis (the test
 * harness), pays a few executions, records builder relay submissions as a builder would, and runs
 * a few probe rounds, so statuses, evidence, latency samples and counters exist; then writes a
 * full-page PNG of every web page at 375 px and 1280 px wide to `screenshots/` (git-ignored), or
 * to the folder given as the first argument.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BuilderStats } from '@acg/bundles';
import { startTestGateway } from '../harness.js';
import { challenge, officialPayload, paymentHeader, post } from '../x402.js';
import { openBrowser, VIEWPORTS } from './chromium.js';

/** Every page to capture: a file name and its path. */
export const SCREENSHOT_PAGES: readonly { name: string; path: string }[] = [
  { name: 'catalog', path: '/' },
  { name: 'catalog-filtered', path: '/?product=intelligence&status=LIVE' },
  { name: 'capability-wallet-balances', path: '/capabilities/intelligence.wallet_balances' },
  { name: 'capability-execute', path: '/capabilities/gateway.execute' },
  { name: 'status', path: '/status' },
  { name: 'not-found', path: '/capabilities/nope.nothing' },
];

async function main(): Promise<void> {
  const out = resolve(process.argv[2] ?? 'screenshots');
  await mkdir(out, { recursive: true });
  const t = await startTestGateway({ config: { rateLimitPerSecond: 0 } });
  const browser = await openBrowser();
  try {
    const execute = `${t.url}/api/v1/execute`;
    for (const buyer of t.stack.payment.buyers.slice(0, 3)) {
      const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
      const r = await post(execute, body, { 'PAYMENT-SIGNATURE': paymentHeader(await officialPayload(buyer, await challenge(execute, body))) });
      if (r.status !== 200) throw new Error(`paid execute answered ${r.status}`);
    }
    const { redis, keys } = t.gateway.services;
    const stats = new BuilderStats(redis, keys);
    await stats.register(`0x${'ab'.repeat(48)}`, [
      { name: 'flashbots', url: 'http://127.0.0.1:1/flashbots' },
      { name: 'ultrasound', url: 'http://127.0.0.1:1/ultrasound' },
    ]);
    for (const [relay, accepted] of [
      ['flashbots', true],
      ['ultrasound', true],
      ['flashbots', false],
    ] as const)
      await stats.recordSubmission(relay, accepted, new Date());
    for (let i = 0; i < 3; i++) await t.gateway.prober.runOnce();
    t.gateway.services.discovery.invalidate();
    for (const { name, path } of SCREENSHOT_PAGES) {
      for (const [label, viewport] of Object.entries(VIEWPORTS)) {
        const page = await browser.newPage(viewport);
        await page.goto(`${t.url}${path}`);
        await page.waitForLoadState('networkidle');
        const file = join(out, `${name}-${viewport.width}.png`);
        await page.screenshot({ path: file, fullPage: true });
        console.log(`${label.padEnd(8)} ${path.padEnd(48)} → ${file}`);
        await page.close();
      }
    }
  } finally {
    await browser.close();
    await t.close();
  }
}

await main();
