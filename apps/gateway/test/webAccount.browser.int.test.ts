import { ulid } from 'ulid';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signIn, waitFor } from '../../../packages/wallet-monitor/test/helpers.js';
import { seedProviderMoney, startAccountFixture, type AccountFixture } from './browser/accountFixture.js';
import { axeCheck, horizontalOverflow, openBrowser, VIEWPORTS, type TestBrowser } from './browser/chromium.js';
import { injectWallet } from './browser/wallet.js';

/**
 * The pages for providers and subscribers in headless Chromium (docs/decisions.md "Web pages for people"),
 * signed in with an EIP-1193 wallet injected into the page and backed by a dev key
 * (`browser/wallet.ts`): a provider onboards end to end and appears in the catalog; its dashboard,
 * after Sign-In with Ethereum, shows balances, payouts with tx hashes and disputes, and answers
 * one; a subscription page shows `insufficient_balance` for an empty account and replays the dead
 * letter. Every page passes axe-core (no serious or critical violation) at 375 and 1280 px.
 */

let f: AccountFixture;
let browser: TestBrowser;
const CAPABILITY = 'intelligence.browser_upper';

beforeAll(async () => {
  f = await startAccountFixture();
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

type TestPage = Awaited<ReturnType<TestBrowser['newPage']>>;

/** No serious or critical axe-core violation and no sideways scrolling, at both widths. */
async function checkQuality(page: TestPage, what: string) {
  for (const viewport of [VIEWPORTS.mobile, VIEWPORTS.desktop]) {
    await page.setViewportSize(viewport);
    expect(await axeCheck(page), `${what} at ${viewport.width} px`).toEqual([]);
    const { scrollWidth, innerWidth } = await horizontalOverflow(page);
    expect(scrollWidth, `${what} at ${viewport.width} px scrolls sideways`).toBeLessThanOrEqual(innerWidth);
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/** Clicks "Sign in with your wallet" and waits for the server's signed-in view. */
async function signInOnPage(page: TestPage) {
  await page.click('#sign-in');
  await page.waitForSelector('#account-view[data-signed-in="true"]');
}

describe('providers: /providers/onboard and /providers/{id}', () => {
  it('onboards in the browser with the injected wallet (form checks, server problems at their fields), appears in /registry and on /, then signs in to its dashboard', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const page = await browser.newPage();
    const wallet = await injectWallet(page, owner);
    await page.goto(`${f.t.url}/providers/onboard`);
    await checkQuality(page, 'onboarding');

    await page.fill('#name', 'Browser Co');
    await page.fill('#endpoint', f.provider.url);
    await page.fill('#offer-0-name', 'browser_upper');
    await page.fill('#offer-0-description', 'Upper-cases text, registered from a browser.');
    // refused in the browser: no challenge is asked for, no signature
    await page.fill('#offer-0-price_usdc', '0.1234567');
    await page.fill('#offer-0-example_request', '{"text": ');
    await page.click('#register');
    await page.waitForSelector('#error-summary:not([hidden])');
    expect(await page.getAttribute('#offer-0-price_usdc', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#offer-0-price_usdc-error')).toContain('at most 6 decimals');
    expect(await page.textContent('#offer-0-example_request-error')).toContain('not valid JSON');
    expect(await page.locator('#error-summary a[href="#offer-0-price_usdc"]').count()).toBe(1);
    expect(wallet.calls('personal_sign')).toEqual([]);
    await checkQuality(page, 'onboarding with errors');

    // passes the browser's checks, refused by the server (SSRF rules): its problem is shown at the endpoint field
    await page.fill('#offer-0-price_usdc', '0.5');
    await page.fill('#offer-0-example_request', '{"text": "probe"}');
    await page.fill('#endpoint', 'http://10.0.0.1/acg');
    const refused = page.waitForResponse((r) => r.url() === `${f.t.url}/api/v1/providers` && r.request().method() === 'POST');
    await page.click('#register');
    expect((await refused).status()).toBe(400);
    await page.waitForSelector('#endpoint-error:not([hidden])');
    expect(await page.getAttribute('#endpoint', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#error-summary')).toContain('Endpoint URL');

    await page.fill('#endpoint', f.provider.url);
    const created = page.waitForResponse((r) => r.url() === `${f.t.url}/api/v1/providers` && r.request().method() === 'POST' && r.status() === 201);
    await page.click('#register');
    const registered = (await (await created).json()) as { provider_id: string; signing_secret: string; capabilities: { id: string }[] };
    await page.waitForSelector('#result:not([hidden])');
    const providerId = registered.provider_id;
    expect(await page.textContent('#result-id')).toBe(providerId);
    expect(await page.inputValue('#result-secret')).toBe(registered.signing_secret);
    expect(await page.getAttribute('#result-dashboard', 'href')).toBe(`/providers/${providerId}`);
    expect(registered.capabilities.map((c) => c.id)).toEqual([CAPABILITY]);
    // the wallet was asked for its account and signed each challenge with EIP-191 (personal_sign)
    expect(wallet.calls('eth_requestAccounts').length).toBeGreaterThan(0);
    expect(wallet.calls('personal_sign').map((c) => c.params[1])).toEqual([owner.address, owner.address]);
    await checkQuality(page, 'onboarding result');
    expect(page.errors.filter((e) => !e.includes('status of 400'))).toEqual([]);

    // the probe that follows a registration has run (refused: the endpoint did not know the secret yet)
    await waitFor('the first probe', async () => (await f.t.gateway.services.probes.all())[CAPABILITY]);
    // the provider verifies the gateway's signed calls with the secret; a probe makes it LIVE
    f.provider.setSecret(registered.signing_secret);
    f.provider.signAs(owner, [CAPABILITY]);
    await f.t.gateway.prober.probeProvider(providerId);
    f.t.gateway.services.discovery.invalidate();
    const doc = (await (await fetch(`${f.t.url}/registry`, { headers: { 'cache-control': 'no-cache' } })).json()) as {
      capabilities: { id: string; status: string; provider: string }[];
    };
    expect(doc.capabilities.find((c) => c.id === CAPABILITY)).toMatchObject({ status: 'LIVE', provider: 'Browser Co' });
    await page.goto(`${f.t.url}/`);
    const card = page.locator(`#catalog [data-capability="${CAPABILITY}"]`);
    expect(await card.isVisible()).toBe(true);
    expect((await card.locator('[data-status]').textContent())?.trim()).toBe('LIVE');

    // the dashboard, signed in with SIWE from the same wallet
    // two paid calls (0.5 USDC each, share 0.45): one disputed and left open, one disputed, released and paid out
    const { openDisputeId: disputeId, releasedDisputeId, payoutTxHash: txHash, buyerAuth } = await seedProviderMoney(f, CAPABILITY, { text: 'hi' });
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);

    const dashboard = await browser.newPage();
    const signer = await injectWallet(dashboard, owner);
    await dashboard.goto(`${f.t.url}/providers/${providerId}`);
    // signed out: what the page is and a sign-in button, no data
    expect(await dashboard.locator('#sign-in').isVisible()).toBe(true);
    expect(await dashboard.locator('[data-balance]').count()).toBe(0);
    await checkQuality(dashboard, 'provider dashboard, signed out');

    await signInOnPage(dashboard);
    const siwe = signer.calls('personal_sign');
    expect(siwe).toHaveLength(1);
    expect(Buffer.from(String(siwe[0].params[0]).slice(2), 'hex').toString('utf8')).toContain('wants you to sign in with your Ethereum account');

    expect((await dashboard.textContent('[data-balance="held"] .stat-value'))?.trim()).toBe('0.45 USDC');
    expect((await dashboard.textContent('[data-balance="available"] .stat-value'))?.trim()).toBe('0 USDC');
    expect((await dashboard.textContent('[data-balance="paid"] .stat-value'))?.trim()).toBe('0.45 USDC');
    expect(await dashboard.getAttribute(`[data-payout] [data-tx-hash]`, 'data-tx-hash')).toBe(txHash);
    const row = dashboard.locator(`[data-capability="${CAPABILITY}"] td.num`);
    expect((await row.nth(1).textContent())?.trim()).toBe('2'); // calls
    expect((await dashboard.textContent('#open-dispute-count'))?.trim()).toBe('1');
    expect(await dashboard.locator(`[data-dispute="${releasedDisputeId}"]`).textContent()).toContain('released');
    await checkQuality(dashboard, 'provider dashboard, signed in');

    await dashboard.fill(`#statement-${disputeId}`, 'The result is upper-case; see the signed proof.');
    const answered = dashboard.waitForResponse((r) => r.url() === `${f.t.url}/api/v1/disputes/${disputeId}/response`);
    await dashboard.click(`[data-dispute="${disputeId}"] button[type=submit]`);
    expect((await answered).status()).toBe(200);
    await dashboard.locator(`[data-dispute="${disputeId}"] [data-statement]`, { hasText: 'signed proof' }).waitFor();
    expect(await dashboard.textContent('#action-status')).toContain(`Your statement on ${disputeId} is recorded.`);
    const read = await call('GET', `${f.t.url}/api/v1/disputes/${disputeId}`, undefined, buyerAuth);
    expect(read.body.statement).toBe('The result is upper-case; see the signed proof.');

    // the same dashboard to another wallet: nothing of this provider
    const stranger = await browser.newPage();
    await injectWallet(stranger, privateKeyToAccount(generatePrivateKey()));
    await stranger.goto(`${f.t.url}/providers/${providerId}`);
    await stranger.click('#sign-in');
    await stranger.waitForSelector('#account-notice');
    expect(await stranger.textContent('#account-notice')).toContain(`There is no provider ${providerId}`);
    expect(await stranger.locator('[data-balance]').count()).toBe(0);
    expect(dashboard.errors).toEqual([]);
  });
});

describe('subscription page (/subscriptions/{id})', () => {
  it('shows insufficient_balance for an empty account, in the page and in the JSON, and replays the dead letter once funded', async () => {
    const subscriber = privateKeyToAccount(generatePrivateKey());
    const auth = { authorization: `Bearer ${await signIn(f.t.url, subscriber)}` };
    const created = await call(
      'POST',
      `${f.t.url}/v1/wallet-monitor`,
      { addresses: [privateKeyToAccount(generatePrivateKey()).address], chains: ['base'], events: ['transfer_in'], webhook_url: `${f.receiver.url}/page` },
      auth,
    );
    expect(created.status).toBe(200);
    const id = created.body.subscription_id as string;

    const page = await browser.newPage();
    await injectWallet(page, subscriber);
    await page.goto(`${f.t.url}/subscriptions/${id}`);
    await checkQuality(page, 'subscription, signed out');
    await signInOnPage(page);
    expect(await page.getAttribute('#last-error', 'data-code')).toBe('');
    expect((await page.textContent('#status-heading'))?.trim()).toContain('active');

    // a test event goes through the normal delivery path: the empty account cannot pay for it
    const queued = page.waitForResponse((r) => r.url() === `${f.t.url}/v1/wallet-monitor/${id}/test-event`);
    await page.click('#send-test-event');
    expect((await queued).status()).toBe(202);
    await page.waitForSelector('#last-error[data-code="insufficient_balance"]');
    await page.locator('#dead-letter-count', { hasText: /^1$/ }).waitFor({ timeout: 60_000 });
    expect(await page.textContent('#last-error')).toContain('0.001 USDC');
    expect(await page.textContent('#last-error')).toContain('nothing was sent');
    expect(f.receiver.attempts('/page')).toEqual([]);
    const json = await call('GET', `${f.t.url}/v1/wallet-monitor/${id}`, undefined, auth);
    expect(json.body.last_error).toMatchObject({ code: 'insufficient_balance', status: null });
    expect(json.body.delivery).toMatchObject({ dead_lettered: 1, delivered: 0 });
    await checkQuality(page, 'subscription with a dead letter');

    // funded, the dead letter is replayed from the page and delivered
    await f.t.gateway.services.ledger.credit(subscriber.address, 5000n, 'deposit', `test-${ulid()}`);
    const letter = await page.getAttribute('tr[data-dead-letter]', 'data-dead-letter');
    const replay = page.waitForResponse((r) => r.url() === `${f.t.url}/v1/wallet-monitor/${id}/dead-letters/replay`);
    await page.click(`tr[data-dead-letter="${letter}"] button`);
    const replayed = await replay;
    expect(replayed.status()).toBe(200);
    expect(await replayed.json()).toEqual({ subscription_id: id, replayed: [letter] });
    await page.locator('#dead-letter-count', { hasText: /^0$/ }).waitFor({ timeout: 60_000 });
    await waitFor('the replayed delivery', () => f.receiver.delivered('/page').length === 1);
    expect(f.receiver.delivered('/page')[0].headers['webhook-id']).toBe(letter);
    await page.waitForSelector('#last-error[data-code=""]');
    await page.waitForSelector(`tr[data-webhook-id="${letter}"][data-outcome="delivered"]`);
    expect((await page.textContent('[data-stat="delivered"] .stat-value'))?.trim()).toBe('1');
    await checkQuality(page, 'subscription after the replay');
    expect(page.errors).toEqual([]);
  });
});

describe('the one-click dev sign-in npm start prints (#dev-session)', () => {
  it('adopts the fragment as the tab session on a loopback host, removes it from the address bar, and ignores a malformed one', async () => {
    const subscriber = privateKeyToAccount(generatePrivateKey());
    const token = await signIn(f.t.url, subscriber);
    const created = await call(
      'POST',
      `${f.t.url}/v1/wallet-monitor`,
      { addresses: [privateKeyToAccount(generatePrivateKey()).address], chains: ['base'], events: ['transfer_in'], webhook_url: `${f.receiver.url}/dev` },
      { authorization: `Bearer ${token}` },
    );
    const path = `/subscriptions/${created.body.subscription_id as string}`;
    expect(new URL(f.t.url).hostname).toBe('127.0.0.1');

    const page = await browser.newPage();
    await page.goto(`${f.t.url}${path}#dev-session=${token}.${subscriber.address}.${Date.now() + 3_600_000}`);
    await page.waitForSelector('#account-view[data-signed-in="true"]');
    expect(await page.textContent('.signed-in')).toContain(subscriber.address);
    expect(new URL(page.url()).hash).toBe('');
    expect(page.errors).toEqual([]);

    const other = await browser.newPage();
    await other.goto(`${f.t.url}${path}#dev-session=not-a-session`);
    await other.waitForLoadState('networkidle');
    expect(await other.getAttribute('#account-view', 'data-signed-in')).toBe('false');
  });
});

describe('HTTP: the signed-in pages are rendered on the server for the bearer token the browser sends', () => {
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${f.t.url}${path}`, { headers: { accept: 'text/html', ...headers } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  it('answers the owner, refuses others and bad tokens in the page, and keeps JSON clients on problem+json', async () => {
    const subscriber = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const mine = { authorization: `Bearer ${await signIn(f.t.url, subscriber)}` };
    const theirs = { authorization: `Bearer ${await signIn(f.t.url, other)}` };
    const watched = privateKeyToAccount(generatePrivateKey()).address;
    const created = await call(
      'POST',
      `${f.t.url}/v1/wallet-monitor`,
      { addresses: [watched], chains: ['arbitrum'], events: ['transfer_out'], webhook_url: `${f.receiver.url}/http` },
      mine,
    );
    const path = `/subscriptions/${created.body.subscription_id}`;

    const anonymous = await get(path);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('content-type')).toContain('text/html');
    expect(anonymous.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(anonymous.text).toContain('id="sign-in"');
    expect(anonymous.text).not.toContain(watched); // nothing of the subscription without the token

    const owner = await get(path, mine);
    expect(owner.status).toBe(200);
    expect(owner.headers.get('cache-control')).toBe('no-store');
    expect(owner.text).toContain('data-signed-in="true"');
    expect(owner.text).toContain(watched);

    const stranger = await get(path, theirs);
    expect(stranger.status).toBe(403);
    expect(stranger.text).not.toContain(watched);
    expect(stranger.text).toContain('does not own');

    const expired = await get(path, { authorization: `Bearer acg_${'x'.repeat(43)}` });
    expect(expired.status).toBe(401);
    expect(expired.text).toContain('id="sign-in"');

    expect((await get(`/subscriptions/sub_${ulid()}`, mine)).status).toBe(404);
    // an unknown id is a 404 page even signed out: no sign-in card that looks like a real subscription
    const unknown = await get(`/subscriptions/sub_${ulid()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('<h1>Not found</h1>');
    expect(unknown.text).not.toContain('id="sign-in"');
    expect((await get('/subscriptions/not-a-subscription-id')).status).toBe(404);
    expect((await get('/providers/not-a-provider-id', mine)).status).toBe(404);
    expect((await get(`/providers/prv_${ulid()}`, mine)).status).toBe(404);

    // an API client keeps its JSON: the pages are for browsers only
    const json = await fetch(`${f.t.url}${path}`, { headers: { accept: 'application/json', ...mine } });
    expect(json.status).toBe(404);
    expect(json.headers.get('content-type')).toContain('application/problem+json');
    const onboardJson = await fetch(`${f.t.url}/providers/onboard`);
    expect(onboardJson.status).toBe(404);
    expect((await fetch(`${f.t.url}/providers/onboard`, { method: 'POST' })).status).toBe(405);
  });

  it('links the onboarding page from every page, with the form rules of the registration schema', async () => {
    const catalog = await get('/');
    expect(catalog.text).toContain('href="/providers/onboard"');
    const onboard = await get('/providers/onboard');
    expect(onboard.status).toBe(200);
    expect(onboard.text).toContain('pattern="^[a-z][a-z0-9_]*$"');
    expect(onboard.text).toContain('maxlength="64"');
    expect(onboard.text).toContain('min="1000" max="120000"');
    for (const asset of ['account.js', 'onboard.js', 'account.css']) {
      const m = new RegExp(`/assets/${asset.replace('.', '\\.')}\\?v=[\\w-]+`).exec(onboard.text);
      expect(m, asset).not.toBeNull();
      expect((await fetch(`${f.t.url}${m![0]}`)).status, asset).toBe(200);
    }
  });
});
