import { defineCapability } from '@acg/capabilities';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { z } from 'zod';
import { echoCapabilityParameters } from '../../../packages/capabilities/test/echoCapability.js';
import { bearerToken, challenge, officialPayload, paymentHeader, post, readExecution } from './x402.js';

/** Runs counted here: the gateway must call `run` once per payment, with the parsed input. */
const runs: unknown[] = [];

/** A capability that exists only in this file: one definition, nothing else anywhere. */
const echo = defineCapability({
  ...echoCapabilityParameters('intelligence.echo_test'),
  description: 'Returns the text it is given, upper-cased when asked.',
  input: z.strictObject({ text: z.string().min(1), upper: z.boolean().default(false) }),
  async run(input) {
    runs.push(input);
    return { text: input.upper ? input.text.toUpperCase() : input.text };
  },
});

const t = useTestGateway({ capabilities: [echo] });

const getJson = async (path: string) => {
  const res = await fetch(`${t.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json() as Promise<Record<string, unknown>>;
};

describe('a capability added with one defineCapability call', () => {
  it('is listed in /registry with its price, schemas and example', async () => {
    const registry = (await getJson('/registry')) as { capabilities: Record<string, unknown>[] };
    const entry = registry.capabilities.find((c) => c.id === 'intelligence.echo_test');
    expect(entry).toMatchObject({
      product: 'intelligence',
      name: 'Echo (test)',
      status: 'PILOT',
      endpoint: t.executeUrl,
      price: '0.001',
      price_base_units: '1000',
      price_unit: 'call',
      authentication: 'x402',
      x402: { maxAmountRequired: '1000', resource: t.executeUrl },
      example_request: echo.example.request,
    });
    expect((entry!.input_schema as { properties: Record<string, unknown> }).properties).toHaveProperty('text');
    expect((entry!.output_schema as { required: string[] }).required).toEqual(['text']);
    // in catalog order: after mev, among intelligence by id
    const ids = registry.capabilities.map((c) => c.id);
    expect(ids.indexOf('intelligence.echo_test')).toBe(ids.indexOf('intelligence.wallet_balances') - 1);
  });

  it('is listed in /gateway-catalog.json, and in /openapi.json as a capability POST /api/v1/execute runs', async () => {
    const catalog = (await getJson('/gateway-catalog.json')) as { capabilities: Record<string, unknown>[] };
    expect(catalog.capabilities.find((c) => c.id === 'intelligence.echo_test')).toMatchObject({
      status: 'PILOT',
      x402: { advertised: true, resource: t.executeUrl },
    });
    const openapi = (await getJson('/openapi.json')) as {
      paths: Record<
        string,
        Record<
          string,
          {
            description: string;
            requestBody: {
              content: Record<string, { examples: Record<string, { value: unknown }>; schema: { properties: Record<string, { description?: string }> } }>;
            };
          }
        >
      >;
    };
    const execute = openapi.paths['/api/v1/execute'].post;
    const media = execute.requestBody.content['application/json'];
    expect(media.examples['intelligence.echo_test'].value).toEqual(echo.example.request);
    expect(media.schema.properties.capability_id.description).toContain('`intelligence.echo_test` (0.001 USDC per call)');
    expect(execute.description).toContain('intelligence.echo_test');
    // the built-ins are documented the same way
    expect(Object.keys(media.examples)).toEqual([
      'builder.send_bundle',
      'mev.liquidation_plan',
      'mev.liquidation_search',
      'intelligence.echo_test',
      'intelligence.wallet_balances',
    ]);
  });

  it('refuses input that does not match its schema before any payment (400, with the path)', async () => {
    const r = await post(t.executeUrl, { capability_id: 'intelligence.echo_test', input: { text: 42 } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ path: ['input', 'text'] })]);
    expect(runs).toHaveLength(0);
  });

  it('executes through POST /api/v1/execute with a real x402 payment on the dev chain, once per payment', async () => {
    const buyer = t.stack.payment.buyers[5];
    const treasury = t.stack.payment.treasury.address;
    const body = { capability_id: 'intelligence.echo_test', input: { text: 'paid echo', upper: true } };
    const pr = await challenge(t.executeUrl, body);
    expect(pr.accepts[0]).toMatchObject({ amount: '1000', payTo: treasury });
    const header = paymentHeader(await officialPayload(buyer, pr));
    const [payerBefore, treasuryBefore] = await Promise.all([t.usdc(buyer.address), t.usdc(treasury)]);

    const r = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'SUCCEEDED', result: { text: 'PAID ECHO' }, payment: { amount: '1000' } });
    const settle = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settle.transaction).toBe(r.body.payment.tx_hash);
    const [payerAfter, treasuryAfter] = await Promise.all([t.usdc(buyer.address), t.usdc(treasury)]);
    expect(payerBefore - payerAfter).toBe(1000n);
    expect(treasuryAfter - treasuryBefore).toBe(1000n);
    // run got the parsed input (defaults applied) exactly once; a replay returns the stored execution
    expect(runs).toEqual([{ text: 'paid echo', upper: true }]);
    const replay = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header, authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    expect(replay.body).toEqual(r.body);
    expect(runs).toHaveLength(1);
    const stored = await readExecution(t.url, r.body.execution_id, buyer);
    expect(stored).toMatchObject({ capability_id: 'intelligence.echo_test', status: 'SUCCEEDED', result: { text: 'PAID ECHO' } });
  });
});
