import { Writable } from 'node:stream';
import { devAccount, devClients, startDevChain, type DevChain, type DevClients } from '@acg/devnet';
import { createLogger, repeatedKeys } from '@acg/observability';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { erc20Abi, getAddress, parseEther, parseUnits, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../apps/gateway/test/harness.js';
import { secretBoxFromKey } from '@acg/secrets';
import { startWalletMonitor, type RunningWalletMonitor, type WalletEventPayload } from '../src/index.js';
import { createAuthClient } from '../../sdk/src/auth.js';
import { createWalletMonitorClient } from '../../sdk/src/walletMonitor.js';
import { verifyWebhook } from '../../sdk/src/webhooks.js';
import { Scrape } from '../../observability/test/prometheus.js';
import { call, Receiver, signIn, waitFor } from './helpers.js';
import { walletMonitorKeys } from '../src/commands/keys.js';

/** Short retry schedule for tests (8 attempts, about 5 s in all); the schedule of docs/decisions.md "Wallet monitor" is the default. */
const SCHEDULE = [0, 100, 200, 400, 800, 1000, 1200, 1400];
const PRICE = 1000n;

let t: TestGateway;
let eth: DevChain;
let arb: DevChain;
let ethClients: DevClients;
let arbClients: DevClients;
let baseClients: DevClients;
let monitor: RunningWalletMonitor;
const receiver = new Receiver();
/** Every log line of the monitor (info and up), as the worker logs it: under `module: wallet-monitor`. */
const logLines: string[] = [];
const logSink = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n')) if (l.trim()) logLines.push(l);
    cb();
  },
});
/** Delivery outcomes reported to the monitor's `deliveryObserver`. */
const outcomes: Record<string, number> = {};

beforeAll(async () => {
  [t, eth, arb] = await Promise.all([
    startTestGateway({ prober: false, config: { walletMonitor: { webhookPolicy: 'development', retryScheduleMs: SCHEDULE } } }),
    startDevChain('ethereum'),
    startDevChain('arbitrum'),
    receiver.start(),
  ]);
  [ethClients, arbClients, baseClients] = await Promise.all([devClients(eth.rpcUrl), devClients(arb.rpcUrl), devClients(t.stack.payment.rpcUrl)]);
  monitor = await startWalletMonitor({
    redisUrl: t.stack.redis.url,
    keyPrefix: t.config.keyPrefix,
    chains: {
      ethereum: { rpcUrl: eth.rpcUrl },
      base: { rpcUrl: t.stack.payment.rpcUrl },
      // two blocks deep, so a block can be dropped before it is confirmed
      arbitrum: { rpcUrl: arb.rpcUrl, confirmations: 2 },
    },
    policy: 'development',
    // the gateway seals signing secrets with this key (harness): the workers must open them with it
    secretBox: secretBoxFromKey(t.config.walletMonitor?.webhookSecretKey),
    retryScheduleMs: SCHEDULE,
    pollIntervalMs: 50,
    renewalIntervalSeconds: 0,
    // the worker's binding (apps/worker): the monitor's parts add `component` (and `chain`) under it
    log: createLogger({ service: 'worker', level: 'info', destination: logSink }).child({ module: 'wallet-monitor' }),
    deliveryObserver: {
      delivery(outcome) {
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      },
    },
  });
  // the watchers have a cursor before any test transacts
  await waitFor('watcher cursors', async () => (await Promise.all(monitor.watchers.map((w) => w.cursor()))).every(Boolean));
});

afterAll(async () => {
  await monitor?.stop();
  await receiver.close();
  await Promise.all([t?.close(), eth?.stop(), arb?.stop()]);
});

/** A signed-in owner whose metered account holds `fund` base units. */
async function owner(index: number, fund = 1_000_000n): Promise<{ account: LocalAccount; token: string; auth: Record<string, string> }> {
  const account = devAccount(index) as LocalAccount;
  if (fund > 0n) await t.gateway.services.ledger.credit(account.address, fund, 'deposit', `test-${ulid()}`);
  const token = await signIn(t.url, account);
  return { account, token, auth: { authorization: `Bearer ${token}` } };
}

/** Polls `GET /v1/wallet-monitor/{id}` (as `auth`) until its body satisfies `settled`, and returns that body. */
function subscriptionView(what: string, sub: { subscription_id: string }, auth: Record<string, string>, settled: (view: any) => boolean) {
  return waitFor(what, async () => {
    const v = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}`, undefined, auth);
    return settled(v.body) ? v.body : undefined;
  });
}

async function subscribe(auth: Record<string, string>, body: { addresses: string[]; chains: string[]; events?: string[]; path: string }) {
  const r = await call(
    'POST',
    `${t.url}/v1/wallet-monitor`,
    { addresses: body.addresses, chains: body.chains, events: body.events ?? ['transfer_in', 'transfer_out'], webhook_url: `${receiver.url}${body.path}` },
    auth,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { subscription_id: string; expires_at: number; secret: string };
}

const sendEth = async (c: DevClients, from: LocalAccount, to: Hex, value: bigint) => {
  const hash = await c.walletFor(from).sendTransaction({ to, value });
  await c.publicClient.waitForTransactionReceipt({ hash });
  return hash;
};
const sendUsdc = async (c: DevClients, usdc: Hex, from: LocalAccount, to: Hex, amount: bigint) => {
  const hash = await c.walletFor(from).writeContract({ address: usdc, abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  await c.publicClient.waitForTransactionReceipt({ hash });
  return hash;
};
const events = (path: string) => receiver.delivered(path).map((r) => JSON.parse(r.body) as WalletEventPayload);
const fresh = () => privateKeyToAccount(generatePrivateKey());

describe('subscriptions (POST /v1/wallet-monitor)', () => {
  it('needs a bearer token: 401 problem+json without one', async () => {
    const r = await call('POST', `${t.url}/v1/wallet-monitor`, {
      addresses: [fresh().address],
      chains: ['base'],
      events: ['transfer_in'],
      webhook_url: `${receiver.url}/x`,
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('validates addresses, chains, events and the webhook URL with 400 problems', async () => {
    const { auth } = await owner(2, 0n);
    const good = { addresses: [fresh().address], chains: ['base'], events: ['transfer_in'], webhook_url: `${receiver.url}/x` };
    const a = good.addresses[0];
    const i = a.slice(2).search(/[a-fA-F]/) + 2;
    const badChecksum = a.slice(0, i) + (a[i] === a[i].toUpperCase() ? a[i].toLowerCase() : a[i].toUpperCase()) + a.slice(i + 1);
    const cases: [string, Record<string, unknown>][] = [
      ['bad checksum', { ...good, addresses: [badChecksum] }],
      ['not an address', { ...good, addresses: ['0x1234'] }],
      ['1001 addresses', { ...good, addresses: Array.from({ length: 1001 }, () => fresh().address.toLowerCase()) }],
      ['no addresses', { ...good, addresses: [] }],
      ['unknown chain', { ...good, chains: ['solana'] }],
      ['unknown event', { ...good, events: ['approval'] }],
      ['ftp url', { ...good, webhook_url: 'ftp://example.com/x' }],
      ['http to a non-loopback host', { ...good, webhook_url: 'http://example.com/hook' }],
      ['credentials in the url', { ...good, webhook_url: 'https://user:pw@example.com/hook' }],
      ['65 confirmations', { ...good, confirmations: 65 }],
      ['negative confirmations', { ...good, confirmations: -1 }],
      ['fractional confirmations', { ...good, confirmations: 1.5 }],
    ];
    for (const [name, body] of cases) {
      const r = await call('POST', `${t.url}/v1/wallet-monitor`, body, auth);
      expect(r.status, name).toBe(400);
      expect(r.headers.get('content-type'), name).toContain('application/problem+json');
    }
    // lowercase and checksummed addresses are both fine; 1000 is the limit
    const many = Array.from({ length: 1000 }, () => fresh().address.toLowerCase());
    const ok = await call('POST', `${t.url}/v1/wallet-monitor`, { ...good, addresses: many }, auth);
    expect(ok.status).toBe(200);
    expect(ok.body.subscription_id).toMatch(/^sub_[0-9A-Z]{26}$/);
    expect(ok.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // at rest the signing secret is encrypted (WEBHOOK_SECRET_KEY), never the whsec_ text
    const stored = await t.gateway.services.redis.hget(walletMonitorKeys.walletMonitor(t.gateway.services.keys, 'sub', ok.body.subscription_id), 'secret');
    expect(stored).toMatch(/^enc:v1:/);
    expect(stored).not.toContain(ok.body.secret.slice(6));
    expect(ok.body.expires_at).toBeGreaterThan(Math.floor(Date.now() / 1000) + 29 * 24 * 3600);
  });

  it('shows status and stats only to the owner; unknown ids are 404', async () => {
    const a = await owner(3, 0n);
    const b = await owner(4, 0n);
    const sub = await subscribe(a.auth, { addresses: [fresh().address], chains: ['ethereum'], path: '/unused' });
    const mine = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}`, undefined, a.auth);
    expect(mine.status).toBe(200);
    // confirmations default to 0 (delivered at the watcher's depth)
    expect(mine.body).toMatchObject({
      subscription_id: sub.subscription_id,
      status: 'active',
      chains: ['ethereum'],
      renewals: 0,
      expires_at: sub.expires_at,
      confirmations: 0,
    });
    expect(mine.body.delivery).toMatchObject({ events: 0, delivered: 0, billed: '0', removed: 0 });
    const deep = await call(
      'POST',
      `${t.url}/v1/wallet-monitor`,
      { addresses: [fresh().address], chains: ['base'], events: ['transfer_in'], webhook_url: `${receiver.url}/unused`, confirmations: 64 },
      a.auth,
    );
    expect(deep.status, JSON.stringify(deep.body)).toBe(200);
    expect((await call('GET', `${t.url}/v1/wallet-monitor/${deep.body.subscription_id}`, undefined, a.auth)).body.confirmations).toBe(64);
    expect(mine.body.secret).toBeUndefined();
    expect((await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}`, undefined, b.auth)).status).toBe(403);
    expect((await call('GET', `${t.url}/v1/wallet-monitor/sub_${ulid()}`, undefined, a.auth)).status).toBe(404);
    expect((await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/cancel`, {}, b.auth)).status).toBe(403);
    expect((await call('POST', `${t.url}/v1/wallet-monitor/sub_${ulid()}/cancel`, {}, a.auth)).status).toBe(404);
  });
});

describe('deliveries', () => {
  it('delivers USDC and ETH transfers in and out (internal ETH transfers too), signed with Standard Webhooks, billed 0.001 USDC each', async () => {
    const { account, auth } = await owner(5);
    const balanceBefore = await t.gateway.services.ledger.balance(account.address);
    const w = fresh();
    const sub = await subscribe(auth, { addresses: [w.address.toLowerCase()], chains: ['ethereum'], path: '/in-out' });
    const funder = devAccount(2) as LocalAccount;
    const other = devAccount(3).address;

    // A forwarder contract: sends msg.value on to `w` with an internal CALL.
    const forwarder = '0x00000000000000000000000000000000000f0f0f' as Hex;
    const code = `0x60006000600060003473${w.address.slice(2).toLowerCase()}5af100` as Hex;
    await ethClients.testClient.setCode({ address: forwarder, bytecode: code });

    const txs = {
      ethIn: await sendEth(ethClients, funder, w.address, parseEther('1')),
      usdcIn: await sendUsdc(ethClients, eth.usdc, funder, w.address, parseUnits('5', 6)),
      ethOut: await sendEth(ethClients, w, other, parseEther('0.1')),
      usdcOut: await sendUsdc(ethClients, eth.usdc, w, other, parseUnits('1.5', 6)),
      internalIn: await sendEth(ethClients, funder, forwarder, parseEther('0.25')),
    };
    await waitFor('5 deliveries', () => events('/in-out').length >= 5);

    const hook = new Webhook(sub.secret);
    for (const r of receiver.delivered('/in-out')) {
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r.headers['webhook-signature']).toMatch(/^v1,/);
      // throws unless the signature over id.timestamp.body verifies with the subscription's secret
      expect(hook.verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`).verify(
        receiver.delivered('/in-out')[0].body,
        receiver.delivered('/in-out')[0].headers as Record<string, string>,
      ),
    ).toThrow();

    const got = events('/in-out');
    const byTx = (h: Hex) => got.filter((e) => e.tx_hash === h);
    expect(byTx(txs.ethIn)).toEqual([
      expect.objectContaining({
        type: 'transfer_in',
        chain: 'ethereum',
        from: funder.address,
        to: w.address,
        amount: parseEther('1').toString(),
        log_index: null,
        asset: { address: null, symbol: 'ETH', decimals: 18 },
      }),
    ]);
    expect(byTx(txs.usdcIn)).toEqual([
      expect.objectContaining({
        type: 'transfer_in',
        from: funder.address,
        to: w.address,
        amount: '5000000',
        asset: { address: eth.usdc, symbol: 'USDC', decimals: 6 },
      }),
    ]);
    expect(byTx(txs.usdcIn)[0].log_index).toEqual(expect.any(Number));
    expect(byTx(txs.ethOut)).toEqual([
      expect.objectContaining({ type: 'transfer_out', from: w.address, to: other, amount: parseEther('0.1').toString(), log_index: null }),
    ]);
    expect(byTx(txs.usdcOut)).toEqual([expect.objectContaining({ type: 'transfer_out', from: w.address, to: other, amount: '1500000' })]);
    expect(byTx(txs.internalIn)).toEqual([
      expect.objectContaining({ type: 'transfer_in', from: getAddress(forwarder), to: w.address, amount: parseEther('0.25').toString() }),
    ]);
    for (const e of got) {
      expect(e.subscription_id).toBe(sub.subscription_id);
      const receipt = await ethClients.publicClient.getTransactionReceipt({ hash: e.tx_hash as `0x${string}` });
      expect(e.block_hash).toBe(receipt.blockHash);
      expect(e.block_number).toBe(receipt.blockNumber.toString());
      expect(new Date(e.observed_at).toISOString()).toBe(e.observed_at);
    }
    expect(new Set(receiver.delivered('/in-out').map((r) => r.headers['webhook-id'])).size).toBe(5);

    const view = await subscriptionView('stats', sub, auth, (v) => v.delivery.delivered === 5 && v.delivery.pending === 0);
    expect(view.delivery).toMatchObject({ events: 5, delivered: 5, billed: '5000', failed_attempts: 0, dead_lettered: 0, last_status: 200 });
    expect(balanceBefore - (await t.gateway.services.ledger.balance(account.address))).toBe(5n * PRICE);
  });

  it('a receiver that fails for a while gets every event once it recovers, billed only for deliveries', async () => {
    const { account, auth } = await owner(6);
    const before = await t.gateway.services.ledger.balance(account.address);
    const w = fresh();
    const sub = await subscribe(auth, { addresses: [w.address], chains: ['base'], events: ['transfer_in'], path: '/flaky' });
    receiver.modes.set('/flaky', 'fail');
    const funder = devAccount(7) as LocalAccount;
    const hashes = [];
    for (let i = 1; i <= 3; i++) hashes.push(await sendUsdc(baseClients, t.stack.payment.usdc, funder, w.address, BigInt(i)));
    await waitFor('each event refused at least twice', () => receiver.attempts('/flaky').length >= 6);
    expect(receiver.delivered('/flaky')).toHaveLength(0);
    receiver.modes.set('/flaky', 'ok');
    await waitFor('3 deliveries after recovery', () => new Set(receiver.delivered('/flaky').map((r) => r.headers['webhook-id'])).size === 3);
    expect(
      events('/flaky')
        .map((e) => e.tx_hash)
        .sort(),
    ).toEqual([...hashes].sort());
    // every failed attempt carried the same webhook-id as the successful one
    const ids = new Set(receiver.attempts('/flaky').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(3);
    const view = await subscriptionView('stats settle', sub, auth, (v) => v.delivery.pending === 0);
    expect(view.delivery.delivered).toBe(3);
    expect(view.delivery.failed_attempts).toBeGreaterThanOrEqual(6);
    expect(view.delivery.billed).toBe('3000');
    expect(before - (await t.gateway.services.ledger.balance(account.address))).toBe(3n * PRICE);
  });

  it('dead-letters an event after the last attempt (nothing billed), lists it, and replays it with the same webhook-id', async () => {
    const { account, auth } = await owner(8);
    const before = await t.gateway.services.ledger.balance(account.address);
    const w = fresh();
    const sub = await subscribe(auth, { addresses: [w.address], chains: ['ethereum'], events: ['transfer_in'], path: '/dead' });
    receiver.modes.set('/dead', 'drop');
    const hash = await sendEth(ethClients, devAccount(4) as LocalAccount, w.address, 12345n);
    const listed = await waitFor(
      'a dead letter',
      async () => {
        const r = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/dead-letters`, undefined, auth);
        return r.body.dead_letters?.length === 1 ? r.body : undefined;
      },
      60_000,
    );
    expect(receiver.attempts('/dead')).toHaveLength(SCHEDULE.length);
    const dead = listed.dead_letters[0];
    expect(dead).toMatchObject({ attempts: SCHEDULE.length, last_status: 0, event: { tx_hash: hash, amount: '12345', type: 'transfer_in' } });
    expect(dead.webhook_id).toBe(receiver.attempts('/dead')[0].headers['webhook-id']);
    expect(await t.gateway.services.ledger.balance(account.address)).toBe(before);
    t.gateway.services.discovery.invalidate();
    const health = await call('GET', `${t.url}/status/health`);
    expect(health.body.wallet_monitor.backlog.dead_letters).toBeGreaterThanOrEqual(1);

    receiver.modes.set('/dead', 'ok');
    const replay = await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/dead-letters/replay`, {}, auth);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ subscription_id: sub.subscription_id, replayed: [dead.webhook_id] });
    await waitFor('the replayed delivery', () => receiver.delivered('/dead').length === 1);
    expect(receiver.delivered('/dead')[0].headers['webhook-id']).toBe(dead.webhook_id);
    const after = await subscriptionView('stats settle', sub, auth, (v) => v.delivery.pending === 0);
    expect(after.delivery).toMatchObject({ delivered: 1, dead_lettered: 0, billed: '1000' });
    expect((await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/dead-letters`, undefined, auth)).body.dead_letters).toEqual([]);
    expect(before - (await t.gateway.services.ledger.balance(account.address))).toBe(PRICE);
    // a second replay finds nothing
    expect((await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/dead-letters/replay`, {}, auth)).body.replayed).toEqual([]);
  });

  it('holds deliveries while the account is empty and delivers them once it is funded', async () => {
    const { account, auth } = await owner(9, 0n);
    const w = fresh();
    const sub = await subscribe(auth, { addresses: [w.address], chains: ['base'], events: ['transfer_in'], path: '/broke' });
    await sendEth(baseClients, devAccount(5) as LocalAccount, w.address, 1n);
    const refused = await subscriptionView('an attempt refused for balance', sub, auth, (v) => v.delivery.failed_attempts >= 1);
    expect(receiver.attempts('/broke')).toHaveLength(0); // nothing is sent that cannot be billed
    // the reason is in the JSON: a machine code and a sentence; no HTTP status, since nothing was sent
    expect(refused.last_error).toEqual({ code: 'insufficient_balance', message: expect.stringContaining('0.001 USDC'), status: null, at: expect.any(String) });
    expect(refused.delivery.last_status).toBeNull();
    const attempts = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/deliveries`, undefined, auth);
    expect(attempts.status).toBe(200);
    // newest first: on a busy machine the first retry (100 ms later) may already be refused too
    const log: { attempt: number }[] = attempts.body.deliveries;
    expect(log.at(-1)?.attempt).toBe(1);
    for (const entry of log) {
      expect(entry).toMatchObject({
        type: 'transfer_in',
        test: false,
        removed: false,
        replay: 0,
        outcome: 'failed',
        status: null,
        error: { code: 'insufficient_balance', message: refused.last_error.message },
      });
    }
    await t.gateway.services.ledger.credit(account.address, 5000n, 'deposit', `test-${ulid()}`);
    await waitFor('delivered after the deposit', () => receiver.delivered('/broke').length === 1);
    await waitFor('billed', async () => (await t.gateway.services.ledger.balance(account.address)) === 4000n);
    // a delivery clears last_error; the attempt log shows it, newest first
    const healed = await subscriptionView('last_error cleared', sub, auth, (v) => v.last_error === null);
    expect(healed.delivery.last_status).toBe(200);
    const after = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/deliveries?limit=1`, undefined, auth);
    expect(after.body.deliveries).toEqual([expect.objectContaining({ outcome: 'delivered', status: 200, error: null })]);
  });

  it('sends a test event through the normal path: signed, marked test, billed, listed; 403 for others, 409 once cancelled', async () => {
    const { account, auth } = await owner(3);
    const other = await owner(4, 0n);
    const w = fresh();
    const sub = await subscribe(auth, { addresses: [w.address], chains: ['arbitrum'], events: ['transfer_out'], path: '/test-event' });
    const before = await t.gateway.services.ledger.balance(account.address);
    const r = await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/test-event`, undefined, auth);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toMatchObject({
      subscription_id: sub.subscription_id,
      status: 'queued',
      webhook_id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      event: { type: 'transfer_out', chain: 'arbitrum', from: w.address, to: '0x0000000000000000000000000000000000000000', amount: '0', test: true },
    });
    const got = await waitFor('the test event', () => receiver.delivered('/test-event')[0]);
    expect(got.headers['webhook-id']).toBe(r.body.webhook_id);
    expect(await verifyWebhook(sub.secret, got.headers as Record<string, string>, got.body)).toEqual(r.body.event);
    await waitFor('billed like any event', async () => before - (await t.gateway.services.ledger.balance(account.address)) === PRICE);
    const listed = await waitFor('the attempt listed', async () => {
      const d = await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/deliveries`, undefined, auth);
      return d.body.deliveries.length === 1 ? d.body.deliveries : undefined;
    });
    expect(listed[0]).toMatchObject({
      webhook_id: r.body.webhook_id,
      type: 'transfer_out',
      test: true,
      attempt: 1,
      outcome: 'delivered',
      status: 200,
      error: null,
    });

    const foreign = await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/test-event`, undefined, other.auth);
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('content-type')).toContain('application/problem+json');
    expect((await call('GET', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/deliveries`, undefined, other.auth)).status).toBe(403);
    expect((await call('POST', `${t.url}/v1/wallet-monitor/sub_${ulid()}/test-event`, undefined, auth)).status).toBe(404);
    expect((await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/test-event`)).status).toBe(401);
    await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/cancel`, {}, auth);
    const cancelled = await call('POST', `${t.url}/v1/wallet-monitor/${sub.subscription_id}/test-event`, undefined, auth);
    expect(cancelled.status).toBe(409);
    expect(cancelled.body).toMatchObject({ reason: 'subscription_not_active', status: 409, subscription_status: 'cancelled' });
  });
});

describe('chain watchers', () => {
  it('delivers nothing for a block dropped by a reorg before its confirmation depth', async () => {
    const { auth } = await owner(2);
    const w = fresh();
    await subscribe(auth, { addresses: [w.address], chains: ['arbitrum'], events: ['transfer_in'], path: '/reorg' });
    const funder = devAccount(3) as LocalAccount;
    const dropped = await sendUsdc(arbClients, arb.usdc, funder, w.address, 777n);
    const droppedBlock = (await arbClients.publicClient.getTransactionReceipt({ hash: dropped })).blockHash;
    // replace the head block (the transfer's) by an empty one: anvil_reorg(depth 1, no transactions)
    await arbClients.publicClient.request({ method: 'anvil_reorg' as 'eth_chainId', params: [1, []] as never });
    const head = await arbClients.publicClient.getBlock();
    expect(head.hash).not.toBe(droppedBlock);
    const reincluded = await arbClients.publicClient.getTransactionReceipt({ hash: dropped }).catch(() => undefined);

    const control = await sendEth(arbClients, funder, w.address, 1n);
    await arbClients.testClient.mine({ blocks: 1 }); // the control block reaches depth 2
    await waitFor('the control event', () => events('/reorg').some((e) => e.tx_hash === control));
    expect(events('/reorg').filter((e) => e.block_hash === droppedBlock)).toEqual([]);
    if (!reincluded) expect(events('/reorg').filter((e) => e.tx_hash === dropped)).toEqual([]);
    else expect(reincluded.blockHash).not.toBe(droppedBlock);
  });

  it('follows a reorg of an already processed block: rewinds to the common ancestor and goes on without a gap', async () => {
    const { auth } = await owner(3);
    const w = fresh();
    await subscribe(auth, { addresses: [w.address], chains: ['ethereum'], events: ['transfer_in'], path: '/reorg1' });
    const funder = devAccount(6) as LocalAccount;
    const first = await sendEth(ethClients, funder, w.address, 1n);
    await waitFor('the first event', () => events('/reorg1').some((e) => e.tx_hash === first));
    const watcher = monitor.watchers.find((x) => x.chain === 'ethereum')!;
    await ethClients.publicClient.request({ method: 'anvil_reorg' as 'eth_chainId', params: [1, []] as never });
    const second = await sendEth(ethClients, funder, w.address, 2n);
    await waitFor('the event after the reorg', () => events('/reorg1').some((e) => e.tx_hash === second));
    // the first transfer left the chain with its block (unless it was mined again): a removed event follows it
    const again = await ethClients.publicClient.getTransactionReceipt({ hash: first }).catch(() => undefined);
    if (!again) await waitFor('the removed event', () => events('/reorg1').some((e) => e.tx_hash === first && e.removed));
    t.gateway.services.discovery.invalidate();
    const state = await call('GET', `${t.url}/status/health`);
    const eState = state.body.wallet_monitor.watchers.find((x: { chain: string }) => x.chain === 'ethereum');
    expect(eState.reorgs).toBeGreaterThanOrEqual(1);
    const cursor = (await watcher.cursor())!;
    expect((await ethClients.publicClient.getBlock({ blockNumber: cursor.number })).hash).toBe(cursor.hash);
  });

  it('resumes after a restart from its persisted cursor: a block mined while stopped is delivered exactly once', async () => {
    const { auth } = await owner(4);
    const w = fresh();
    await subscribe(auth, { addresses: [w.address], chains: ['ethereum'], events: ['transfer_in'], path: '/restart' });
    const watcher = monitor.watchers.find((x) => x.chain === 'ethereum')!;
    await watcher.stop();
    const hash = await sendEth(ethClients, devAccount(7) as LocalAccount, w.address, 3n);
    const whileStopped = await sendUsdc(ethClients, eth.usdc, devAccount(7) as LocalAccount, w.address, 4n);
    await watcher.start();
    await waitFor('both events', () => events('/restart').length >= 2);
    const later = await sendEth(ethClients, devAccount(7) as LocalAccount, w.address, 5n);
    await waitFor('the later event', () => events('/restart').some((e) => e.tx_hash === later));
    expect(receiver.delivered('/restart')).toHaveLength(3);
    expect(
      events('/restart')
        .map((e) => e.tx_hash)
        .sort(),
    ).toEqual([hash, whileStopped, later].sort());
  });
});

describe('lifecycle', () => {
  it('cancel stops deliveries (owner only, idempotent)', async () => {
    const { auth } = await owner(5);
    const w = fresh();
    const cancelled = await subscribe(auth, { addresses: [w.address], chains: ['base'], path: '/cancelled' });
    // a second subscription on the same address keeps receiving: only the cancelled one stops
    await subscribe(auth, { addresses: [w.address], chains: ['base'], path: '/control' });
    const r = await call('POST', `${t.url}/v1/wallet-monitor/${cancelled.subscription_id}/cancel`, {}, auth);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ subscription_id: cancelled.subscription_id, status: 'cancelled', cancelled_at: expect.any(Number) });
    const again = await call('POST', `${t.url}/v1/wallet-monitor/${cancelled.subscription_id}/cancel`, {}, auth);
    expect(again.body.cancelled_at).toBe(r.body.cancelled_at);
    const hash = await sendEth(baseClients, devAccount(8) as LocalAccount, w.address, 9n);
    await waitFor('the control subscription got it', () => events('/control').some((e) => e.tx_hash === hash));
    expect(receiver.attempts('/cancelled')).toEqual([]);
    const view = await call('GET', `${t.url}/v1/wallet-monitor/${cancelled.subscription_id}`, undefined, auth);
    expect(view.body).toMatchObject({ status: 'cancelled', cancelled_at: r.body.cancelled_at, delivery: { events: 0, billed: '0' } });
  });

  it('renews at expiry while the account has balance; an empty account lets it expire and stops deliveries', async () => {
    const funded = await owner(6);
    const empty = await owner(7, 0n);
    const w = fresh();
    const a = await subscribe(funded.auth, { addresses: [w.address], chains: ['base'], path: '/renewed' });
    const b = await subscribe(empty.auth, { addresses: [w.address], chains: ['base'], path: '/expired' });
    const later = a.expires_at + 1; // a clock just past both terms
    const result = await monitor.service.subscriptions.renewDue(Math.max(later, b.expires_at + 1));
    expect(result.renewed).toContain(a.subscription_id);
    expect(result.expired).toContain(b.subscription_id);
    const va = await call('GET', `${t.url}/v1/wallet-monitor/${a.subscription_id}`, undefined, funded.auth);
    expect(va.body).toMatchObject({ status: 'active', renewals: 1, expires_at: a.expires_at + 30 * 24 * 3600 });
    const vb = await call('GET', `${t.url}/v1/wallet-monitor/${b.subscription_id}`, undefined, empty.auth);
    expect(vb.body).toMatchObject({ status: 'expired', renewals: 0, expires_at: b.expires_at });
    const hash = await sendEth(baseClients, devAccount(9) as LocalAccount, w.address, 11n);
    await waitFor('the renewed subscription got it', () => events('/renewed').some((e) => e.tx_hash === hash));
    expect(receiver.attempts('/expired')).toEqual([]);
  });
});

describe('SDK', () => {
  it('signs in, subscribes, verifies a delivery with verifyWebhook, reads and cancels', async () => {
    const account = devAccount(2) as LocalAccount;
    await t.gateway.services.ledger.credit(account.address, 10_000n, 'deposit', `test-${ulid()}`);
    const auth = createAuthClient({ baseUrl: t.url });
    const token = await auth.signIn(account);
    expect(token).toMatchObject({ token_type: 'Bearer', address: account.address });
    const wm = createWalletMonitorClient({ baseUrl: t.url, token: () => auth.token()?.access_token });
    const w = fresh();
    const sub = await wm.subscribe({ addresses: [w.address], chains: ['ethereum'], events: ['transfer_in'], webhook_url: `${receiver.url}/sdk` });
    const hash = await sendEth(ethClients, devAccount(8) as LocalAccount, w.address, 42n);
    const r = await waitFor('the delivery', () => receiver.delivered('/sdk')[0]);
    const event = await verifyWebhook(sub.secret, r.headers as Record<string, string>, r.body);
    expect(event).toMatchObject({ type: 'transfer_in', tx_hash: hash, amount: '42', subscription_id: sub.subscription_id });
    await waitFor('stats', async () => (await wm.get(sub.subscription_id)).delivery.delivered === 1);
    expect((await wm.cancel(sub.subscription_id)).status).toBe('cancelled');
    expect(await wm.deadLetters(sub.subscription_id)).toEqual([]);
    await expect(wm.get(`sub_${ulid()}`)).rejects.toMatchObject({ status: 404 });
    await auth.signOut();
    await expect(createWalletMonitorClient({ baseUrl: t.url, token: token.access_token }).get(sub.subscription_id)).rejects.toMatchObject({ status: 401 });
  });
});

describe('billing and health', () => {
  it('bills exactly 0.001 USDC per delivered event still on chain, per account', async () => {
    // every owner's wallet-monitor usage lines, net of refunds, equal 1000 × its delivered events,
    // less those a reorg removed (credited back) and the removed events themselves (not billed)
    const owners = [2, 3, 4, 5, 6, 7, 8, 9].map((i) => devAccount(i).address);
    for (const address of owners) {
      const view = await t.gateway.services.ledger.view(address, 1000);
      const net = view.usage
        .filter((u) => u.item.endsWith('intelligence.wallet_monitor'))
        .reduce((s, u) => s + (u.kind === 'debit' ? BigInt(u.amount) : -BigInt(u.amount)), 0n);
      const ids: string[] = await t.gateway.services.redis.lrange(
        walletMonitorKeys.walletMonitor(t.gateway.services.keys, 'owner', address.toLowerCase()),
        0,
        -1,
      );
      let delivered = 0;
      let removed = 0;
      let billed = 0n;
      for (const id of ids) {
        const stats = await monitor.service.subscriptions.stats(id);
        delivered += stats.delivered;
        removed += stats.removed;
        billed += BigInt(stats.billed);
      }
      const removedEvents = receiver.requests.filter((r) => r.status === 200 && ids.includes(JSON.parse(r.body).subscription_id) && JSON.parse(r.body).removed);
      expect(net, address).toBe(billed);
      expect(net, address).toBe(BigInt(delivered - removed - removedEvents.length) * PRICE);
    }
  });

  it('reports delivery latency p50/p99, backlog and watchers in /status/health', async () => {
    t.gateway.services.discovery.invalidate();
    const r = await call('GET', `${t.url}/status/health`);
    expect(r.status).toBe(200);
    const wm = r.body.wallet_monitor;
    expect(wm.delivery_latency_ms.samples).toBeGreaterThan(0);
    expect(wm.delivery_latency_ms.p99).toBeGreaterThanOrEqual(wm.delivery_latency_ms.p50);
    expect(wm.backlog).toEqual({ waiting: expect.any(Number), delayed: expect.any(Number), active: expect.any(Number), dead_letters: expect.any(Number) });
    expect(wm.watchers.map((x: { chain: string }) => x.chain).sort()).toEqual(['arbitrum', 'base', 'ethereum']);
    expect(wm.watchers.find((x: { chain: string }) => x.chain === 'ethereum').native_source).toBe('trace_block');
    const cap = r.body.capabilities.find((c: { id: string }) => c.id === 'intelligence.wallet_monitor');
    expect(cap.latency_ms).toEqual(wm.delivery_latency_ms);
  });

  it("reports each delivery outcome to its observer, and the gateway exports the watchers' block lag", async () => {
    // the tests above delivered, retried, dead-lettered and dropped (cancelled) deliveries
    expect(outcomes.delivered).toBeGreaterThan(0);
    expect(outcomes.failed).toBeGreaterThan(0);
    expect(outcomes.dead_lettered).toBeGreaterThan(0);
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(200);
    const scrape = new Scrape(await res.text());
    for (const chain of ['ethereum', 'base', 'arbitrum']) {
      expect(scrape.sample('acg_wallet_monitor_lag_blocks', { chain }), chain).toBeDefined();
      expect(scrape.value('acg_wallet_monitor_lag_blocks', { chain })).toBeGreaterThanOrEqual(0);
    }
  });

  it('logs without repeated keys: module once, component and chain once (the watcher binds them itself)', () => {
    const parsed = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const watcherLines = parsed.filter((l) => l.component === 'watcher');
    expect(watcherLines.length).toBeGreaterThan(0);
    expect(watcherLines[0]).toMatchObject({ service: 'worker', module: 'wallet-monitor', component: 'watcher', chain: expect.any(String) });
    expect(parsed.some((l) => l.component === 'delivery')).toBe(true);
    for (const l of logLines) expect(repeatedKeys(l), l).toEqual([]);
  });

  it('is LIVE once probed: an unauthenticated POST answers 401 problem+json', async () => {
    const records = await t.gateway.prober.runOnce();
    expect(records['intelligence.wallet_monitor']).toMatchObject({ ok: true, probe: { status: 401, method: 'POST' } });
    t.gateway.services.discovery.invalidate();
    const catalog = await call('GET', `${t.url}/gateway-catalog.json`);
    expect(catalog.body.capabilities.find((c: { id: string }) => c.id === 'intelligence.wallet_monitor').status).toBe('LIVE');
  });
});
