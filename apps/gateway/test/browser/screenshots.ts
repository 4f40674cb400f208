/**
 * `npm run screenshots`: starts a gateway on a fresh dev chain and a private Redis (the test
 * harness), runs a few probe rounds so statuses, evidence and latency samples exist, and writes a
 * full-page PNG of every web page at 375 px and 1280 px wide to `screenshots/` (git-ignored), or
 * to the folder given as the first argument.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startTestGateway } from '../harness.js';
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
