import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setupPaymentChain, startAnvil, usdcBalance, type AnvilInstance } from '@acg/devnet';
import { startX402Reference, type X402Reference } from '@acg/devnet/x402Reference';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { createPermit2ApprovalTx } from '@x402/evm/upto/client';
import { createPublicClient, createWalletClient, http, type LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayContext,
  getChannel,
  payAndRetry,
  refundChannel,
  SpendLimitExceededError,
  topUpChannel,
  type GatewayContextOptions,
} from '../src/index.js';

/**
 * The SDK paying `upto` and `batch-settlement` (and `exact`) against the reference x402 resource server
 * (`@acg/devnet/x402Reference`: `@x402/express` + `x402ResourceServer`, the official `@x402/evm` server
 * schemes, the official `x402Facilitator` and `@x402/evm` facilitator schemes, unchanged, channels in
 * the official in-memory server storage) on a real anvil payment chain. Balances are read on chain.
 * Each test uses its own buyer (dev accounts 2-9).
 */
const BATCH = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003' as const;
let anvil: AnvilInstance | undefined;
let ref: X402Reference;
const dirs: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  // exact first in the 402: the client's preference, not the 402's order, picks the scheme
  ref = await startX402Reference({
    payment: await setupPaymentChain(anvil.rpcUrl),
    schemes: ['exact', 'upto', 'batch-settlement'],
    price: 1_000n,
    ceiling: 10_000n,
  });
});
afterAll(async () => {
  await ref?.close();
  await anvil?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const balance = (who: `0x${string}`) => usdcBalance(ref.payment.rpcUrl, who);
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'sdk-channels-'));
  dirs.push(d);
  return d;
};

/** A context on the reference server that records the PAYMENT-SIGNATURE payloads it sends. */
function client(account: LocalAccount, opts: Partial<GatewayContextOptions> = {}) {
  const sent: { type?: string; maxClaimableAmount?: string; scheme: string; deposit?: string }[] = [];
  let last = '';
  const recording: typeof fetch = async (input, init) => {
    const sig = new Headers(init?.headers).get('payment-signature');
    if (sig) {
      last = sig;
      const p = decodePaymentSignatureHeader(sig);
      const inner = p.payload as { type?: string; voucher?: { maxClaimableAmount?: string }; deposit?: { amount?: string } };
      sent.push({ scheme: p.accepted.scheme, type: inner.type, maxClaimableAmount: inner.voucher?.maxClaimableAmount, deposit: inner.deposit?.amount });
    }
    return fetch(input, init);
  };
  const ctx = createGatewayContext({ baseUrl: ref.url, account, fetch: recording, rpcUrl: ref.payment.rpcUrl, ...opts });
  const pay = (charge?: bigint) =>
    payAndRetry(ctx, {
      path: '/paid',
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', ...(charge !== undefined ? { 'x-charge': charge.toString() } : {}) },
      label: 'reference.paid',
      terms: { payTo: ref.payTo },
    });
  return { ctx, sent, pay, lastSignature: () => last };
}

async function approvePermit2(buyer: LocalAccount) {
  const pc = createPublicClient({ chain: ref.payment.chain, transport: http(ref.payment.rpcUrl) });
  const wallet = createWalletClient({ account: buyer, chain: ref.payment.chain, transport: http(ref.payment.rpcUrl) });
  // the official helper's transaction: approve Permit2 for USDC once
  await pc.waitForTransactionReceipt({ hash: await wallet.sendTransaction(createPermit2ApprovalTx(ref.payment.usdc)) });
}

describe('scheme preference', () => {
  it('default: exact, as before, even when upto and batch-settlement are offered', async () => {
    const buyer = ref.payment.buyers[0];
    const before = await balance(buyer.address);
    const c = client(buyer);
    const r = await c.pay();
    expect(r.response.status).toBe(200);
    expect(r.payment?.requirement.scheme).toBe('exact');
    expect(c.sent.map((s) => s.scheme)).toEqual(['exact']);
    expect(await balance(buyer.address)).toBe(before - 1_000n);
    expect(c.ctx.ledger.totals()).toEqual({ baseUnits: 1_000n, usdc: '0.001', pendingBaseUnits: 0n });
  });
});

describe('upto', () => {
  it('authorizes the ceiling, counts only what PAYMENT-RESPONSE says was settled', async () => {
    const buyer = ref.payment.buyers[1];
    await approvePermit2(buyer);
    const before = await balance(buyer.address);
    const treasuryBefore = await balance(ref.payTo);
    const c = client(buyer, { schemes: ['upto', 'exact'], spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.02' } });
    const r = await c.pay(4_200n);
    expect(r.response.status).toBe(200);
    expect(r.payment?.requirement).toMatchObject({ scheme: 'upto', amount: '10000' });
    expect(r.payment?.settlement).toMatchObject({ success: true, amount: '4200' });
    expect(await balance(buyer.address)).toBe(before - 4_200n);
    expect(await balance(ref.payTo)).toBe(treasuryBefore + 4_200n);
    expect(c.ctx.ledger.totals()).toEqual({ baseUnits: 4_200n, usdc: '0.0042', pendingBaseUnits: 0n });
    // a zero settlement counts nothing
    await c.pay(0n);
    expect(c.ctx.ledger.totals().baseUnits).toBe(4_200n);
  });

  it('the ceiling counts against the limits until settled: refused when it would exceed them, nothing signed', async () => {
    const buyer = ref.payment.buyers[1];
    const before = await balance(buyer.address);
    const perCall = client(buyer, { schemes: ['upto'], spendLimits: { perCallUsdc: '0.009' } });
    await expect(perCall.pay(1n)).rejects.toMatchObject({ name: 'SpendLimitExceededError', limit: 'perCall', amount: 10_000n });
    // each call settles 1000 of its 10000 ceiling: the n-th call needs (n - 1) x 1000 + 10000 <= 14000, so 5 fit
    const total = client(buyer, { schemes: ['upto'], spendLimits: { totalUsdc: '0.014' } });
    for (let i = 0; i < 5; i++) await total.pay(1_000n);
    const err = await total.pay(1_000n).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpendLimitExceededError);
    expect(err).toMatchObject({ limit: 'total', amount: 10_000n });
    expect(perCall.sent).toHaveLength(0);
    expect(total.sent).toHaveLength(5);
    expect(await balance(buyer.address)).toBe(before - 5_000n);
  });
});

describe('upto with EIP-2612 gas sponsoring', () => {
  it('a buyer who never approved Permit2 pays: the official client adds an EIP-2612 permit when the 402 declares the extension', async () => {
    const sponsored = await startX402Reference({ payment: ref.payment, schemes: ['upto'], ceiling: 10_000n, eip2612GasSponsoring: true });
    try {
      const buyer = ref.payment.buyers[6]; // no Permit2 allowance
      const before = await balance(buyer.address);
      const ctx = createGatewayContext({ baseUrl: sponsored.url, account: buyer, rpcUrl: ref.payment.rpcUrl, schemes: ['upto'] });
      const r = await payAndRetry(ctx, {
        path: '/paid',
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-charge': '2500' },
        label: 'reference.paid',
      });
      expect(r.response.status).toBe(200);
      expect(r.payment?.settlement).toMatchObject({ success: true, amount: '2500' });
      expect(await balance(buyer.address)).toBe(before - 2_500n);
      expect(ctx.ledger.totals().baseUnits).toBe(2_500n);
    } finally {
      await sponsored.close();
    }
  });
});

describe('batch-settlement', () => {
  it('opens a channel with one deposit, then pays with cumulative vouchers; a restarted client with the same file goes on with the same channel', async () => {
    const buyer = ref.payment.buyers[2];
    const dir = tempDir();
    const before = await balance(buyer.address);
    const escrowBefore = await balance(BATCH);
    const a = client(buyer, { schemes: ['batch-settlement', 'exact'], channelStorage: dir, spendLimits: { totalUsdc: '1' } });
    for (let i = 0; i < 3; i++) expect((await a.pay()).response.status).toBe(200);
    // one deposit (the 402's minDeposit, 10 x the price), then vouchers for the cumulative amount
    expect(a.sent).toEqual([
      { scheme: 'batch-settlement', type: 'deposit', maxClaimableAmount: '1000', deposit: '10000' },
      { scheme: 'batch-settlement', type: 'voucher', maxClaimableAmount: '2000', deposit: undefined },
      { scheme: 'batch-settlement', type: 'voucher', maxClaimableAmount: '3000', deposit: undefined },
    ]);
    expect(await balance(buyer.address)).toBe(before - 10_000n);
    expect(await balance(BATCH)).toBe(escrowBefore + 10_000n);
    // spent: what the vouchers charged; the rest of the deposit is escrow, counted towards the total
    expect(a.ctx.ledger.totals()).toEqual({ baseUnits: 3_000n, usdc: '0.003', pendingBaseUnits: 0n, escrowBaseUnits: 7_000n });

    // "restart": a new client, same account, same channel file, no memory of the first
    const b = client(buyer, { schemes: ['batch-settlement'], channelStorage: dir });
    for (let i = 0; i < 2; i++) await b.pay(500n); // the server charges 500 of the 1000 voucher increment
    expect(b.sent).toEqual([
      { scheme: 'batch-settlement', type: 'voucher', maxClaimableAmount: '4000', deposit: undefined },
      { scheme: 'batch-settlement', type: 'voucher', maxClaimableAmount: '4500', deposit: undefined },
    ]);
    expect(await balance(buyer.address)).toBe(before - 10_000n); // no second deposit
    expect(b.ctx.ledger.totals().baseUnits).toBe(1_000n);
    const channel = await b.ctx.channels.storage();
    const info = await getChannel(b.ctx, { path: '/paid', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(info.state).toMatchObject({ chargedCumulativeAmount: '4000', balance: '10000' });
    expect(await channel.get(info.channelId)).toEqual(info.state);
    expect((await ref.channelStorage.get(info.channelId))?.chargedCumulativeAmount).toBe('4000');

    // the server claims the vouchers in one batch and settles them to payTo
    const treasuryBefore = await balance(ref.payTo);
    const claimed = await ref.channels.claimAndSettle();
    expect(claimed.claims.reduce((n, c) => n + c.vouchers, 0)).toBe(1);
    expect(await balance(ref.payTo)).toBe(treasuryBefore + 4_000n);

    // a cooperative refund: the 6000 not charged comes back at once
    const buyerBeforeRefund = await balance(buyer.address);
    const refund = await refundChannel(b.ctx, { path: '/paid', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(refund.settlement.success).toBe(true);
    expect(await balance(buyer.address)).toBe(buyerBeforeRefund + 6_000n);
    expect(await balance(BATCH)).toBe(escrowBefore);
  });

  it('the limits hold: a deposit counts when made (made smaller to fit), a voucher its increment; over them nothing is signed', async () => {
    const buyer = ref.payment.buyers[3];
    const before = await balance(buyer.address);
    const opts = { schemes: ['batch-settlement'] as const, channelStorage: tempDir() };
    const perCall = client(buyer, { ...opts, spendLimits: { perCallUsdc: '0.0009' } });
    await expect(perCall.pay()).rejects.toMatchObject({ name: 'SpendLimitExceededError', limit: 'perCall', amount: 1_000n });
    const tooSmall = client(buyer, { ...opts, spendLimits: { totalUsdc: '0.0005' } });
    // the deposit it would make (the 402's minDeposit, 0.01): not even the voucher's 0.001 fits the total
    await expect(tooSmall.pay()).rejects.toMatchObject({ name: 'SpendLimitExceededError', limit: 'total', amount: 10_000n });
    expect([...perCall.sent, ...tooSmall.sent]).toEqual([]);
    expect(await balance(buyer.address)).toBe(before);

    // total 0.005: the 402 asks a 0.01 minimum deposit; 0.005 still covers a voucher, so the deposit is 0.005
    const c = client(buyer, { ...opts, spendLimits: { totalUsdc: '0.005' } });
    for (let i = 0; i < 5; i++) await c.pay();
    expect(c.sent[0]).toMatchObject({ type: 'deposit', deposit: '5000' });
    expect(c.ctx.ledger.totals()).toEqual({ baseUnits: 5_000n, usdc: '0.005', pendingBaseUnits: 0n });
    // the 6th needs a top-up the total does not allow
    await expect(c.pay()).rejects.toMatchObject({ name: 'SpendLimitExceededError', limit: 'total' });
    expect(c.sent).toHaveLength(5);
    expect(await balance(buyer.address)).toBe(before - 5_000n);
  });

  it('topUp: the next payment deposits that much more with its voucher', async () => {
    const buyer = ref.payment.buyers[4];
    const before = await balance(buyer.address);
    const c = client(buyer, { schemes: ['batch-settlement'], channelDepositUsdc: '0.002', spendLimits: { totalUsdc: '0.05' } });
    await c.pay();
    await c.pay();
    await c.pay(); // the 0.002 deposit is used up: an automatic top-up of 0.002
    expect(c.sent.map((s) => s.deposit)).toEqual(['2000', undefined, '2000']);
    topUpChannel(c.ctx, { amountUsdc: '0.02' });
    await c.pay();
    await c.pay();
    expect(c.sent.slice(3)).toEqual([
      { scheme: 'batch-settlement', type: 'deposit', maxClaimableAmount: '4000', deposit: '20000' },
      { scheme: 'batch-settlement', type: 'voucher', maxClaimableAmount: '5000', deposit: undefined },
    ]);
    expect(await balance(buyer.address)).toBe(before - 24_000n);
    expect(c.ctx.ledger.totals()).toEqual({ baseUnits: 5_000n, usdc: '0.005', pendingBaseUnits: 0n, escrowBaseUnits: 19_000n });
    const info = await getChannel(c.ctx, { path: '/paid', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(info.state).toMatchObject({ chargedCumulativeAmount: '5000', balance: '24000' });
    expect(info.escrowBaseUnits).toBe(19_000n);
  });

  it("a crash before the answer was stored: the stale voucher gets the server's corrective 402, the client resyncs and pays once; a replayed voucher is refused", async () => {
    const buyer = ref.payment.buyers[5];
    const dir = tempDir();
    const a = client(buyer, { schemes: ['batch-settlement'], channelStorage: dir });
    await a.pay();
    const storage = await a.ctx.channels.storage();
    const info = await getChannel(a.ctx, { path: '/paid', body: '{}', headers: { 'content-type': 'application/json' } });
    const afterFirst = await storage.get(info.channelId);
    await a.pay();
    // the process "crashed" after the second voucher was accepted but before its answer was stored
    await storage.set(info.channelId, afterFirst!);
    const before = await balance(buyer.address);
    const b = client(buyer, { schemes: ['batch-settlement'], channelStorage: dir });
    const r = await b.pay();
    expect(r.response.status).toBe(200);
    // the stale voucher (2000, already charged) was refused, the re-signed one claims 3000
    expect(b.sent.map((s) => s.maxClaimableAmount)).toEqual(['2000', '3000']);
    expect(b.ctx.ledger.totals().baseUnits).toBe(1_000n);
    expect((await ref.channelStorage.get(info.channelId))?.chargedCumulativeAmount).toBe('3000');
    expect(await balance(buyer.address)).toBe(before);

    // the same signed voucher sent again (a replay): refused, nothing charged twice
    const replayed = await fetch(`${ref.url}/paid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': b.lastSignature() },
      body: '{}',
    });
    expect(replayed.status).toBe(402);
    expect((await ref.channelStorage.get(info.channelId))?.chargedCumulativeAmount).toBe('3000');
  });
});
