import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { CallToolResultSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import type { LocalAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayWithJobs } from '../../../worker/test/gatewayWithJobs.js';
import type { TestGateway } from '../harness.js';
import { stepGates } from '../stepGates.js';
import { officialPayload, post } from '../x402.js';

/**
 * Attack (issue 36, item 9): a cancelled MCP task that succeeded. A `tasks/cancel` sent while a
 * job's last step ran was answered "cancelled", and the task kept saying so, while the job went on
 * to succeed and both steps were charged. The runner stops a job before its next step, never
 * inside one, so such a cancel can change nothing: it is now refused with what happened (-32602,
 * `reason: "cancel_too_late"`; REST: 409 `cancel_too_late`), the task ends `completed`, and the
 * payer is charged exactly the two steps, as that status says (on-chain balances of the payer and
 * the treasury, no refund). A cancel with a step left to skip is answered `working` ("cancel
 * requested") until the running step ends, then the task is `cancelled`, charged the steps that
 * ran and refunded the rest on-chain. Real anvil, Redis, gateway and worker. This file failed
 * before the fix (checked).
 */

const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const TOOL = 'gateway_jobs';
type Json = any;

let t: TestGateway;
let stop: () => Promise<void>;
const clients: Client[] = [];
const gates = stepGates();

beforeAll(async () => {
  ({ t, close: stop } = await startGatewayWithJobs({ backoffMs: 50, beforeStep: gates.beforeStep }));
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await stop?.();
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'acg-cancel-attack', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  clients.push(client);
  return client;
}

/** A `steps`-step job of exactly `steps` step prices, started as a paid MCP task by `buyer`: the client and the task id. */
async function startPaidTask(buyer: LocalAccount, steps: number) {
  const client = await connect();
  const body = {
    objective: 'Read balances, then be cancelled',
    budget_usdc: (steps * Number(PRICE)) / 1e6,
    capabilities: ['intelligence.wallet_balances'],
    steps: Array.from({ length: steps }, () => ({ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } })),
  };
  const unpaid = (await client.callTool({ name: TOOL, arguments: body })) as CallToolResult;
  const payment = await officialPayload(buyer, unpaid.structuredContent as unknown as PaymentRequired);
  const created = await client.request(
    { method: 'tools/call', params: { name: TOOL, arguments: body, task: { ttl: 60_000 }, _meta: { 'x402/payment': payment } } },
    CreateTaskResultSchema,
  );
  return { client, taskId: created.task.taskId, jobId: created.task.taskId.split('.')[0] };
}

/** tasks/get until the task is terminal and, with a refund, until it is sent; then tasks/result's record. */
async function ended(client: Client, taskId: string): Promise<{ task: Json; record: Json }> {
  for (let i = 0; i < 600; i++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (['completed', 'failed', 'cancelled'].includes(task.status)) {
      const record = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).structuredContent as Json;
      if (!record.refund || record.refund.status === 'sent') return { task, record };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not end`);
}

const money = async (buyer: LocalAccount) => ({ payer: await t.usdc(buyer.address), treasury: await t.usdc(t.stack.payment.treasury.address) });

describe('tasks/cancel reports what happens', () => {
  it('during the last step: refused as too late (MCP and REST); the task ends completed, charged both steps and nothing else', async () => {
    const buyer = t.stack.payment.buyers[0];
    const before = await money(buyer);
    const gate = gates.hold(buyer.address, 1);
    const { client, taskId, jobId } = await startPaidTask(buyer, 2);
    await gate.reached; // the second and last step has started

    const cancel = client.experimental.tasks.cancelTask(taskId);
    await expect(cancel).rejects.toBeInstanceOf(McpError);
    const refused = (await cancel.catch((e: unknown) => e)) as McpError;
    expect(refused.code).toBe(-32602);
    expect(refused.message).toMatch(/too late to cancel/i);
    expect(refused.data).toMatchObject({ reason: 'cancel_too_late', job_id: jobId });
    const rest = await post(`${t.url}/api/v1/jobs/${jobId}/cancel`, { signature: await buyer.signMessage({ message: `Cancel job ${jobId}` }) });
    expect(rest.status).toBe(409);
    expect(rest.body).toMatchObject({ reason: 'cancel_too_late' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');

    gate.release();
    const { task, record } = await ended(client, taskId);
    expect(task.status).toBe('completed');
    expect(record).toMatchObject({ status: 'succeeded', cancel_requested: false, spent_base_units: (2n * PRICE).toString() });
    expect(record.refund ?? null).toBeNull();
    // charged exactly what "completed" says: both steps, on chain
    const after = await money(buyer);
    expect(before.payer - after.payer).toBe(2n * PRICE);
    expect(after.treasury - before.treasury).toBe(2n * PRICE);
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/terminal/i);
  });

  it('with a step left to skip: answered working ("cancel requested"), then cancelled, charged the steps that ran and refunded the rest', async () => {
    const buyer = t.stack.payment.buyers[1];
    const before = await money(buyer);
    const gate = gates.hold(buyer.address, 1);
    const { client, taskId } = await startPaidTask(buyer, 3);
    await gate.reached; // the second step has started; the third has not

    const answer = await client.experimental.tasks.cancelTask(taskId);
    expect(answer).toMatchObject({ taskId, status: 'working' });
    expect(answer.statusMessage).toContain('cancel requested');
    gate.release();
    const { task, record } = await ended(client, taskId);
    expect(task.status).toBe('cancelled');
    expect(record.steps.map((s: Json) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped']);
    expect(record).toMatchObject({ status: 'cancelled', cancel_requested: true, spent_base_units: (2n * PRICE).toString() });
    expect(record.refund).toMatchObject({ status: 'sent', amount: PRICE.toString() });
    const after = await money(buyer);
    expect(before.payer - after.payer).toBe(2n * PRICE);
    expect(after.treasury - before.treasury).toBe(2n * PRICE);
  });
});
