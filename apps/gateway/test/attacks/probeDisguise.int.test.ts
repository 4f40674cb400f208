import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type RunningWorker } from '../../../worker/src/index.js';
import type { Answer, ReceivedCall } from '../providerServer.js';
import { upperCaseAnswer, upperCaseCapability } from '../providerServer.js';
import { useRegisteredProvider } from '../useRegisteredProvider.js';
import { useTestGateway } from '../useTestGateway.js';
import { bearerToken, paidPost, post } from '../x402.js';

/**
 * Attack (issue 36 item 3): a provider that answers the gateway's probes well and its buyers
 * badly. Probes used to carry `x-acg-probe: 1` and a `probe_` id, so the provider could tell them
 * apart, pass every probe and have its suspension lifted while failing paid calls; and a job step
 * ran on a suspended offer and credited it. Now a probe is sent exactly like a paid call, a paid
 * outcome weighs more than a probe's, and every path that runs an offer checks its suspension.
 * Real anvil and Redis; the job runs in a worker process of its own.
 */
const t = useTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } } });

/**
 * The sly provider: good answers to probes, recognised as best it can (the old probe header and id,
 * and what is left: a probe sends the contract's `example_request`), and to buyers only in `good` mode.
 */
let mode: 'good' | 'bad' = 'good';
const looksLikeProbe = (call: ReceivedCall) =>
  call.headers['x-acg-probe'] !== undefined || call.body.execution_id.startsWith('probe_') || (call.body.input as { text?: string }).text === 'probe';
const slyAnswer = (call: ReceivedCall): Answer =>
  looksLikeProbe(call) || mode === 'good' ? upperCaseAnswer(call) : { status: 200, body: { result: { upper: 42 } } };
const sly = useRegisteredProvider(t, slyAnswer, { name: 'Sly Co', capabilities: [upperCaseCapability('upper_sly', '0.01')] });
const SLY = 'intelligence.upper_sly';

let worker: RunningWorker;
beforeAll(async () => {
  worker = await startWorker(t.config, { walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 } });
});
afterAll(async () => {
  await worker?.close();
});

const probe = () => t.gateway.services.providers.probe!(sly.id);
const suspension = () => t.gateway.services.providers.trust.suspension(sly.id, SLY);
const pay = (text: string, buyer = 0) => paidPost(t.stack.payment.buyers[buyer], t.executeUrl, { capability_id: SLY, input: { text } });

describe('probes look like paid calls', () => {
  it('sends a probe with the same headers, an exe_ id like an execution, and the same signing', async () => {
    const seen = sly.server.calls.length;
    await probe();
    const paid = await pay('hello');
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    const calls = sly.server.calls.slice(seen);
    const paidCall = calls.find((c) => c.body.execution_id === paid.body.execution_id)!;
    const probeCall = calls.find((c) => c !== paidCall)!;
    expect(probeCall.body.input).toEqual({ text: 'probe' });
    for (const call of [probeCall, paidCall]) {
      expect(call.verified).toBe(true);
      expect(call.body.execution_id).toMatch(/^exe_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(call.headers['webhook-id']).toBe(call.body.execution_id);
      expect(call.headers['x-acg-probe']).toBeUndefined();
    }
    const names = (c: ReceivedCall) => Object.keys(c.headers).sort();
    expect(names(probeCall)).toEqual(names(paidCall));
    expect(probeCall.headers['user-agent']).toBe(paidCall.headers['user-agent']);
  });
});

describe('a provider passing probes while failing buyers stays suspended', () => {
  it('is suspended by failed paid calls, and passing probes stop lifting it once paid failures add up', async () => {
    mode = 'bad';
    // rounds of: buyers' calls fail until the offer is suspended, then three probes pass. With
    // probes weighing as much as paid calls (and lifting a suspension by themselves), every round
    // ended routed again; now a few failed paid calls are enough for good.
    let failedPaid = 0;
    let rounds = 0;
    for (; rounds < 6; rounds++) {
      for (let i = 0; i < 8 && !(await suspension()); i++) {
        const r = await pay(`bad ${rounds}.${i}`, 1);
        expect(r.status).toBe(502);
        failedPaid++;
      }
      expect(await suspension()).not.toBeNull();
      for (let i = 0; i < 3; i++) await probe();
      if (await suspension()) break;
    }
    const still = await suspension();
    expect(still, `lifted after every round (${failedPaid} failed paid calls)`).not.toBeNull();
    expect(still!.passing_probes).toBeGreaterThanOrEqual(3);
    expect(failedPaid).toBeLessThanOrEqual(4);
    // not routed: refused before any payment
    const refused = await post(t.executeUrl, { capability_id: SLY, input: { text: 'x' } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ reason: 'offer_suspended', provider_id: sly.id });
    expect(refused.headers.get('payment-required')).toBeNull();
  });

  it('is refused before payment on every other path too: /trpc, MCP and quotes', async () => {
    expect(await suspension()).not.toBeNull();
    const trpc = await post(`${t.url}/trpc/execute.execute`, { capability_id: SLY, input: { text: 'x' } });
    expect(trpc.status).toBe(503);
    expect(JSON.stringify(trpc.body)).toContain('offer_suspended');
    const quote = await post(`${t.url}/api/v1/quotes`, { capability_id: SLY, input: { text: 'x' } });
    expect(quote.status).toBe(503);
    expect(quote.body).toMatchObject({ reason: 'offer_suspended', provider_id: sly.id });
    const client = new Client({ name: 'probe-disguise', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
    try {
      const r = await client.callTool({ name: 'intelligence_upper_sly', arguments: { text: 'x' } });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.structuredContent ?? r.content)).toContain('offer_suspended');
    } finally {
      await client.close();
    }
  });
});

describe('a job step does not run a suspended offer', () => {
  it('fails the step with offer_suspended without calling the provider, credits nobody and refunds the whole budget on-chain', async () => {
    // suspended by its buyers' failed calls (it may be already)
    mode = 'bad';
    for (let i = 0; i < 8 && !(await suspension()); i++) expect((await pay(`bad job ${i}`, 1)).status).toBe(502);
    expect(await suspension()).not.toBeNull();
    // the provider would answer well now: only the suspension keeps the step from it
    mode = 'good';
    const buyer = t.stack.payment.buyers[2];
    const token = await bearerToken(t.url, buyer);
    const before = await t.usdc(buyer.address);
    const heldBefore = await t.gateway.services.providerLedger.balance(sly.id);
    const seen = sly.server.calls.length;
    const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'Upper-case a word',
      budget_usdc: 0.05,
      capabilities: [SLY],
      steps: [{ capability_id: SLY, input: { text: 'job' } }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    let job: any;
    for (let i = 0; i < 600; i++) {
      job = await fetch(`${t.url}/api/v1/jobs/${created.body.job_id}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
      if (['succeeded', 'failed'].includes(job.status) && job.refund?.status === 'sent') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(job.status).toBe('failed');
    expect(job.steps[0]).toMatchObject({ capability_id: SLY, status: 'failed' });
    expect(JSON.stringify(job.steps[0])).toContain('offer_suspended');
    expect(job.spent_base_units).toBe('0');
    expect(job.refund).toMatchObject({ status: 'sent', amount: '50000' });
    // nothing reached the provider, nothing was credited, the buyer paid nothing in the end
    expect(sly.server.calls.slice(seen).filter((c) => (c.body.input as { text?: string }).text === 'job')).toEqual([]);
    expect(await t.gateway.services.providerLedger.balance(sly.id)).toEqual(heldBefore);
    expect(await t.usdc(buyer.address)).toBe(before);
  });
});
