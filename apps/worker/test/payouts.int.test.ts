import { configFromEnv } from '@acg/config';
import { devPrivateKey, mintUsdc, startDevStack, usdcBalance, type DevStack } from '@acg/devnet';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../src/index.js';

let stack: DevStack;
let worker: RunningWorker;

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  const config = configFromEnv(
    {},
    {
      redisUrl: stack.redis.url,
      keyPrefix: `acg:test:${ulid()}:`,
      payment: {
        rpcUrl: stack.payment.rpcUrl,
        payTo: stack.payment.treasury.address,
        facilitatorPrivateKey: devPrivateKey(0),
        treasuryPrivateKey: devPrivateKey(1),
      },
      providers: { disputeWindowSeconds: 0.2, payoutMinBaseUnits: '500000' },
    },
  );
  await mintUsdc(stack.payment.rpcUrl, stack.payment.treasury.address, 100_000_000n);
  worker = await startWorker(config, { log: pino({ level: 'silent' }), walletMonitor: false, paymentRecovery: false });
});
afterAll(async () => {
  await worker?.close();
  await stack?.stop();
});

describe('worker payouts', () => {
  it('startWorker runs the payout pass: a matured share is sent from the treasury, once', async () => {
    expect(worker.payouts).toBeDefined();
    // the schedule's first pass starts with the worker: let it end (nothing to pay) before the share exists
    await worker.payouts!.runNow();
    const provider = privateKeyToAccount(generatePrivateKey()).address;
    const ledger = worker.services.providerLedger;
    const providerId = `prv_${ulid()}`;
    const { share } = await ledger.credit({
      execution_id: `exe_${ulid()}`,
      provider_id: providerId,
      provider_address: provider,
      capability_id: 'intelligence.echo',
      payer: stack.payment.buyers[0].address,
      price: 750_000n,
      payment_tx_hash: `0x${'ab'.repeat(32)}`,
    });
    expect(share).toBe(675_000n);
    // the window is 0.2 s: wait until the share matured, then run a pass on demand
    for (let i = 0; i < 100 && (await ledger.balance(providerId)).available === '0'; i++) await new Promise((r) => setTimeout(r, 50));
    const report = await worker.payouts!.runNow();
    expect(report.sent).toEqual([expect.objectContaining({ provider_id: providerId, amount: 675_000n })]);
    expect(await usdcBalance(stack.payment.rpcUrl, provider, stack.payment.usdc)).toBe(675_000n);
    expect((await worker.payouts!.runNow()).sent).toEqual([]);
    expect(await ledger.balance(providerId)).toEqual({ held: '0', available: '0', paid: '675000' });
  });
});
