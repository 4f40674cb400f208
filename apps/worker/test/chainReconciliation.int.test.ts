import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { devPrivateKey } from '@acg/devnet';
import {
  type ChainReconciliationOptions,
  readChainReconciliationReport,
  reconcileBlocks,
  reconciledOperationId,
  runChainReconciliation,
} from '@acg/reconciliation';
import { readRefund } from '@acg/treasury';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { useRegisteredProvider } from '../../gateway/test/useRegisteredProvider.js';
import { upperCaseAnswer, upperCaseCapability } from '../../gateway/test/providerServer.js';
import { bearerToken, challenge, officialPayload, paidPost, paymentHeader, post, walletBalancesRequest } from '../../gateway/test/x402.js';
import { waitFor } from '../../gateway/test/waitFor.js';
import { chainReconciliationOptions, startWorker, treasurySenderOf, type RunningWorker } from '../src/index.js';
import { parseReconcileArgs } from '../src/reconcileCommand.js';
import { waitForJob } from './waitForJob.js';

/**
 * Issue 33, "Redis restarted from an AOF missing its last second": paid executions lose their
 * reservation and record, provider credits vanish. The chain reconciliation reads the payments
 * into the treasury from the chain and ends with nothing lost: every settled authorization has a
 * result or a refund (exactly once, through a crash of the reconciliation and a run twice), every
 * provider credit of a succeeded execution is there, a refund recorded sent but not on chain is re-sent.
 */

const PRICE = 500_000n; // 0.5 USDC: share 0.45, fee 0.05
const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });
const provider = useRegisteredProvider(t, upperCaseAnswer, { name: 'Recon Co', capabilities: [upperCaseCapability('upper_recon', '0.5')] });
let worker: RunningWorker;
let options: ChainReconciliationOptions;
/** the block range of the test's payments, once made */
const range = { from: 0n, to: 0n };

beforeAll(async () => {
  // the reconciliation is run by hand here (the schedule is checked at the end)
  worker = await startWorker(t.config, {
    log: pino({ level: 'silent' }),
    walletMonitor: false,
    paymentRecovery: false,
    payouts: false,
    refunds: false,
    chainReconciliation: false,
  });
  options = chainReconciliationOptions(
    worker.services,
    pino({ level: 'silent' }),
    { confirmations: 2, lookbackBlocks: 1_000_000 },
    treasurySenderOf(worker.services),
  );
});
afterAll(async () => {
  await worker?.close();
});

const rpc = async (method: string, params: unknown[] = []) => {
  const res = await fetch(t.stack.payment.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
};
const head = async () => BigInt((await rpc('eth_blockNumber')) as string);

/**
 * A checkpoint of the test's keys whose names pass `keep` (BullMQ's excepted): the function it
 * returns puts them back as they were, as a Redis restarted from an AOF that lacks every write since
 * would (keys created since are deleted, changed ones restored).
 */
async function checkpoint(redis: Redis, prefix: string, keep: (key: string) => boolean = () => true): Promise<() => Promise<void>> {
  const ours = async () => (await redis.keys(`${prefix}*`)).filter((k) => !k.startsWith(`${prefix}bull`) && keep(k));
  // copies kept by the server (COPY keeps the value and its expiry), outside the test's prefix
  const shadow = (k: string) => `checkpoint:${k}`;
  const saved = new Set(await ours());
  for (const k of saved) await redis.copy(k, shadow(k), 'REPLACE');
  return async () => {
    for (const k of await ours()) if (!saved.has(k)) await redis.del(k);
    for (const k of saved) {
      await redis.copy(shadow(k), k, 'REPLACE');
      await redis.del(shadow(k));
    }
  };
}

async function reservationOf(redis: Redis, prefix: string, operationId: string): Promise<string> {
  for (const k of await redis.keys(`${prefix}pay:auth:*`)) if ((await redis.hget(k, 'operation_id')) === operationId) return k;
  throw new Error(`no reservation for ${operationId}`);
}

describe('reconciliation from the chain', () => {
  it('refunds a payment whose records were lost, restores a lost provider credit, exactly once through a crash and a second run, and re-sends a refund that left the chain', async () => {
    const { redis, keys, providerLedger: ledger } = worker.services;
    const [lost, credited, intact] = t.stack.payment.buyers;
    const from = (await head()) + 1n;
    const lostBefore = await t.usdc(lost.address);

    // A: a provider execution whose every write is lost (reservation, record, credit)
    const restart = await checkpoint(redis, keys.prefix);
    const aBody = { capability_id: 'intelligence.upper_recon', input: { text: 'lost' } };
    const aHeader = paymentHeader(await officialPayload(lost, await challenge(t.executeUrl, aBody)));
    const a = await post(t.executeUrl, aBody, { 'PAYMENT-SIGNATURE': aHeader });
    expect(a.body.status).toBe('SUCCEEDED');
    const lostAuthKey = await reservationOf(redis, keys.prefix, a.body.execution_id);
    await restart();
    expect(await redis.exists(lostAuthKey, keys.execution(a.body.execution_id))).toBe(0);
    expect(await t.usdc(lost.address)).toBe(lostBefore - PRICE);

    // B: a provider execution whose ledger credit alone is lost
    const ledgerRestart = await checkpoint(redis, keys.prefix, (k) => k.includes(':pl:'));
    const b = await paidPost(credited, t.executeUrl, { capability_id: 'intelligence.upper_recon', input: { text: 'credit' } });
    expect(b.body.status).toBe('SUCCEEDED');
    expect(await ledger.entry(b.body.execution_id)).toBeDefined();
    await ledgerRestart();
    expect(await ledger.entry(b.body.execution_id)).toBeUndefined();
    expect((await ledger.totals()).credited).toBe(0n);

    // C: nothing lost
    const c = await paidPost(intact, t.executeUrl, walletBalancesRequest(intact.address));
    expect(c.body.status).toBe('SUCCEEDED');

    // confirmed once 2 blocks are above the last payment
    await rpc('anvil_mine', ['0x2']);
    const to = (await head()) - 2n;
    Object.assign(range, { from, to });

    // the reconciliation crashes right after it queued the refund
    const crashing = {
      ...options,
      refunds: {
        enqueue: async (r: Parameters<typeof worker.services.refunds.enqueue>[0]) => {
          await worker.services.refunds.enqueue(r);
          throw new Error('crash');
        },
      },
    };
    await expect(runChainReconciliation(crashing)).rejects.toThrow('crash');
    const op = reconciledOperationId(lostAuthKey);
    expect(await redis.hget(lostAuthKey, 'state')).toBe('recovering');

    const snapshot = await rpc('evm_snapshot');
    const first = await runChainReconciliation(options);
    expect(first).toMatchObject({ matched: 1, repaired: 2, deferred: 0, undecided: 0, cursor_block: Number(to) });
    const refunded = await waitFor(
      () => readRefund(redis, keys, op),
      (r) => r?.status === 'sent',
    );
    expect(await t.usdc(lost.address)).toBe(lostBefore);
    // the lost payment has its reservation back, completed with an answer naming its refund
    const stored = JSON.parse((await redis.hget(lostAuthKey, 'response'))!);
    expect(stored).toMatchObject({ status: 502, body: { operation_id: op, refund: { amount: String(PRICE) } } });
    // its payer resending the payment gets nothing run and is not charged again
    const calls = provider.server.calls.length;
    const resend = await post(t.executeUrl, aBody, { 'PAYMENT-SIGNATURE': aHeader, authorization: `Bearer ${await bearerToken(t.url, lost)}` });
    expect(resend.status).toBe(402);
    expect(provider.server.calls.length).toBe(calls);
    expect(await t.usdc(lost.address)).toBe(lostBefore);
    // the credit is back as the executor made it; the lost execution is credited to nobody
    expect(await ledger.entry(b.body.execution_id)).toMatchObject({ provider_id: provider.id, price: PRICE, share: 450_000n, fee: 50_000n, status: 'held' });
    expect(await ledger.entry(a.body.execution_id)).toBeUndefined();
    expect((await ledger.totals()).credited).toBe(PRICE);

    // the refund's block leaves the chain (Redis still says `sent`): the next run re-sends it, once
    await rpc('evm_revert', [snapshot]);
    expect(await t.usdc(lost.address)).toBe(lostBefore - PRICE);
    const again = await reconcileBlocks(options, from, to);
    expect(again).toEqual({ matched: 2, repaired: 1, deferred: 0, undecided: 0 });
    expect(await t.usdc(lost.address)).toBe(lostBefore);
    expect((await readRefund(redis, keys, op))?.tx_hash).toBe(refunded?.tx_hash); // the same signed transaction, rebroadcast

    // idempotent: a third run changes nothing
    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 3, repaired: 0, deferred: 0, undecided: 0 });
    expect(await t.usdc(lost.address)).toBe(lostBefore);
    expect((await ledger.totals()).credited).toBe(PRICE);
    expect(await t.usdc(credited.address)).toBe((await t.usdc(credited.address, from - 1n)) - PRICE);

    // the report is on the gateway's /metrics and /status page
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain('acg_chain_reconciliation_payments{outcome="repaired"} 3');
    expect(metrics).toContain('acg_chain_reconciliation_payments{outcome="undecided"} 0');
    expect(metrics).toContain(`acg_chain_reconciliation_cursor_block ${to}`);
    const status = await (await fetch(`${t.url}/status`, { headers: { accept: 'text/html' } })).text();
    expect(status).toContain(`data-cursor-block="${to}"`);
    expect(status).toMatch(/data-repaired="3"[^>]*data-deferred="0" data-undecided="0"/);
  });

  it('runs on a schedule in the worker and resumes from its cursor', async () => {
    const { redis, keys } = worker.services;
    const before = await readChainReconciliationReport(redis, keys);
    expect(before.cursor_block).not.toBeNull();
    const scheduled = await startWorker(t.config, {
      log: pino({ level: 'silent' }),
      walletMonitor: false,
      paymentRecovery: false,
      payouts: false,
      refunds: false,
      chainReconciliation: { intervalMs: 200, confirmations: 2 },
    });
    try {
      await rpc('anvil_mine', ['0x3']);
      const target = Number((await head()) - 2n);
      const report = await waitFor(
        () => readChainReconciliationReport(redis, keys),
        (r) => r.cursor_block === target,
      );
      // the blocks since the cursor hold no payment: the counts are unchanged
      expect(report).toMatchObject({ matched: before.matched, repaired: before.repaired, undecided: 0 });
      expect(report.last_run_at! > before.last_run_at!).toBe(true);
    } finally {
      await scheduled.close();
    }
  });

  it('what it cannot decide moves no money: it is counted as undecided and logged as an alert', async () => {
    const { redis, keys } = worker.services;
    const payer = t.stack.payment.buyers[3];
    const restart = await checkpoint(redis, keys.prefix);
    const d = await paidPost(payer, t.executeUrl, walletBalancesRequest(payer.address));
    expect(d.body.status).toBe('SUCCEEDED');
    const authKey = await reservationOf(redis, keys.prefix, d.body.execution_id);
    await restart();
    await rpc('anvil_mine', ['0x2']);
    const paidAt = await t.usdc(payer.address);
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const block = (await head()) - 2n;
    // reservations kept 0 s: a payment without one may have expired normally, so it is not refunded
    const before = await readChainReconciliationReport(redis, keys);
    expect(await reconcileBlocks({ ...options, log, retentionSeconds: 0 }, block, block)).toEqual({ matched: 0, repaired: 0, deferred: 0, undecided: 1 });
    expect(await redis.exists(authKey)).toBe(0);
    expect(await readRefund(redis, keys, reconciledOperationId(authKey))).toBeUndefined();
    expect(await t.usdc(payer.address)).toBe(paidAt);
    expect(lines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ alert: 'chain_reconciliation_undecided', payer: payer.address, level: 50 }),
    );
    expect((await readChainReconciliationReport(redis, keys)).undecided).toBe(before.undecided + 1);
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).toContain(`acg_chain_reconciliation_payments{outcome="undecided"} ${before.undecided + 1}`);
  });

  it('the reconcile command reconciles a block range from the environment: nothing left to repair', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../src/reconcile.ts', import.meta.url)), '--from', String(range.from), '--to', String(range.to)],
      {
        env: {
          ...process.env,
          REDIS_URL: t.stack.redis.url,
          REDIS_KEY_PREFIX: t.config.keyPrefix,
          PAYMENT_RPC_URL: t.stack.payment.rpcUrl,
          PAY_TO_ADDRESS: t.stack.payment.treasury.address,
          FACILITATOR_PRIVATE_KEY: devPrivateKey(0),
          TREASURY_PRIVATE_KEY: devPrivateKey(1),
          LOG_LEVEL: 'silent',
        },
      },
    );
    const last = stdout.trim().split('\n').at(-1)!;
    expect(JSON.parse(last)).toEqual({ from: String(range.from), to: String(range.to), matched: 3, repaired: 0, deferred: 0, undecided: 0 });
  });

  it('the reconcile command takes a block range and refuses a malformed one', () => {
    expect(parseReconcileArgs(['--from', '10', '--to', '20'])).toEqual({ from: 10n, to: 20n });
    expect(parseReconcileArgs(['--from', '7'])).toEqual({ from: 7n });
    expect(() => parseReconcileArgs([])).toThrow(/--from is required/);
    expect(() => parseReconcileArgs(['--from=-1'])).toThrow(/block number/);
    expect(() => parseReconcileArgs(['--from', '9', '--to', '3'])).toThrow(/below --from/);
    expect(() => parseReconcileArgs(['--from', '1', '--what'])).toThrow(/usage/);
  });

  it("restores a job step's lost provider credit from the job's record, once", async () => {
    const { redis, keys, providerLedger: ledger } = worker.services;
    const payer = t.stack.payment.buyers[4];
    const from = (await head()) + 1n;
    // Redis loses the ledger's writes of the job's run: the step's credit is gone
    const ledgerRestart = await checkpoint(redis, keys.prefix, (k) => k.includes(':pl:'));
    const creditedBefore = (await ledger.totals()).credited;
    const created = await paidPost(payer, `${t.url}/api/v1/jobs`, {
      objective: 'one provider step',
      budget_usdc: 1,
      capabilities: ['intelligence.upper_recon'],
      steps: [{ capability_id: 'intelligence.upper_recon', input: { text: 'job' } }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await waitForJob(t.url, created.body.job_id, payer, (j) => ['succeeded', 'failed'].includes(j.status));
    expect(job.status).toBe('succeeded');
    const stepId = job.steps[0].execution_id as string;
    expect(await ledger.entry(stepId)).toMatchObject({ price: PRICE });
    await ledgerRestart();
    expect(await ledger.entry(stepId)).toBeUndefined();
    await rpc('anvil_mine', ['0x2']);
    const to = (await head()) - 2n;

    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 0, repaired: 1, deferred: 0, undecided: 0 });
    expect(await ledger.entry(stepId)).toMatchObject({ provider_id: provider.id, price: PRICE, share: 450_000n, fee: 50_000n, payer: payer.address });
    expect((await ledger.totals()).credited).toBe(creditedBefore + PRICE);
    // never twice: a second run finds it
    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 1, repaired: 0, deferred: 0, undecided: 0 });
    expect((await ledger.totals()).credited).toBe(creditedBefore + PRICE);
  });
});
