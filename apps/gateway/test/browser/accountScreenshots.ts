/**
 * `npm run screenshots:account`: the provider and subscription pages with data, signed in. Starts
 * the account fixture (a gateway on a fresh dev chain, a private Redis, a wallet-monitor delivery
 * worker, a provider endpoint, a webhook receiver), registers a provider through the public API,
 * gives it paid calls, a payout and disputes, makes a subscription whose account is empty (a test
 * event dead-letters with `insufficient_balance`), then writes full-page PNGs at 375 px and 1280 px
 * to `screenshots/` (git-ignored), or to the folder given as the first argument: the onboarding
 * form, its validation errors, the dashboard and the subscription, each signed in with an
 * injected EIP-1193 wallet backed by a dev key.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { call, signIn, waitFor } from '../../../../packages/wallet-monitor/test/helpers.js';
import { registerTestProvider, upperCaseCapability } from '../providerServer.js';
import { seedProviderMoney, startAccountFixture } from './accountFixture.js';
import { openBrowser, VIEWPORTS } from './chromium.js';
import { injectWallet } from './wallet.js';

async function main(): Promise<void> {
  const out = resolve(process.argv[2] ?? 'screenshots');
  await mkdir(out, { recursive: true });
  const f = await startAccountFixture();
  const browser = await openBrowser();
  try {
    const url = f.t.url;
    const owner = privateKeyToAccount(generatePrivateKey());
    const capability = 'intelligence.shout';
    const registered = await registerTestProvider(url, owner, f.provider, { name: 'Shout Labs', capabilities: [upperCaseCapability('shout', '0.5')] });
    await f.t.gateway.prober.probeProvider(registered.provider_id);
    await seedProviderMoney(f, capability, { text: 'hi' });

    const subscriber = privateKeyToAccount(generatePrivateKey());
    const auth = { authorization: `Bearer ${await signIn(url, subscriber)}` };
    const sub = await call(
      'POST',
      `${url}/v1/wallet-monitor`,
      { addresses: [privateKeyToAccount(generatePrivateKey()).address], chains: ['base'], events: ['transfer_in'], webhook_url: `${f.receiver.url}/shots` },
      auth,
    );
    const subId = sub.body.subscription_id as string;
    await call('POST', `${url}/v1/wallet-monitor/${subId}/test-event`, undefined, auth);
    await waitFor('a dead letter', async () => (await call('GET', `${url}/v1/wallet-monitor/${subId}`, undefined, auth)).body.delivery.dead_lettered === 1);

    const shots: { name: string; path: string; wallet?: () => typeof owner; prepare?: (page: Awaited<ReturnType<typeof browser.newPage>>) => Promise<void> }[] =
      [
        { name: 'provider-onboard', path: '/providers/onboard' },
        {
          name: 'provider-onboard-errors',
          path: '/providers/onboard',
          wallet: () => privateKeyToAccount(generatePrivateKey()),
          prepare: async (page) => {
            await page.fill('#name', '-bad name');
            await page.fill('#offer-0-price_usdc', '0.1234567');
            await page.click('#register');
            await page.waitForSelector('#error-summary:not([hidden])');
          },
        },
        {
          name: 'provider-onboard-registered',
          path: '/providers/onboard',
          wallet: () => privateKeyToAccount(generatePrivateKey()),
          prepare: async (page) => {
            await page.fill('#name', 'Whisper Works');
            await page.fill('#endpoint', f.provider.url);
            await page.fill('#offer-0-name', `whisper_${page.viewportSize()?.width}`);
            await page.fill('#offer-0-description', 'Lower-cases text.');
            await page.fill('#offer-0-price_usdc', '0.002');
            await page.click('#register');
            await page.waitForSelector('#result:not([hidden])');
          },
        },
        { name: 'provider-dashboard-signed-out', path: `/providers/${registered.provider_id}` },
        { name: 'provider-dashboard', path: `/providers/${registered.provider_id}`, wallet: () => owner },
        { name: 'subscription', path: `/subscriptions/${subId}`, wallet: () => subscriber },
      ];
    for (const shot of shots) {
      for (const [label, viewport] of Object.entries(VIEWPORTS)) {
        const page = await browser.newPage(viewport);
        if (shot.wallet) await injectWallet(page, shot.wallet());
        await page.goto(`${url}${shot.path}`);
        if (shot.wallet && (await page.locator('#sign-in').count()) > 0) {
          await page.click('#sign-in');
          await page.waitForSelector('#account-view[data-signed-in="true"]');
        }
        await shot.prepare?.(page);
        await page.waitForLoadState('networkidle');
        const file = join(out, `${shot.name}-${viewport.width}.png`);
        await page.screenshot({ path: file, fullPage: true });
        console.log(`${label.padEnd(8)} ${shot.path.padEnd(48)} → ${file}`);
        await page.close();
      }
    }
  } finally {
    await browser.close();
    await f.close();
  }
}

await main();
