import { describe, expect, it } from 'vitest';
import { ExecuteRequest, ExecutionResponse, LegacyRegistry, toJsonSchema } from '@acg/schemas';
import { BUILTIN_CAPABILITIES as CATALOG, findCapability, WalletBalancesInput, WalletBalancesOutput } from '@acg/capabilities';
import { buildCatalog, buildLegacyRegistry, formatUsdc } from '../src/index.js';
import { context, strictAjv } from './helpers.js';
import { SPEC_2_3_FIELDS } from './legacyRegistryFields.js';

const registry = buildLegacyRegistry(context());
const entry = (id: string) => registry.capabilities.find((c) => c.id === id)!;

describe('buildLegacyRegistry (docs/spec-notes.md 2.3, GET /registry)', () => {
  it('has top-level network metadata and the same capabilities, statuses and order as the catalog', () => {
    const catalog = buildCatalog(context());
    expect(registry.network).toEqual(catalog.network);
    expect(registry.registry_version).toBe(catalog.registry_version);
    expect(registry.capabilities.map((c) => [c.id, c.status])).toEqual(catalog.capabilities.map((c) => [c.id, c.status]));
  });

  it('validates against its own generated JSON Schema (strict Ajv)', () => {
    const validate = strictAjv().compile(toJsonSchema(LegacyRegistry));
    expect(validate(registry), JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  it('gives every entry all docs/spec-notes.md 2.3 fields', () => {
    for (const c of registry.capabilities) {
      for (const field of SPEC_2_3_FIELDS) {
        expect(Object.keys(c), `${c.id}.${field}`).toContain(field);
      }
      expect(c.currency).toBe('USDC');
      expect(c.authentication).toBe(c.auth);
    }
  });

  it('prices wallet_balances at 0.001 USDC = 1000 base units with x402 terms on eip155:8453', () => {
    const wb = entry('intelligence.wallet_balances');
    expect(wb.price).toBe('0.001');
    expect(wb.price_base_units).toBe('1000');
    expect(wb.price_unit).toBe('call');
    expect(wb.x402).toEqual({
      x402Version: 2,
      scheme: 'exact',
      network: 'eip155:8453',
      asset: context().payment.asset,
      payTo: context().payment.payTo,
      resource: 'http://127.0.0.1:8080/api/v1/execute',
      maxAmountRequired: '1000',
    });
  });

  it('writes price as the decimal form of price_base_units, and null prices together', () => {
    for (const c of registry.capabilities) {
      if (c.price_base_units === null) {
        expect([c.price, c.price_unit]).toEqual([null, null]);
      } else {
        expect(c.price).toBe(formatUsdc(BigInt(c.price_base_units)));
        expect(BigInt(c.price_base_units)).toBe(findCapability(c.id)!.price!.base_units);
      }
    }
    expect(entry('builder.send_bundle').price).toBe('0.1');
    expect(entry('mev.liquidation_search').price).toBe('0.02');
    expect(entry('intelligence.wallet_monitor')).toMatchObject({ price: '0.001', price_unit: 'event' });
    expect(entry('gateway.execute').price).toBeNull();
  });

  it('offers x402 terms only where x402 is taken now, without a fixed amount for execute', () => {
    for (const d of CATALOG.filter((x) => x.x402 !== 'accepted')) expect(entry(d.id).x402, d.id).toBeNull();
    for (const d of CATALOG.filter((x) => x.x402 === 'accepted')) expect(entry(d.id).x402, d.id).not.toBeNull();
    expect(entry('gateway.registry').x402).toBeNull();
    expect(entry('gateway.execute').x402).not.toBeNull();
    expect(entry('gateway.execute').x402!.maxAmountRequired).toBeUndefined();
  });

  it('wallet_balances input_schema is a JSON Schema that accepts its example_request.input', () => {
    const wb = entry('intelligence.wallet_balances');
    const validateInput = strictAjv().compile(wb.input_schema!);
    const example = wb.example_request as { capability_id: string; input: unknown };
    expect(example.capability_id).toBe('intelligence.wallet_balances');
    expect(validateInput(example.input), JSON.stringify(validateInput.errors)).toBe(true);
    expect(validateInput({ address: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266' })).toBe(true);
    expect(validateInput({ address: 'not-an-address', chain: 'base' })).toBe(false);
    expect(validateInput({ address: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', chain: 'solana' })).toBe(false);
    expect(WalletBalancesInput.safeParse(example.input).success).toBe(true);
    expect(ExecuteRequest.safeParse(example).success).toBe(true);
  });

  it('wallet_balances example_response is an execute response whose result matches output_schema', () => {
    const wb = entry('intelligence.wallet_balances');
    const response = ExecutionResponse.parse(wb.example_response);
    expect(response.status).toBe('SUCCEEDED');
    expect(WalletBalancesOutput.safeParse(response.result).success).toBe(true);
    const validateOutput = strictAjv().compile(wb.output_schema!);
    expect(validateOutput(response.result), JSON.stringify(validateOutput.errors)).toBe(true);
    if (response.status === 'SUCCEEDED') expect(response.payment.amount).toBe(wb.price_base_units);
  });

  it('every input/output schema compiles under strict Ajv and accepts the examples it describes', () => {
    for (const c of registry.capabilities) {
      // an example in execute form ({capability_id, input}) is checked by its input; any other by itself
      const executeForm = (x: unknown) => findCapability(c.id)!.executable && typeof x === 'object' && x !== null && 'capability_id' in x;
      if (c.input_schema) {
        const validate = strictAjv().compile(c.input_schema);
        const sample = executeForm(c.example_request) ? (c.example_request as { input: unknown }).input : c.example_request;
        if (sample !== null) expect(validate(sample), `${c.id} example_request: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      if (c.output_schema) {
        const validate = strictAjv().compile(c.output_schema);
        const sample = executeForm(c.example_request) ? (c.example_response as { result: unknown }).result : c.example_response;
        if (sample !== null) expect(validate(sample), `${c.id} example_response: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('takes latencies and availability from health, null before a sample, planned for PLANNED', () => {
    expect(entry('intelligence.wallet_balances')).toMatchObject({ latency_ms_p50: null, latency_ms_p99: null, availability: null });
    for (const d of CATALOG.filter((x) => !x.built)) expect(entry(d.id).availability, d.id).toBe('planned');
    const measured = buildLegacyRegistry(context({ health: { 'intelligence.wallet_balances': { status: 'up', latency_ms_p50: 41.5, latency_ms_p99: 120 } } }));
    expect(measured.capabilities.find((c) => c.id === 'intelligence.wallet_balances')).toMatchObject({
      latency_ms_p50: 41.5,
      latency_ms_p99: 120,
      availability: 'up',
    });
  });
});
