import { MAX_JOB_CAPABILITIES, MAX_JOB_OBJECTIVE_CHARS, MAX_JOB_STEP_INPUT_BYTES, MAX_JOB_STEPS } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../useTestGateway.js';
import { bearerToken, challenge, officialPayload, paymentHeader, post } from '../x402.js';

/**
 * Attack (issue 23 item 11): make the gateway work without paying. A job listing thousands of
 * capabilities and steps (checked with a list scan per step: quadratic), an objective copied into
 * every step, a step input of most of the 1 MiB body, a deposit amount of a hundred thousand
 * trailing zeros (parsed by a regex quadratic in its length). Each bound (the x402 requirements
 * cache kept one entry per caller-chosen price: packages/payments/test/challenge.unit.test.ts) answers 422 (or 413) naming its
 * limit before any payment: a valid payment sent with it is not settled, and the gateway keeps
 * answering others.
 */
const t = useTestGateway({ config: { rateLimitPerSecond: 0 } });
const JOBS = () => `${t.url}/api/v1/jobs`;
const CAP = 'intelligence.wallet_balances';

const step = (address: string) => ({ capability_id: CAP, input: { address } });

describe('bounds on work before payment', () => {
  it('refuses a job over the step, capability and objective limits with 422 naming each, and settles no payment sent with it', async () => {
    const buyer = t.stack.payment.buyers[0];
    const good = { objective: 'balances', budget_usdc: 0.002, capabilities: [CAP], steps: [step(buyer.address)] };
    // a valid payment for a job at this price, sent along with each oversized plan
    const header = paymentHeader(await officialPayload(buyer, await challenge(JOBS(), good)));
    const before = { payer: await t.usdc(buyer.address), treasury: await t.usdc(t.stack.payment.treasury.address) };
    const manyCaps = Array.from({ length: MAX_JOB_CAPABILITIES + 1 }, (_, i) => `intelligence.c${i}`);
    const cases: [string, unknown, string, number][] = [
      ['steps', { ...good, steps: Array.from({ length: MAX_JOB_STEPS + 1 }, () => step(buyer.address)) }, 'steps', MAX_JOB_STEPS],
      ['capabilities', { ...good, capabilities: [CAP, ...manyCaps] }, 'capabilities', MAX_JOB_CAPABILITIES],
      ['objective', { ...good, objective: 'x'.repeat(MAX_JOB_OBJECTIVE_CHARS + 1) }, 'objective', MAX_JOB_OBJECTIVE_CHARS],
      // the quadratic case of the report: most of the 1 MiB body in capabilities and steps
      [
        'a 1 MiB plan',
        {
          ...good,
          capabilities: Array.from({ length: 10_000 }, (_, i) => `intelligence.c${i}`),
          steps: Array.from({ length: 5_000 }, () => step(buyer.address)),
        },
        'capabilities',
        MAX_JOB_CAPABILITIES,
      ],
    ];
    for (const [name, body, limit, max] of cases) {
      const r = await post(JOBS(), body, { 'PAYMENT-SIGNATURE': header });
      expect(r.status, `${name}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(422);
      expect(r.contentType, name).toContain('application/problem+json');
      expect(r.body, name).toMatchObject({ status: 422, limit, max });
      expect(r.headers.get('payment-response'), name).toBeNull();
    }
    expect(await t.usdc(buyer.address)).toBe(before.payer);
    expect(await t.usdc(t.stack.payment.treasury.address)).toBe(before.treasury);
    // the OpenAPI document states the bounds
    const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as any;
    const schema = openapi.paths['/api/v1/jobs'].post.requestBody.content['application/json'].schema;
    expect(schema.properties.steps.maxItems).toBe(MAX_JOB_STEPS);
    expect(schema.properties.capabilities.maxItems).toBe(MAX_JOB_CAPABILITIES);
    expect(schema.properties.objective.maxLength).toBe(MAX_JOB_OBJECTIVE_CHARS);
    // the same payment still buys the job it was signed for: nothing was consumed
    const ok = await post(JOBS(), good, { 'PAYMENT-SIGNATURE': header });
    expect(ok.status).toBe(202);
  });

  it('refuses a step input over its size with 413 naming the limit', async () => {
    const buyer = t.stack.payment.buyers[1];
    const big = { address: buyer.address, padding: 'x'.repeat(MAX_JOB_STEP_INPUT_BYTES) };
    const r = await post(JOBS(), { objective: 'big', budget_usdc: 0.002, capabilities: [CAP], steps: [{ capability_id: CAP, input: big }] });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ status: 413, limit: 'step_input_bytes', max: MAX_JOB_STEP_INPUT_BYTES });
    expect(r.body.errors[0].path).toEqual(['steps', 0, 'input']);
  });

  it('refuses a deposit amount of 100,000 trailing zeros with 422 naming the limit, and keeps serving', async () => {
    const token = await bearerToken(t.url, t.stack.payment.buyers[2]);
    const amount = `1.${'0'.repeat(100_000)}`;
    const [r, registry] = await Promise.all([
      post(`${t.url}/v1/account/deposit`, { amount_usdc: amount }, { authorization: `Bearer ${token}` }),
      fetch(`${t.url}/registry`),
    ]);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ limit: 'amount_usdc', max: 32 });
    expect(registry.status).toBe(200);
    // a normal amount still gets its 402
    expect((await post(`${t.url}/v1/account/deposit`, { amount_usdc: '1.5' })).status).toBe(402);
  });
});
