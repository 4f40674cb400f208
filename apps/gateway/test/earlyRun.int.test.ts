import { defineCapability, type CapabilityDefinition } from '@acg/capabilities';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echoCapabilityParameters } from '../../../packages/capabilities/test/echoCapability.js';
import type { Paywall } from '@acg/payments';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { paywallWithSettle, startTestGateway, type TestGateway } from './harness.js';
import { challenge, craftPayload, officialPayload, paymentHeader, post, readExecution, usdcReader } from './x402.js';

// A read-only capability (`readOnly: true`) starts once its payment is verified and reserved, while
// the payment settles on-chain; its result is released only after settlement, and dropped when
// settlement is refused. Settlement is held deterministically here: the facilitator's settle
// waits for a gate the test opens.

/** Generous bound that only detects a hang (a run that never starts while settlement is held). */
const HANG_MS = 30_000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what}`)), HANG_MS);
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

/** A promise with its resolve function. */
function signal<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

let started = signal<{ text: string }>();
const runs: string[] = [];

/** Read-only: may start while its payment settles. */
const readOnlyEcho: CapabilityDefinition = defineCapability({
  ...echoCapabilityParameters('intelligence.early_echo_test'),
  name: 'Early echo (test)',
  description: 'Returns its text; read-only.',
  readOnly: true,
  async run(input) {
    runs.push(`early:${input.text}`);
    started.resolve(input);
    // `fail-once...`: the first run fails (as a chain read does while the chain is down), later ones succeed
    if (input.text.startsWith('fail-once') && runs.filter((r) => r === `early:${input.text}`).length === 1) throw new Error('chain unreachable');
    return { text: input.text };
  },
});

/** Not read-only: runs only after its payment settled. */
const laterEcho: CapabilityDefinition = defineCapability({
  ...echoCapabilityParameters('intelligence.later_echo_test'),
  name: 'Later echo (test)',
  description: 'Returns its text; runs after settlement.',
  async run(input) {
    runs.push(`later:${input.text}`);
    started.resolve(input);
    return { text: input.text };
  },
});

let t: TestGateway;
let balanceOf: ReturnType<typeof usdcReader>;
/** The facilitator's settle waits for this gate; `settling` resolves when it is reached. */
let gate = signal();
let settling = signal();
/** When set, settle answers this refusal instead of settling. */
let refuseWith: string | undefined;

type Flow = 'authorization' | 'upfront';
const paywalls = {} as Record<Flow, Paywall>;

beforeAll(async () => {
  t = await startTestGateway({ capabilities: [readOnlyEcho, laterEcho] });
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
  // the same held settlement in both x402 flows: `authorization` (verify first, as with a remote
  // facilitator) and `upfront` (the gateway's own: settle verifies; the payer's signature is checked locally)
  for (const paymentFlow of ['authorization', 'upfront'] as const) {
    paywalls[paymentFlow] = paywallWithSettle(
      t,
      async (inner, p, r) => {
        settling.resolve();
        await gate.promise;
        if (refuseWith) return { success: false, errorReason: refuseWith, transaction: '', network: r.network, payer: '' } as never;
        return inner.settle(p, r);
      },
      { paymentFlow },
    );
    await paywalls[paymentFlow].init();
  }
}, 120_000);

afterAll(async () => {
  await t?.close();
});

beforeEach(() => {
  started = signal();
  gate = signal();
  settling = signal();
  refuseWith = undefined;
  runs.length = 0;
});

const executeUrl = () => `${t.url}/api/v1/execute`;

async function paidRequest(capabilityId: string, buyerIndex: number, text: string) {
  const buyer = t.stack.payment.buyers[buyerIndex];
  const body = { capability_id: capabilityId, input: { text } };
  const header = paymentHeader(await officialPayload(buyer, await challenge(executeUrl(), body)));
  return { buyer, response: post(executeUrl(), body, { 'PAYMENT-SIGNATURE': header }) };
}

/**
 * Waits until the payment under test is held in settlement, then makes a round trip to the gateway,
 * giving a wrongly early run every chance to show up, and checks that nothing ran.
 */
async function expectNoRunWhileSettlementHeld(): Promise<void> {
  await within(settling.promise, 'settlement reached');
  expect((await fetch(`${t.url}/status/health`)).status).toBe(200);
  expect(runs).toEqual([]);
}

describe.each(['authorization', 'upfront'] as const)('a read-only capability runs while its payment settles (x402 %s flow)', (flow) => {
  beforeAll(() => {
    t.gateway.services.paywall = paywalls[flow];
  });

  it('starts before settlement ends, answers only after it, and records the settled payment', { timeout: 60_000 }, async () => {
    const { buyer, response } = await paidRequest('intelligence.early_echo_test', 3, 'overlap');
    await within(settling.promise, 'settlement reached');
    // settlement is held: the run starts anyway
    expect(await within(started.promise, 'read-only run started while settlement is held')).toEqual({ text: 'overlap' });
    const before = await balanceOf(buyer.address);
    gate.resolve();
    const res = await response;
    expect(res.status).toBe(200);
    const body = res.body as { execution_id: string; status: string; result: unknown; payment: { tx_hash: string; amount: string } };
    expect(body).toMatchObject({ status: 'SUCCEEDED', result: { text: 'overlap' }, payment: { amount: '1000' } });
    expect(body.payment.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await balanceOf(buyer.address))).toBe(1000n);
    expect(runs).toEqual(['early:overlap']);
    const stored = await readExecution(t.url, body.execution_id, buyer);
    expect(stored).toMatchObject({ status: 'SUCCEEDED', result: { text: 'overlap' }, payment: { tx_hash: body.payment.tx_hash } });
    expect(stored.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('an early run that failed while the payment settled is run once more after settlement: SUCCEEDED, charged once, no refund', {
    timeout: 60_000,
  }, async () => {
    const text = `fail-once-${flow}`;
    const { buyer, response } = await paidRequest('intelligence.early_echo_test', 7, text);
    await within(settling.promise, 'settlement reached');
    await within(started.promise, 'read-only run started while settlement is held');
    const before = await balanceOf(buyer.address);
    gate.resolve();
    const res = await response;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'SUCCEEDED', result: { text }, payment: { amount: '1000' } });
    expect(runs).toEqual([`early:${text}`, `early:${text}`]);
    expect(before - (await balanceOf(buyer.address))).toBe(1000n);
    expect(res.body.refund).toBeUndefined();
  });

  it('a capability that is not read-only does not start until settlement ends', { timeout: 60_000 }, async () => {
    const { response } = await paidRequest('intelligence.later_echo_test', 4, 'after');
    await expectNoRunWhileSettlementHeld();
    gate.resolve();
    const res = await response;
    expect(res.status).toBe(200);
    expect(runs).toEqual(['later:after']);
  });

  it('settlement refused: the early result is dropped, nothing is stored or charged, and 402 says why', { timeout: 60_000 }, async () => {
    const { buyer, response } = await paidRequest('intelligence.early_echo_test', 5, 'dropped');
    await within(settling.promise, 'settlement reached');
    await within(started.promise, 'read-only run started');
    const before = await balanceOf(buyer.address);
    refuseWith = 'invalid_exact_evm_payload_signature';
    gate.resolve();
    const res = await response;
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ reason: 'invalid_exact_evm_payload_signature' });
    expect(JSON.stringify(res.body)).not.toContain('dropped');
    expect(await balanceOf(buyer.address)).toBe(before);
    expect(runs).toEqual(['early:dropped']);
  });
});

describe('x402 upfront flow: a payment not signed by its payer', () => {
  beforeAll(() => {
    t.gateway.services.paywall = paywalls.upfront;
  });

  it('does not start the read-only run early; settlement refuses it and it never runs', { timeout: 60_000 }, async () => {
    const buyer = t.stack.payment.buyers[6];
    const body = { capability_id: 'intelligence.early_echo_test', input: { text: 'forged' } };
    const pr = await challenge(executeUrl(), body);
    // signed by another key in the buyer's name
    const forged = await craftPayload(privateKeyToAccount(generatePrivateKey()), pr.accepts[0], 8453, { from: buyer.address });
    const response = post(executeUrl(), body, { 'PAYMENT-SIGNATURE': paymentHeader(forged) });
    await expectNoRunWhileSettlementHeld();
    gate.resolve();
    const res = await response;
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ reason: 'invalid_exact_evm_signature' });
    expect(runs).toEqual([]);
  });
});
