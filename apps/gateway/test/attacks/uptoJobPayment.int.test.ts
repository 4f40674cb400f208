import { CapabilityFailure, defineCapability } from '@acg/capabilities';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PERMIT2_ADDRESS, usdcAbi } from '@acg/devnet';
import { permit2NonceHex, uptoPermit2Authorization } from '@acg/payments';
import { paymentKeys, recordDeferredCharge } from '@acg/payments/commands';
import { recoverPayment } from '@acg/reconciliation';
import { permit2NonceUsed, readRefund, TransferFinality, treasuryKeys } from '@acg/treasury';
import pino from 'pino';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { createPublicClient, createTestClient, createWalletClient, http, maxUint256, type LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoCapabilityParameters } from '../../../../packages/capabilities/test/echoCapability.js';
import { recordJobSettlement } from '../../../worker/src/deferredSettlement.js';
import { startWorker, type RunningWorker } from '../../../worker/src/index.js';
import { cancelMessage } from '../../src/routers/jobs.js';
import { recoverPayments, startTestGateway, type TestGateway } from '../harness.js';
import { stepGates } from '../stepGates.js';
import { waitFor } from '../waitFor.js';
import { paidPost, paymentHeader, post, readJob } from '../x402.js';

/**
 * x402 `upto` for jobs (docs/decisions.md "Payment schemes", jobs), as an attacker would try it, on
 * a real anvil payment chain (our x402UptoPermit2Proxy and Permit2) and a private Redis, paid by the
 * official `@x402/evm` upto client, unchanged: the 402 of `POST /api/v1/jobs` offers `exact` first
 * and `upto` with the budget as its ceiling and the jobs window (JOB_UPTO_MAX_TIMEOUT_SECONDS); a
 * job on `upto` settles exactly what its steps spent when it ends, through the gateway's
 * facilitator (the worker records the amount, the gateway settles it), with no refund
 * transaction; nothing when it spent nothing. A replay, a duplicate in flight, a reordered pair, a
 * crash after the worker recorded the amount, a cancel mid-job and the payment's deadline each leave
 * the buyer, the treasury and the job's execution records adding up to the base unit.
 */

const PRICE = 1000n;
const echo = defineCapability({
  ...echoCapabilityParameters('intelligence.echo_upto_job', { price: PRICE }),
  name: 'Echo (upto job test)',
  async run(input) {
    return { text: input.text };
  },
});
const failing = defineCapability({
  ...echoCapabilityParameters('intelligence.fail_upto_job', { price: PRICE }),
  name: 'Fail (upto job test)',
  async run() {
    throw new CapabilityFailure('upstream_refused', 'The upstream refused this input.', 422);
  },
});

let t: TestGateway;
let worker: RunningWorker;
const gates = stepGates();
/** Payers whose ended jobs record their settlement without telling the gateway (the worker "crashes" after the record). */
const silent = new Set<string>();
/** Added to the job runner's clock (the deadline check), ms. */
let clockOffsetMs = 0;
/** Payers whose job jumps the runner's clock past its payment's deadline after its first step. */
const jumpAfterFirstStep = new Set<string>();

const jobsUrl = () => `${t.url}/api/v1/jobs`;
const jobBody = (objective: string, budget: number, steps: { capability_id: string; input: unknown }[]) => ({
  objective,
  budget_usdc: budget,
  capabilities: [...new Set(steps.map((s) => s.capability_id))],
  steps,
});
const echoSteps = (n: number, text: string) => Array.from({ length: n }, (_, i) => ({ capability_id: echo.id, input: { text: `${text}-${i}` } }));
const ended = (j: any) => ['succeeded', 'failed', 'cancelled', 'budget_exhausted'].includes(j.status);
/** An ended upto job whose settlement is done: settled (or final) on chain, or nothing to settle. */
const settledJob = (j: any) => ended(j) && ['settled', 'final', 'not_charged'].includes(j.payment.status);

async function approvePermit2(buyer: LocalAccount): Promise<void> {
  const pay = t.stack.payment;
  const wallet = createWalletClient({ account: buyer, chain: pay.chain, transport: http(pay.rpcUrl) });
  const hash = await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).waitForTransactionReceipt({ hash });
}

/** The 402 of job `body` and an `upto` PaymentPayload the official @x402/evm upto client signs for it. */
async function uptoPayload(buyer: LocalAccount, body: unknown): Promise<{ required: PaymentRequired; payload: PaymentPayload }> {
  const first = await post(jobsUrl(), body);
  expect(first.status).toBe(402);
  const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
  const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never)));
  return { required, payload: await client.createPaymentPayload(required) };
}

const createJob = (body: unknown, payload: PaymentPayload) => post(jobsUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
const waitForJob = (jobId: string, buyer: LocalAccount, until: (j: any) => boolean) =>
  waitFor(
    () => readJob(t.url, jobId, buyer),
    (j) => until(j),
  );

function authKeyOf(buyer: LocalAccount, payload: PaymentPayload): string {
  const nonce = uptoPermit2Authorization(payload)!.authorization.nonce;
  return paymentKeys.authorization(t.gateway.services.keys, t.stack.payment.network, PERMIT2_ADDRESS, buyer.address, permit2NonceHex(nonce));
}

/** What the job's step executions were charged, summed (the gateway's own capabilities: the ledger of a job). */
async function chargedBySteps(job: any): Promise<bigint> {
  let sum = 0n;
  for (const s of job.steps) {
    if (!s.execution_id) continue;
    const e = await t.gateway.services.executions.get(s.execution_id);
    if (e?.status === 'SUCCEEDED') sum += BigInt(e.payment.amount);
  }
  return sum;
}

const balances = async (buyer: LocalAccount) => ({ buyer: await t.usdc(buyer.address), treasury: await t.usdc(t.stack.payment.treasury.address) });

beforeAll(async () => {
  t = await startTestGateway({ capabilities: [echo, failing] });
  worker = await startWorker(t.config, {
    capabilities: [echo, failing],
    refunds: false,
    walletMonitor: false,
    payouts: false,
    chainReconciliation: false,
    paymentRecovery: false,
    channels: false,
    // finality rounds are the test's own (a depth rule on anvil)
    finality: false,
    jobs: {
      backoffMs: 50,
      lockDurationMs: 2_000,
      beforeStep: gates.beforeStep,
      afterStep: async (job, index) => {
        if (index === 0 && jumpAfterFirstStep.has(job.payer.toLowerCase())) clockOffsetMs = 2 * 3600 * 1000;
      },
      now: () => Date.now() + clockOffsetMs,
      settleDeferred: async (job) => {
        const { redis, keys, log } = t.gateway.services;
        if (!silent.has(job.payer.toLowerCase())) return recordJobSettlement(redis, keys, log, job);
        // the worker records the amount and dies before it can tell the gateway
        await recordDeferredCharge(redis, {
          authKey: job.payment.authorization!,
          inFlightKey: paymentKeys.authorizationsInFlight(keys),
          operationId: job.job_id,
          amount: job.payment.amount,
        });
      },
    },
  });
  for (const buyer of t.stack.payment.buyers.slice(0, 8)) await approvePermit2(buyer);
});
afterAll(async () => {
  await worker?.close();
  await t?.close();
});

describe('upto on a job', () => {
  it('the 402 offers exact first and upto with the budget as ceiling and the jobs window; a job spending less than its budget settles exactly what it spent, with no refund transaction', async () => {
    const buyer = t.stack.payment.buyers[0];
    const body = jobBody('three echoes', 0.005, echoSteps(3, 'less'));
    const { required, payload } = await uptoPayload(buyer, body);
    expect(required.accepts.map((a) => [a.scheme, a.amount, a.maxTimeoutSeconds])).toEqual([
      ['exact', '5000', 300],
      ['upto', '5000', 3600],
    ]);
    expect(required.accepts[1].extra).toMatchObject({ assetTransferMethod: 'permit2', facilitatorAddress: t.stack.payment.facilitator.address });
    // the official client signed a Permit2 deadline an hour ahead, which the jobs window accepts
    const permit = uptoPermit2Authorization(payload)!.authorization;
    expect(Number(permit.deadline) - Date.now() / 1000).toBeGreaterThan(3500);
    const before = await balances(buyer);

    const created = await createJob(body, payload);
    expect(created.status).toBe(202);
    // nothing settled yet: no PAYMENT-RESPONSE (a client keeps counting the ceiling)
    expect(created.headers.get('payment-response')).toBeNull();
    const jobId: string = created.body.job_id;
    const job = await waitForJob(jobId, buyer, settledJob);
    expect(job.status).toBe('succeeded');
    expect(job.spent_base_units).toBe('3000');
    expect(job.payment).toMatchObject({ scheme: 'upto', ceiling: '5000', amount: '3000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(job.refund).toBeNull();

    // on chain: one settlement through the upto proxy for what the steps spent, nothing else
    const receipt = await createPublicClient({ transport: http(t.stack.payment.rpcUrl) }).getTransactionReceipt({ hash: job.payment.tx_hash });
    expect(receipt.to?.toLowerCase()).toBe(x402UptoPermit2ProxyAddress.toLowerCase());
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(3000n);
    expect(after.treasury - before.treasury).toBe(3000n);
    expect(await chargedBySteps(job)).toBe(3000n);
    expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, jobId)).toBeUndefined();
    expect(await permit2NonceUsed(t.gateway.services.paymentClient, buyer.address, BigInt(permit.nonce))).toBe(true);
    const reservation = await t.gateway.services.redis.hgetall(authKeyOf(buyer, payload));
    expect(reservation).toMatchObject({ state: 'completed', amount: '3000', tx_hash: job.payment.tx_hash });

    // the settlement is tracked until final, as a routed call's is (Permit2's variant of trackSettlement),
    // with the facilitator's signed bytes kept from the start (a reorg before any finality round can put it back)
    const { services } = t.gateway;
    const tracked = await services.redis.hgetall(treasuryKeys.finality(services.keys, 'settlement', jobId));
    expect(tracked).toMatchObject({ method: 'permit2', tx_hash: job.payment.tx_hash });
    expect(tracked.raw_tx).toMatch(/^0x[0-9a-f]+$/);
    expect(tracked.raw_from?.toLowerCase()).toBe(t.stack.payment.facilitator.address.toLowerCase());
    await createTestClient({ mode: 'anvil', transport: http(t.stack.payment.rpcUrl) }).mine({ blocks: 4 });
    const finality = new TransferFinality({
      redis: services.redis,
      keys: services.keys,
      publicClient: services.paymentClient,
      rule: { depth: 4 },
      reversals: services.creditReversal,
      log: pino({ level: 'silent' }),
    });
    expect((await finality.check()).final).toContain(`settlement:${jobId}`);
    expect((await readJob(t.url, jobId, buyer)).payment).toEqual({ ...job.payment, status: 'final' });
  });

  it('a deadline beyond the jobs window is refused before anything is reserved', async () => {
    const buyer = t.stack.payment.buyers[0];
    const body = jobBody('too long', 0.002, echoSteps(1, 'long'));
    const { payload } = await uptoPayload(buyer, body);
    const forged = structuredClone(payload);
    const auth = (forged.payload as { permit2Authorization: { deadline: string } }).permit2Authorization;
    auth.deadline = String(Math.floor(Date.now() / 1000) + 3600 + 600);
    const r = await createJob(body, forged);
    expect(r.status).toBe(402);
    expect(r.body.reason).toBe('authorization_validity_too_long');
    expect(await t.gateway.services.redis.exists(authKeyOf(buyer, forged))).toBe(0);
  });

  it('a job that spends nothing settles nothing: no transaction, the nonce never used', async () => {
    const buyer = t.stack.payment.buyers[1];
    const body = jobBody('fails at once', 0.003, [{ capability_id: failing.id, input: { text: 'x' } }, ...echoSteps(1, 'never')]);
    const { payload } = await uptoPayload(buyer, body);
    const before = await balances(buyer);
    const nonceBefore = await t.gateway.services.paymentClient.getTransactionCount({ address: t.stack.payment.facilitator.address });
    const created = await createJob(body, payload);
    expect(created.status).toBe(202);
    const job = await waitForJob(created.body.job_id, buyer, settledJob);
    expect(job.status).toBe('failed');
    expect(job.payment).toMatchObject({ scheme: 'upto', ceiling: '3000', amount: '0', status: 'not_charged' });
    expect(job.payment.tx_hash).toBeUndefined();
    expect(job.refund).toBeNull();
    expect(await balances(buyer)).toEqual(before);
    const permit = uptoPermit2Authorization(payload)!.authorization;
    expect(await permit2NonceUsed(t.gateway.services.paymentClient, buyer.address, BigInt(permit.nonce))).toBe(false);
    // the facilitator sent no transaction for it
    expect(await t.gateway.services.paymentClient.getTransactionCount({ address: t.stack.payment.facilitator.address })).toBe(nonceBefore);
    expect(await t.gateway.services.redis.hgetall(authKeyOf(buyer, payload))).toMatchObject({ state: 'completed', amount: '0' });
    // the same payload again never starts a second job
    const replay = await createJob(body, payload);
    expect([202, 409]).toContain(replay.status);
    expect(replay.body.job_id).toBe(job.job_id);
  });

  it('a replay and a duplicate in flight create one job and settle it once', async () => {
    const buyer = t.stack.payment.buyers[2];
    const body = jobBody('twice at once', 0.004, echoSteps(2, 'dup'));
    const { payload } = await uptoPayload(buyer, body);
    const before = await balances(buyer);
    const [a, b] = await Promise.all([createJob(body, payload), createJob(body, payload)]);
    for (const r of [a, b]) expect([202, 409]).toContain(r.status);
    expect([a.status, b.status]).toContain(202);
    const jobId = (a.status === 202 ? a : b).body.job_id;
    expect([a.body.job_id, b.body.job_id]).toEqual([jobId, jobId]);
    const job = await waitForJob(jobId, buyer, settledJob);
    expect(job.payment.amount).toBe('2000');
    // resent after it settled: the same job, nothing run or settled again
    const replay = await createJob(body, payload);
    expect([202, 409]).toContain(replay.status);
    expect(replay.body.job_id).toBe(jobId);
    // the same Permit2 nonce in another payload (a raised ceiling) is refused
    const forged = structuredClone(payload);
    (forged.payload as { permit2Authorization: { permitted: { amount: string } } }).permit2Authorization.permitted.amount = '3999';
    const refused = await createJob(body, forged);
    expect(refused.status).toBe(402);
    await t.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 });
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(2000n);
    expect(after.treasury - before.treasury).toBe(2000n);
    expect(await chargedBySteps(await readJob(t.url, jobId, buyer))).toBe(2000n);
  });

  it('a reordered pair of payments: two jobs, each settling its own spend', async () => {
    const buyer = t.stack.payment.buyers[3];
    const bodyA = jobBody('first signed', 0.003, echoSteps(1, 'a'));
    const bodyB = jobBody('second signed', 0.003, echoSteps(2, 'b'));
    const a = await uptoPayload(buyer, bodyA);
    const b = await uptoPayload(buyer, bodyB);
    const before = await balances(buyer);
    const rb = await createJob(bodyB, b.payload);
    const ra = await createJob(bodyA, a.payload);
    expect([ra.status, rb.status]).toEqual([202, 202]);
    expect(ra.body.job_id).not.toBe(rb.body.job_id);
    const [ja, jb] = await Promise.all([waitForJob(ra.body.job_id, buyer, settledJob), waitForJob(rb.body.job_id, buyer, settledJob)]);
    expect([ja.payment.amount, jb.payment.amount]).toEqual(['1000', '2000']);
    expect(ja.payment.tx_hash).not.toBe(jb.payment.tx_hash);
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(3000n);
    expect(after.treasury - before.treasury).toBe(3000n);
    // each payload sent again with the other's body is a conflict, never a third job
    const swapped = await createJob(bodyB, a.payload);
    expect(swapped.status).toBe(409);
  });

  it('cancelled mid-job: the held reservation is left alone by the crash-recovery sweep, and the job settles what ran', async () => {
    const buyer = t.stack.payment.buyers[4];
    const body = jobBody('cancel me', 0.005, echoSteps(4, 'cancel'));
    const { payload } = await uptoPayload(buyer, body);
    const before = await balances(buyer);
    const gate = gates.hold(buyer.address, 1);
    const created = await createJob(body, payload);
    expect(created.status).toBe(202);
    const jobId: string = created.body.job_id;
    await gate.reached;
    // the job runs for a while: its reservation is held pending for it, linked to its deadline, and no sweep takes it for a crashed call
    const authKey = authKeyOf(buyer, payload);
    const held = await t.gateway.services.redis.hgetall(authKey);
    expect(held).toMatchObject({ state: 'pending', operation_id: jobId, hold_until: uptoPermit2Authorization(payload)!.authorization.deadline });
    expect(await recoverPayments(t, { olderThanMs: 0 })).toEqual({ refunded: [], released: [], completed: [] });
    // nor when it is handed the reservation itself, whatever its age (as the chain reconciliation does)
    const { services } = t.gateway;
    const sweep = { redis: services.redis, keys: services.keys, publicClient: services.paymentClient, refunds: services.refunds, log: services.log };
    expect(await recoverPayment({ ...sweep, reversals: services.creditReversal }, authKey)).toEqual({ outcome: 'skipped' });
    expect(await t.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([]);
    expect(await t.gateway.services.redis.hget(authKey, 'state')).toBe('pending');
    expect((await readJob(t.url, jobId, buyer)).payment).toMatchObject({ scheme: 'upto', status: 'authorized', amount: '0' });

    const signature = await buyer.signMessage({ message: cancelMessage(jobId) });
    const cancel = await post(`${t.url}/api/v1/jobs/${jobId}/cancel`, { signature });
    expect(cancel.status).toBe(202);
    gate.release();
    const job = await waitForJob(jobId, buyer, settledJob);
    expect(job.status).toBe('cancelled');
    expect(job.steps.map((s: any) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped', 'skipped']);
    expect(job.payment.amount).toBe('2000');
    expect(job.refund).toBeNull();
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(2000n);
    expect(after.treasury - before.treasury).toBe(2000n);
    expect(await chargedBySteps(job)).toBe(2000n);
  });

  it('a crash after the worker recorded what to settle: the gateway settles it on recovery, once', async () => {
    const buyer = t.stack.payment.buyers[5];
    silent.add(buyer.address.toLowerCase());
    const body = jobBody('worker dies after the record', 0.004, echoSteps(3, 'crash'));
    const { payload } = await uptoPayload(buyer, body);
    const before = await balances(buyer);
    const created = await createJob(body, payload);
    expect(created.status).toBe(202);
    const jobId: string = created.body.job_id;
    const authKey = authKeyOf(buyer, payload);
    await waitFor(
      () => t.gateway.services.redis.hget(authKey, 'state'),
      (s) => s === 'settling',
    );
    expect(await t.gateway.services.redis.hget(authKey, 'settle_amount')).toBe('3000');
    expect((await readJob(t.url, jobId, buyer)).payment).toMatchObject({ status: 'settling', amount: '3000' });
    expect(await balances(buyer)).toEqual(before);
    // the EIP-3009 sweep leaves it to the gateway; a young record waits for the recovery's age
    expect(await recoverPayments(t, { olderThanMs: 0 })).toEqual({ refunded: [], released: [], completed: [] });
    expect(await t.gateway.services.paywall.recoverDeferred({ olderThanMs: 60_000 })).toEqual([]);
    expect(await t.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([jobId]);
    expect(await t.gateway.services.redis.hget(authKey, 'state')).toBe('completed');
    // a second round, the sweep, and the worker's record step run again settle nothing twice
    expect(await t.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 })).toEqual([]);
    expect(await recoverPayments(t, { olderThanMs: 0 })).toEqual({ refunded: [], released: [], completed: [] });
    const { redis, keys } = t.gateway.services;
    const record = (amount: string) =>
      recordDeferredCharge(redis, { authKey, inFlightKey: paymentKeys.authorizationsInFlight(keys), operationId: jobId, amount });
    expect(await record('3000')).toBe('settled');
    // another amount for the same job is never recorded
    expect(await record('3999')).toBe('refused');
    expect(await record('0')).toBe('refused');
    expect(await redis.publish(paymentKeys.deferredSettlements(keys), authKey)).toBeGreaterThanOrEqual(1);
    const job = await waitForJob(jobId, buyer, settledJob);
    expect(job.payment).toMatchObject({ scheme: 'upto', amount: '3000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const after = await balances(buyer);
    expect(before.buyer - after.buyer).toBe(3000n);
    expect(after.treasury - before.treasury).toBe(3000n);
    expect(await readRefund(redis, keys, jobId)).toBeUndefined();
    silent.delete(buyer.address.toLowerCase());
  });

  it('a recorded settlement nudged twice at once and met by a recovery round settles once', async () => {
    const buyer = t.stack.payment.buyers[1];
    silent.add(buyer.address.toLowerCase());
    try {
      const body = jobBody('settled by whoever comes first', 0.004, echoSteps(2, 'race'));
      const { payload } = await uptoPayload(buyer, body);
      const before = await balances(buyer);
      const created = await createJob(body, payload);
      expect(created.status).toBe(202);
      const jobId: string = created.body.job_id;
      const authKey = authKeyOf(buyer, payload);
      await waitFor(
        () => t.gateway.services.redis.hget(authKey, 'state'),
        (s) => s === 'settling',
      );
      const { paywall } = t.gateway.services;
      const results = await Promise.all([paywall.settleRecorded(authKey), paywall.settleRecorded(authKey), paywall.recoverDeferred({ olderThanMs: 0 })]);
      expect(results.flat().filter(Boolean)).toEqual([jobId]);
      expect(await t.gateway.services.redis.hget(authKey, 'state')).toBe('completed');
      const job = await waitForJob(jobId, buyer, settledJob);
      expect(job.payment.amount).toBe('2000');
      const after = await balances(buyer);
      expect(before.buyer - after.buyer).toBe(2000n);
      expect(after.treasury - before.treasury).toBe(2000n);
    } finally {
      silent.delete(buyer.address.toLowerCase());
    }
  });

  it("the payment's deadline comes near: the job stops before its next step, says why, and settles what ran", async () => {
    const buyer = t.stack.payment.buyers[6];
    jumpAfterFirstStep.add(buyer.address.toLowerCase());
    const body = jobBody('runs into its deadline', 0.003, echoSteps(3, 'late'));
    const { payload } = await uptoPayload(buyer, body);
    const before = await balances(buyer);
    try {
      const created = await createJob(body, payload);
      expect(created.status).toBe(202);
      const job = await waitForJob(created.body.job_id, buyer, settledJob);
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('payment_deadline');
      expect(job.steps.map((s: any) => s.status)).toEqual(['succeeded', 'skipped', 'skipped']);
      expect(job.payment.amount).toBe('1000');
      const after = await balances(buyer);
      expect(before.buyer - after.buyer).toBe(1000n);
      expect(after.treasury - before.treasury).toBe(1000n);
    } finally {
      jumpAfterFirstStep.delete(buyer.address.toLowerCase());
      clockOffsetMs = 0;
    }
  });

  it('the MCP job tool (as a task) offers the same upto entry and settles what the steps spent', async () => {
    const buyer = t.stack.payment.buyers[0];
    const client = new Client({ name: 'acg-upto-job', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const body = jobBody('over MCP', 0.004, echoSteps(2, 'mcp'));
      const unpaid = (await client.callTool({ name: 'gateway_jobs', arguments: body })) as CallToolResult;
      const required = unpaid.structuredContent as unknown as PaymentRequired;
      expect(required.accepts.map((a) => [a.scheme, a.amount, a.maxTimeoutSeconds])).toEqual([
        ['exact', '4000', 300],
        ['upto', '4000', 3600],
      ]);
      const payload = await new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never))).createPaymentPayload(required);
      const before = await balances(buyer);
      const created = await client.request(
        { method: 'tools/call', params: { name: 'gateway_jobs', arguments: body, task: { ttl: 60_000 }, _meta: { 'x402/payment': payload } } },
        CreateTaskResultSchema,
      );
      const jobId = created.task.taskId.split('.')[0];
      const job = await waitForJob(jobId, buyer, settledJob);
      expect(job.payment).toMatchObject({ scheme: 'upto', ceiling: '4000', amount: '2000', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(job.refund).toBeNull();
      const after = await balances(buyer);
      expect(before.buyer - after.buyer).toBe(2000n);
      expect(after.treasury - before.treasury).toBe(2000n);
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('exact still pays the whole budget and refunds the rest', async () => {
    const buyer = t.stack.payment.buyers[7];
    const before = await balances(buyer);
    const created = await paidPost(buyer, jobsUrl(), jobBody('exact as ever', 0.003, echoSteps(1, 'exact')));
    expect(created.status).toBe(202);
    const job = await waitForJob(created.body.job_id, buyer, (j) => ended(j) && j.refund?.status === 'sent');
    expect(job.payment.scheme).toBeUndefined();
    expect(job.payment.amount).toBe('3000');
    expect(job.refund).toMatchObject({ amount: '2000', status: 'sent' });
    expect(before.buyer - (await t.usdc(buyer.address))).toBe(1000n);
  });
});
