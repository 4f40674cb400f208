import { devClients, mintUsdc, startDevStack, usdcBalance, type DevClients, type DevStack } from '@acg/devnet';
import { RefundQueue, readRefund, startRefundWorker, TreasurySender, type SignedTransfer } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { parseAbiItem, type Account } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_PASS_LEASE_MS, ProviderLedger, runPayoutPass, startPayouts, type PayoutHooks } from '../src/index.js';
import { providerLedgerKeys } from '../src/commands/keys.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000));

let stack: DevStack;
let clients: DevClients;
let redis: Redis;
let bullRedis: Redis;

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  clients = await devClients(stack.payment.rpcUrl);
  redis = connectRedis({ url: stack.redis.url });
  bullRedis = connectRedis({ url: stack.redis.url, forBullmq: true });
  // what buyers paid to the treasury (payTo) over time
  await mintUsdc(stack.payment.rpcUrl, stack.payment.treasury.address, USDC(1_000));
});
afterAll(async () => {
  redis?.disconnect();
  bullRedis?.disconnect();
  await stack?.stop();
});

/** A ledger on a fresh key prefix with a movable clock, a treasury sender, and a pass runner. */
function setup(o: { treasury?: Account } = {}) {
  const keys = new RedisKeys(`acg:test:payouts:${ulid()}:`);
  const clock = { now: Date.now() };
  const ledger = new ProviderLedger({ redis, keys, feeBps: 1000, disputeWindowSeconds: 60, now: () => clock.now });
  const sender = new TreasurySender({
    redis,
    keys,
    rpcUrl: stack.payment.rpcUrl,
    chain: stack.payment.chain,
    treasury: o.treasury ?? stack.payment.treasury,
    asset: stack.payment.usdc,
  });
  const pass = (hooks?: PayoutHooks) =>
    runPayoutPass({ ledger, redis, keys, sender, minimum: USDC(1), disputeAutoResolveSeconds: 604_800, log, hooks, now: () => clock.now });
  return { keys, clock, ledger, sender, pass };
}

/** A provider with a fresh payout address (no USDC). */
function provider() {
  return { id: `prv_${ulid()}`, address: privateKeyToAccount(generatePrivateKey()).address };
}

async function credit(ledger: ProviderLedger, p: { id: string; address: `0x${string}` }, price: bigint) {
  return ledger.credit({
    execution_id: `exe_${ulid()}`,
    provider_id: p.id,
    provider_address: p.address,
    capability_id: 'intelligence.echo',
    payer: stack.payment.buyers[0].address,
    price,
    payment_tx_hash: `0x${'ab'.repeat(32)}`,
  });
}

/** Runs a pass that is killed right after it signs a transfer: its report, and the transfer it signed (never broadcast). */
async function passKilledAfterSigning(pass: ReturnType<typeof setup>['pass']) {
  let signed: SignedTransfer | undefined;
  const killed = await pass({
    afterSign: (_payout, s) => {
      signed = s;
      throw new Error('killed');
    },
  });
  expect(signed).toBeDefined();
  return { killed, signed: signed! };
}

const balanceOf = (address: `0x${string}`) => usdcBalance(stack.payment.rpcUrl, address, stack.payment.usdc);
const transfersTo = (to: `0x${string}`, from: `0x${string}` = stack.payment.treasury.address) =>
  clients.publicClient.getLogs({ address: stack.payment.usdc, event: TRANSFER, args: { from, to }, fromBlock: 0n });

describe('payout pass', () => {
  it('after the dispute window sends exactly the available balance on-chain, once', async () => {
    const { ledger, clock, pass } = setup();
    const p = provider();
    await credit(ledger, p, USDC(1.5));
    await credit(ledger, p, USDC(0.7));
    const early = await pass();
    expect(early).toMatchObject({ ran: true, sent: [], pending: [], failed: [] });
    expect(await balanceOf(p.address)).toBe(0n);

    clock.now += 60_000;
    const report = await pass();
    expect(report.matured).toBe(2);
    expect(report.sent).toHaveLength(1);
    expect(report.sent[0]).toMatchObject({ provider_id: p.id, amount: USDC(1.35) + USDC(0.63) });
    expect(await balanceOf(p.address)).toBe(USDC(1.98));
    expect(await ledger.balance(p.id)).toEqual({ held: '0', available: '0', paid: '1980000' });
    const [view] = await ledger.payouts(p.id);
    expect(view).toMatchObject({ payout_id: report.sent[0].payout_id, amount: '1980000', status: 'sent', tx_hash: report.sent[0].tx_hash });
    const receipt = await clients.publicClient.getTransactionReceipt({ hash: view.tx_hash as `0x${string}` });
    expect(receipt.status).toBe('success');

    expect((await pass()).sent).toEqual([]);
    expect(await transfersTo(p.address)).toHaveLength(1);
    expect(await balanceOf(p.address)).toBe(USDC(1.98));
  });

  it('leaves a balance below PROVIDER_PAYOUT_MIN_USDC available until it reaches it', async () => {
    const { ledger, clock, pass } = setup();
    const p = provider();
    await credit(ledger, p, USDC(1)); // share 0.9
    clock.now += 60_000;
    expect((await pass()).sent).toEqual([]);
    expect(await ledger.balance(p.id)).toEqual({ held: '0', available: '900000', paid: '0' });
    await credit(ledger, p, USDC(0.2)); // share 0.18, held
    clock.now += 60_000;
    expect((await pass()).sent.map((s) => s.amount)).toEqual([USDC(1.08)]);
    expect(await balanceOf(p.address)).toBe(USDC(1.08));
  });

  it('killed right after the reservation: the next pass sends it once', async () => {
    const { ledger, clock, pass } = setup();
    const p = provider();
    await credit(ledger, p, USDC(2));
    clock.now += 60_000;
    const killed = await pass({
      afterReserve: () => {
        throw new Error('killed');
      },
    });
    expect(killed.sent).toEqual([]);
    expect(killed.pending).toHaveLength(1);
    const [reserved] = await ledger.reservedPayouts();
    expect(reserved).toMatchObject({ payout_id: killed.pending[0], amount: USDC(1.8), status: 'reserved' });
    expect(await ledger.balance(p.id)).toEqual({ held: '0', available: '0', paid: '1800000' });
    expect(await balanceOf(p.address)).toBe(0n);

    const again = await pass();
    expect(again.sent.map((s) => s.payout_id)).toEqual([reserved.payout_id]);
    expect(await pass()).toMatchObject({ sent: [], pending: [] });
    expect(await transfersTo(p.address)).toHaveLength(1);
    expect(await balanceOf(p.address)).toBe(USDC(1.8));
    expect(await ledger.totals()).toMatchObject({ reserved: 0n, paid: USDC(1.8), available: 0n });
  });

  it('killed right after signing: the next pass broadcasts the stored transaction, not a second one', async () => {
    const { ledger, clock, pass } = setup();
    const p = provider();
    await credit(ledger, p, USDC(3));
    clock.now += 60_000;
    const { killed, signed } = await passKilledAfterSigning(pass);
    expect(killed.pending).toHaveLength(1);
    await expect(clients.publicClient.getTransaction({ hash: signed.hash })).rejects.toThrow();
    expect(await balanceOf(p.address)).toBe(0n);

    const again = await pass();
    expect(again.sent).toEqual([expect.objectContaining({ payout_id: killed.pending[0], tx_hash: signed.hash })]);
    expect(await pass()).toMatchObject({ sent: [], pending: [] });
    expect(await transfersTo(p.address)).toHaveLength(1);
    expect(await balanceOf(p.address)).toBe(USDC(2.7));
  });

  it('killed after signing while another treasury transfer took its nonce: re-signed, still one transfer', async () => {
    const { ledger, clock, pass, sender, keys } = setup();
    const p = provider();
    await credit(ledger, p, USDC(4));
    clock.now += 60_000;
    const { killed, signed } = await passKilledAfterSigning(pass);
    expect(killed.pending).toHaveLength(1);
    // a refund from the same treasury goes out meanwhile and is mined with the nonce the payout had signed
    const buyer = stack.payment.buyers[1].address;
    const before = await balanceOf(buyer);
    const refundRecord = inMemoryRecord();
    const refund = await sender.transferOnce({ to: buyer, amount: USDC(0.5), record: refundRecord });
    expect(refund.status).toBe('success');
    expect((await refundRecord.load())!.nonce).toBe(signed.nonce);
    expect(await balanceOf(buyer)).toBe(before + USDC(0.5));

    const again = await pass();
    expect(again.sent).toHaveLength(1);
    expect(again.sent[0].tx_hash).not.toBe(signed.hash);
    expect(await transfersTo(p.address)).toHaveLength(1);
    expect(await balanceOf(p.address)).toBe(USDC(3.6));
    expect(await redis.hget(providerLedgerKeys.providerPayout(keys, killed.pending[0]), 'status')).toBe('sent');
  });

  it('a transfer that would revert (treasury without USDC) fails the payout and makes the amount available again', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    await clients.testClient.setBalance({ address: poor.address, value: 10n ** 18n });
    const { ledger, clock, pass } = setup({ treasury: poor });
    const p = provider();
    await credit(ledger, p, USDC(2));
    clock.now += 60_000;
    const report = await pass();
    expect(report.failed).toEqual([expect.objectContaining({ provider_id: p.id, amount: USDC(1.8), tx_hash: null })]);
    expect(await ledger.balance(p.id)).toEqual({ held: '0', available: '1800000', paid: '0' });
    expect((await ledger.payouts(p.id))[0]).toMatchObject({ status: 'failed', amount: '1800000' });
  });

  it('runs on a schedule: one pass per interval across processes, and runNow on demand', async () => {
    const { ledger, clock, keys, sender } = setup();
    const p = provider();
    await credit(ledger, p, USDC(1.2));
    clock.now += 60_000;
    const o = { ledger, redis, keys, sender, minimum: USDC(1), disputeAutoResolveSeconds: 604_800, log, now: () => clock.now, intervalSeconds: 3600 };
    const a = startPayouts(o);
    const b = startPayouts(o);
    // both processes tick at once: one pass runs (the lease), the other finds it not due
    await waitFor(async () => (await balanceOf(p.address)) === USDC(1.08));
    await credit(ledger, p, USDC(1.2));
    clock.now += 60_000;
    expect((await a.runNow()).ran).toBe(true);
    expect(await balanceOf(p.address)).toBe(USDC(2.16));
    await Promise.all([a.stop(), b.stop()]);
    expect(await transfersTo(p.address)).toHaveLength(2);
  });
});

describe('a process that dies during a payout pass (issue 33)', () => {
  it('delays payouts by at most one interval: its short lease lapses and the next tick of another process pays', { timeout: 180_000 }, async () => {
    const { ledger, clock, keys, sender } = setup();
    const p = provider();
    await credit(ledger, p, USDC(1.5));
    clock.now += 60_000;
    // the dying process has its own Redis connection; it reserves the payout, then dies (its
    // connection drops: nothing renews or releases its lease, as after a kill -9)
    const dying = connectRedis({ url: stack.redis.url });
    let reserved!: () => void;
    const reachedReserve = new Promise<void>((r) => {
      reserved = r;
    });
    const pass = { ledger, keys, sender, minimum: USDC(1), disputeAutoResolveSeconds: 604_800, log, now: () => clock.now };
    void runPayoutPass({
      ...pass,
      redis: dying,
      hooks: {
        afterReserve: () => {
          reserved();
          dying.disconnect();
          return new Promise<void>(() => undefined); // never returns: the process is gone
        },
      },
    }).catch(() => undefined);
    await reachedReserve;
    const leaseKey = providerLedgerKeys.providerPayoutPass(keys, 'lock');
    const ttl = await redis.pttl(leaseKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(PAYOUT_PASS_LEASE_MS);
    // another process, ticking every second, with a pass due once an hour: it pays once the lease lapses
    const other = startPayouts({ ...pass, redis, intervalSeconds: 3600, tickSeconds: 1 });
    try {
      await waitFor(async () => (await balanceOf(p.address)) === USDC(1.35), 75_000);
    } finally {
      await other.stop();
    }
    expect(await transfersTo(p.address)).toHaveLength(1);
    expect(await ledger.balance(p.id)).toEqual({ held: '0', available: '0', paid: '1350000' });
  });

  it('keeps its lease while one step outlasts it (renewed on a timer), so no second pass starts meanwhile', { timeout: 180_000 }, async () => {
    const { ledger, clock, keys, sender } = setup();
    const p = provider();
    await credit(ledger, p, USDC(1.5));
    clock.now += 60_000;
    const o = { ledger, redis, keys, sender, minimum: USDC(1), disputeAutoResolveSeconds: 604_800, log, now: () => clock.now };
    let second: Awaited<ReturnType<typeof runPayoutPass>> | undefined;
    const first = await runPayoutPass({
      ...o,
      hooks: {
        afterReserve: async () => {
          await new Promise((r) => setTimeout(r, PAYOUT_PASS_LEASE_MS + 2_000));
          second = await runPayoutPass(o);
        },
      },
    });
    expect(second?.ran).toBe(false);
    expect(first.pending).toHaveLength(0);
    expect(first.sent).toEqual([expect.objectContaining({ provider_id: p.id, amount: USDC(1.35) })]);
    expect(await transfersTo(p.address)).toHaveLength(1);
  });
});

describe('treasury nonces follow the chain (issue 33)', () => {
  const rpc = (method: string, params: unknown[]) => clients.publicClient.request({ method, params } as never) as Promise<unknown>;
  const treasuryNonce = (blockTag: 'latest' | 'pending') => clients.publicClient.getTransactionCount({ address: stack.payment.treasury.address, blockTag });

  it('a transfer the node dropped is sent again at its nonce by the next attempt, once', { timeout: 120_000 }, async () => {
    const { keys } = setup();
    const sender = new TreasurySender({
      redis,
      keys,
      rpcUrl: stack.payment.rpcUrl,
      chain: stack.payment.chain,
      treasury: stack.payment.treasury,
      asset: stack.payment.usdc,
      receiptTimeoutMs: 1_000,
    });
    const to = provider().address;
    const record = inMemoryRecord();
    await rpc('evm_setAutomine', [false]);
    try {
      await expect(sender.transferOnce({ to, amount: 321n, record })).rejects.toThrow();
      const signed = await record.load();
      expect(signed).toBeDefined();
      await rpc('anvil_dropTransaction', [signed!.hash]);
      expect(await treasuryNonce('pending')).toBe(signed!.nonce);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    expect(await sender.transferOnce({ to, amount: 321n, record })).toMatchObject({ status: 'success' });
    expect(await sender.transferOnce({ to, amount: 321n, record })).toMatchObject({ status: 'success' });
    expect(await transfersTo(to)).toHaveLength(1);
    expect(await balanceOf(to)).toBe(321n);
  });

  it("after the chain's treasury nonce falls (a reorg), the next transfers use the chain's nonce: no gap, nothing wedged", { timeout: 120_000 }, async () => {
    const { sender } = setup();
    const start = await treasuryNonce('latest');
    for (let i = 0; i < 2; i++) expect((await sender.transferOnce({ to: provider().address, amount: 1n, record: inMemoryRecord() })).status).toBe('success');
    await rpc('anvil_reorg', [2, []]);
    await rpc('anvil_setNonce', [stack.payment.treasury.address, `0x${start.toString(16)}`]);
    const to = provider().address;
    expect(await sender.transferOnce({ to, amount: 77n, record: inMemoryRecord() })).toMatchObject({ status: 'success' });
    expect(await treasuryNonce('latest')).toBe(start + 1);
    expect(await balanceOf(to)).toBe(77n);
  });
});

describe('treasury send lock', () => {
  it('two attempts on one transfer at once (e.g. a pass that outlived its lease) send it once', async () => {
    const { sender } = setup();
    const to = provider().address;
    const record = inMemoryRecord();
    const [a, b] = await Promise.all([sender.transferOnce({ to, amount: 123n, record }), sender.transferOnce({ to, amount: 123n, record })]);
    expect(a).toEqual(b);
    expect(a.status).toBe('success');
    expect(await transfersTo(to)).toHaveLength(1);
    expect(await balanceOf(to)).toBe(123n);
  });

  it('lets the refund worker and the payouts send from the same treasury at once without nonce collisions', async () => {
    const { ledger, clock, pass, keys } = setup();
    const providers = [provider(), provider(), provider()];
    for (const p of providers) await credit(ledger, p, USDC(2));
    clock.now += 60_000;
    const queue = new RefundQueue(redis, keys, bullRedis);
    const worker = startRefundWorker({
      redis,
      keys,
      connection: bullRedis,
      rpcUrl: stack.payment.rpcUrl,
      chain: stack.payment.chain,
      treasury: stack.payment.treasury,
      asset: stack.payment.usdc,
      log,
    });
    let failedAttempts = 0;
    worker.on('failed', () => failedAttempts++);
    try {
      const buyers = stack.payment.buyers.slice(2, 5).map((b) => b.address);
      const before = await Promise.all(buyers.map(balanceOf));
      const ops = buyers.map(() => `dsp_${ulid()}`);
      await Promise.all(buyers.map((payer, i) => queue.enqueue({ operationId: ops[i], payer, amount: '250000', paymentTxHash: `0x${'cd'.repeat(32)}` })));
      const report = await pass();
      expect(report.pending).toEqual([]);
      expect(report.sent).toHaveLength(3);
      await waitFor(async () => (await Promise.all(ops.map((op) => readRefund(redis, keys, op)))).every((r) => r?.status === 'sent'));
      expect(failedAttempts).toBe(0);
      expect(await Promise.all(buyers.map(balanceOf))).toEqual(before.map((b) => b + 250_000n));
      for (const p of providers) expect(await balanceOf(p.address)).toBe(USDC(1.8));
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});

function inMemoryRecord() {
  let stored: SignedTransfer | undefined;
  return {
    load: async () => stored,
    save: async (s: SignedTransfer) => {
      stored = s;
    },
    clear: async (hash: `0x${string}`) => {
      if (stored?.hash === hash) stored = undefined;
    },
  };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
