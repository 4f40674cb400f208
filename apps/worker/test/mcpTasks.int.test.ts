import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { CallToolResultSchema, McpError, type CallToolResult, type GetTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../gateway/src/app.js';
import type { TestGateway } from '../../gateway/test/harness.js';
import { stepGates } from '../../gateway/test/stepGates.js';
import { startGatewayWithJobs } from './gatewayWithJobs.js';
import { asReadOnChain, bearerToken, officialPayload, paymentHeader, post, readJob, usdcReader } from '../../gateway/test/x402.js';

/**
 * Jobs as MCP tasks (apps/gateway docs/mcp-tasks.md) with the official MCP `Client` and its
 * experimental task API (`client.experimental.tasks`), paid with real x402 payments made by the
 * official @x402/core client on a real anvil chain, the job run by a real worker on a private
 * Redis: task created at once, polled with tasks/get, read with tasks/result (proofs), cancelled
 * halfway (refund of exactly the unspent budget, on-chain), answered by a new gateway instance,
 * and a replayed payment never creating a second job or charge.
 */

const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const TOOL = 'gateway_jobs';
type Json = any;

let t: TestGateway;
let stop: () => Promise<void>;
let balanceOf: (a: `0x${string}`) => Promise<bigint>;
const clients: Client[] = [];
/** Payers whose jobs wait before their second step until the test releases them (cancel halfway). */
const gates = stepGates();

beforeAll(async () => {
  ({ t, close: stop } = await startGatewayWithJobs({ backoffMs: 50, lockDurationMs: 2_000, beforeStep: gates.beforeStep }));
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stop?.();
});

/** The official MCP client connected to `url` (initialize over POST /mcp), with optional HTTP headers (a bearer token). */
async function connect(url = t.url, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'acg-tasks-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}
const asPayer = async (buyer: LocalAccount, url = t.url) => connect(url, { authorization: `Bearer ${await bearerToken(url, buyer)}` });

const jobBody = (steps: number, budget: number, address: string) => ({
  objective: 'Read balances as an MCP task',
  budget_usdc: budget,
  capabilities: ['intelligence.wallet_balances'],
  steps: Array.from({ length: steps }, () => ({ capability_id: 'intelligence.wallet_balances', input: { address, chain: 'base' } })),
});

/** The x402 PaymentRequired of an unpaid call (a tool result, as for every paid tool) and the buyer's payment for it. */
async function pay(client: Client, buyer: LocalAccount, body: Record<string, unknown>): Promise<PaymentPayload> {
  await client.listTools();
  const unpaid = (await client.callTool({ name: TOOL, arguments: body })) as CallToolResult;
  expect(unpaid.isError).toBe(true);
  const pr = unpaid.structuredContent as unknown as PaymentRequired;
  expect(pr.accepts[0].amount).toBe(String(Math.round((body.budget_usdc as number) * 1e6)));
  return officialPayload(buyer, pr);
}

/**
 * A new client on the gateway at `url`, a `steps`-step job body of `budget` USDC on `buyer`'s own address,
 * `buyer`'s payment for it ({@link pay}) and its USDC balance (base units) before the payment settles.
 */
async function paidJob(buyer: LocalAccount, steps: number, budget: number, url = t.url) {
  const client = await connect(url);
  const body = jobBody(steps, budget, buyer.address);
  const payment = await pay(client, buyer, body);
  return { client, body, payment, before: await balanceOf(buyer.address) };
}

/** A task-augmented, paid tools/call of gateway_jobs: the CreateTaskResult with its `_meta` (settlement). */
function startTask(client: Client, body: Record<string, unknown>, payment: PaymentPayload) {
  return client.request(
    { method: 'tools/call', params: { name: TOOL, arguments: body, task: { ttl: 60_000 }, _meta: { 'x402/payment': payment } } },
    CreateTaskResultSchema,
  );
}

/** tasks/result until `until(record)` holds (tasks/result answers at once for a terminal task). */
async function resultUntil(client: Client, taskId: string, until: (job: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 600; i++) {
    const r = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    if (until(r.structuredContent)) return r.structuredContent;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not reach the expected state`);
}
const refunded = (j: Json) => j.refund?.status === 'sent';

describe('jobs as MCP tasks', () => {
  it('lists gateway_jobs with optional task support and advertises tasks in initialize', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const jobs = tools.find((x) => x.name === TOOL)!;
    expect(jobs.execution).toEqual({ taskSupport: 'optional' });
    expect(jobs._meta).toMatchObject({ capability_id: 'gateway.jobs', payment: 'x402' });
    // a tool that does not declare task support refuses a task
    await expect(
      client.request({ method: 'tools/call', params: { name: 'get_health', arguments: {}, task: {} } }, CreateTaskResultSchema),
    ).rejects.toMatchObject({ code: -32601 });
  });

  it('runs a paid job as a task: created at once, polled with tasks/get to completion, tasks/result is the job record with proofs', async () => {
    const buyer = t.stack.payment.buyers[0];
    const { client, body, payment, before } = await paidJob(buyer, 2, 0.005);
    // the official client's task stream: tools/call with params.task, then tasks/get until terminal, then tasks/result
    const messages: Json[] = [];
    for await (const m of client.experimental.tasks.callToolStream({ name: TOOL, arguments: body, _meta: { 'x402/payment': payment } }, CallToolResultSchema, {
      task: { ttl: 60_000 },
    })) {
      messages.push(m);
    }
    expect(messages[0].type).toBe('taskCreated');
    const taskId = messages[0].task.taskId as string;
    // the task id is the job id and a tag only the payer is given
    expect(taskId).toMatch(/^job_[0-9A-Z]{26}\.[\w-]{22}$/);
    const jobId = taskId.split('.')[0];
    expect(['working', 'completed']).toContain(messages[0].task.status);
    const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task as GetTaskResult);
    const last = statuses.at(-1)!;
    expect(last.status).toBe('completed');
    expect(last._meta?.progress).toMatchObject({ steps_done: 2, steps_total: 2, spent_base_units: '2000', budget_base_units: '5000', spent_usdc: 0.002 });
    expect(last.statusMessage).toContain('2/2 steps done; 0.002 of 0.005 USDC spent');
    const result = messages.at(-1);
    expect(result.type).toBe('result');
    const record = result.result.structuredContent;
    expect(record).toMatchObject({ job_id: jobId, status: 'succeeded', payer: buyer.address, spent_base_units: '2000' });
    for (const step of record.steps) expect(step.proof).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // the unspent budget comes back on-chain: the payer paid exactly what the steps spent
    const ended = await resultUntil(client, taskId, refunded);
    expect(ended.refund).toMatchObject({ status: 'sent', amount: '3000' });
    expect(before - (await balanceOf(buyer.address))).toBe(2n * PRICE);
    // the same job over REST, read by its payer
    const rest = await readJob(t.url, jobId, buyer);
    expect(rest).toMatchObject({ job_id: jobId, status: 'succeeded' });
  });

  it('answers an unpaid task-augmented call with x402 MCP payment signalling (JSON-RPC 402 with the PaymentRequired)', async () => {
    const buyer = t.stack.payment.buyers[1];
    const client = await connect();
    const error = await client
      .request({ method: 'tools/call', params: { name: TOOL, arguments: jobBody(1, 0.002, buyer.address), task: {} } }, CreateTaskResultSchema)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(402);
    // `exact` first, then `upto` with the budget as its ceiling (docs/decisions.md "Payment schemes", jobs)
    expect((error as McpError).data).toMatchObject({
      x402Version: 2,
      accepts: [expect.objectContaining({ scheme: 'exact', amount: '2000' }), expect.objectContaining({ scheme: 'upto', amount: '2000' })],
    });
  });

  it('a replayed or concurrent payment returns the same task and charges once, on MCP and on REST; a stranger replaying it gets no task', async () => {
    const buyer = t.stack.payment.buyers[2];
    const { client, body, payment, before } = await paidJob(buyer, 1, 0.002);
    // two concurrent sends of one payment: one task (the other, if it lost the race, is told the payment is in progress)
    const sends = await Promise.allSettled([startTask(client, body, payment), startTask(await connect(), body, payment)]);
    const started = sends.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(started.length).toBeGreaterThanOrEqual(1);
    for (const r of sends) if (r.status === 'rejected') expect((r.reason as McpError).data).toMatchObject({ reason: 'payment_in_progress' });
    const first = started[0];
    for (const r of started) expect(r.task.taskId).toBe(first.task.taskId);
    expect(started.some((r) => (r._meta?.['x402/payment-response'] as Json)?.payer === buyer.address)).toBe(true);
    const again = await startTask(client, body, payment);
    expect(again.task.taskId).toBe(first.task.taskId);
    expect(again._meta?.replayed).toBe(true);
    // the same payment on REST: the same job (one payment buys one job on either transport)
    const rest = await post(`${t.url}/api/v1/jobs`, body, { 'PAYMENT-SIGNATURE': paymentHeader(payment) });
    expect(rest.status).toBe(202);
    const jobId = first.task.taskId.split('.')[0];
    expect(rest.body.job_id).toBe(jobId);
    // the payload as anyone can read it on-chain (no payment identifier): a receipt naming the job, never the task
    const stranger = await connect();
    const stolen = await startTask(stranger, body, asReadOnChain(payment)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(stolen).toBeInstanceOf(McpError);
    expect((stolen as McpError).data).toMatchObject({ status: 409, reason: 'payment_already_used', job_id: jobId });
    expect(JSON.stringify((stolen as McpError).data)).not.toContain(first.task.taskId);
    // the job id alone (or with a forged tag) is no task
    await expect(stranger.experimental.tasks.getTask(jobId)).rejects.toThrow(/not found/i);
    await expect(stranger.experimental.tasks.getTask(`${jobId}.${'A'.repeat(22)}`)).rejects.toThrow(/not found/i);
    await expect(stranger.experimental.tasks.cancelTask(jobId)).rejects.toThrow(/not found/i);
    const ended = await resultUntil(client, first.task.taskId, refunded);
    expect(ended.status).toBe('succeeded');
    // one charge: the budget once, less its refund
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
    expect(BigInt(ended.spent_base_units) + BigInt(ended.refund.amount)).toBe(2000n);
  });

  it('only the payer sees or cancels its task; a task cancelled halfway is refunded exactly its unspent budget on-chain', async () => {
    const buyer = t.stack.payment.buyers[3];
    const other = t.stack.payment.buyers[4];
    const { client, body, payment, before } = await paidJob(buyer, 3, 0.01);
    // the job waits before its second step (which has then started), until released
    const gate = gates.hold(buyer.address, 1);
    const taskId = (await startTask(client, body, payment)).task.taskId;
    await gate.reached;
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe('working');
    expect(task._meta?.progress).toMatchObject({ steps_done: 1, steps_total: 3, spent_base_units: '1000', budget_base_units: '10000' });

    // another wallet's token: the task does not exist for it (get, result, cancel)
    const stranger = await asPayer(other);
    await expect(stranger.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
    await expect(stranger.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/not found/i);
    await expect(stranger.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toThrow(/not found/i);
    // an invalid token sees nothing either
    const forged = await connect(t.url, { authorization: 'Bearer acg_forged' });
    await expect(forged.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
    await expect(forged.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/not found/i);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');

    const payer = await asPayer(buyer);
    // the running step ends first: the task is working, its cancel requested, until the job stops before its next step
    const cancelled = await payer.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'working' });
    expect(cancelled.statusMessage).toContain('cancel requested');
    gate.release();
    const ended = await resultUntil(payer, taskId, (j) => j.status === 'cancelled' && refunded(j));
    // the second step had started when the cancel came: it ends; the third never starts
    expect(ended.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped']);
    const spent = BigInt(ended.spent_base_units);
    expect(spent).toBe(2n * PRICE);
    expect(ended.refund.amount).toBe((10_000n - spent).toString());
    expect(ended.refund.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await balanceOf(buyer.address))).toBe(spent);
    expect((await payer.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await expect(payer.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/terminal/i);
  });

  it('a task outlives the gateway process that created it: a new gateway instance answers tasks/get and tasks/result', async () => {
    const buyer = t.stack.payment.buyers[5];
    const first = await startGateway(t.config);
    let second: Awaited<ReturnType<typeof startGateway>> | undefined;
    try {
      const { client, body, payment } = await paidJob(buyer, 2, 0.004, first.url);
      const created = await startTask(client, body, payment);
      const taskId = created.task.taskId;
      await client.close();
      await first.close();
      second = await startGateway(t.config);
      const again = await connect(second.url);
      for (let i = 0; i < 600; i++) {
        if ((await again.experimental.tasks.getTask(taskId)).status === 'completed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const task = await again.experimental.tasks.getTask(taskId);
      expect(task).toMatchObject({ taskId, status: 'completed' });
      const record = await resultUntil(again, taskId, refunded);
      expect(record).toMatchObject({ job_id: taskId.split('.')[0], status: 'succeeded', spent_base_units: '2000', refund: { status: 'sent', amount: '2000' } });
      for (const step of record.steps) expect(typeof step.proof).toBe('string');
    } finally {
      await first.close().catch(() => undefined);
      await second?.close();
    }
  });
});
