import { compareCapabilities } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_CAPABILITIES,
  CapabilityFailure,
  defineCapability,
  executableCapabilities,
  findCapability,
  InvalidCapabilityDefinitionError,
  isExecutable,
  type CapabilityDeps,
} from '../src/index.js';
import { echoCapabilityParameters } from './echoCapability.js';
import { SPEC_CAPABILITIES } from './specCapabilities.js';

const echoParameters = echoCapabilityParameters('intelligence.echo_unit');

const noDeps: CapabilityDeps = { chainClient: () => undefined };

describe('BUILTIN_CAPABILITIES', () => {
  it('lists every spec capability once, in catalog order', () => {
    expect(BUILTIN_CAPABILITIES.map((d) => d.id)).toEqual(SPEC_CAPABILITIES);
    expect([...BUILTIN_CAPABILITIES].sort(compareCapabilities).map((d) => d.id)).toEqual(SPEC_CAPABILITIES);
  });

  it('is executable exactly where a run is given', () => {
    for (const d of BUILTIN_CAPABILITIES) expect(d.executable, d.id).toBe(typeof d.run === 'function');
    expect(executableCapabilities().map((d) => d.id)).toEqual([
      'builder.send_bundle',
      'mev.liquidation_plan',
      'mev.liquidation_search',
      'intelligence.wallet_balances',
    ]);
  });

  it('has the spec prices in USDC base units', () => {
    expect(findCapability('builder.send_bundle')!.price).toEqual({ base_units: 100_000n, unit: 'bundle' });
    expect(findCapability('mev.liquidation_search')!.price).toEqual({ base_units: 20_000n, unit: 'call' });
    expect(findCapability('mev.liquidation_plan')!.price).toEqual({ base_units: 50_000n, unit: 'call' });
    expect(findCapability('intelligence.wallet_monitor')!.price).toEqual({ base_units: 1_000n, unit: 'event' });
    expect(findCapability('intelligence.wallet_balances')!.price).toEqual({ base_units: 1_000n, unit: 'call' });
    expect(findCapability('gateway.execute')!.price).toBeNull();
  });

  it('each executable example request is valid input of its capability', () => {
    for (const d of executableCapabilities()) {
      const request = d.example.request as { capability_id?: string; input?: unknown };
      const input = request.capability_id ? request.input : request;
      expect(d.input.safeParse(input).success, d.id).toBe(true);
    }
  });

  it('refuses to run before payment where the deployment lacks what a capability needs (precondition)', () => {
    const wb = findCapability('intelligence.wallet_balances')!;
    expect(wb.precondition!(wb.input!.parse({ address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' }), noDeps)).toMatch(/not configured/);
    const ls = findCapability('mev.liquidation_search')!;
    expect(ls.precondition!(ls.input!.parse({}), noDeps)).toMatch(/not configured/);
    const lp = findCapability('mev.liquidation_plan')!;
    expect(lp.precondition!(lp.input!.parse((lp.example.request as { input: unknown }).input), noDeps)).toMatch(/not configured/);
  });
});

describe('findCapability / executableCapabilities', () => {
  const echo = defineCapability({ ...echoParameters, run: async ({ text }) => ({ text }) });

  it('finds built-in and added definitions', () => {
    expect(findCapability('intelligence.wallet_balances')?.price?.base_units).toBe(1000n);
    expect(findCapability('intelligence.echo_unit')).toBeUndefined();
    expect(findCapability('intelligence.echo_unit', [...BUILTIN_CAPABILITIES, echo])).toBe(echo);
  });

  it('lists only what runs through POST /api/v1/execute, in catalog order, each with schemas and a price', () => {
    const all = [echo, ...BUILTIN_CAPABILITIES];
    const ids = executableCapabilities(all).map((d) => d.id);
    expect(ids).toEqual(['builder.send_bundle', 'mev.liquidation_plan', 'mev.liquidation_search', 'intelligence.echo_unit', 'intelligence.wallet_balances']);
    for (const d of executableCapabilities(all)) {
      expect(d.input).not.toBeNull();
      expect(d.output).not.toBeNull();
      expect(d.price).not.toBeNull();
    }
  });
});

describe('defineCapability', () => {
  it('makes a capability executable exactly when run is given', async () => {
    const echo = defineCapability({ ...echoParameters, run: async ({ text }) => ({ text }) });
    expect(echo.executable).toBe(true);
    expect(isExecutable(echo)).toBe(true);
    expect(await echo.run({ text: 'hi' }, noDeps)).toEqual({ text: 'hi' });
    const listed = defineCapability(echoParameters);
    expect(listed.executable).toBe(false);
    expect(isExecutable(listed)).toBe(false);
    expect(Object.isFrozen(echo)).toBe(true);
  });

  it('refuses self-contradicting definitions', () => {
    const run = async () => ({ text: '' });
    expect(() => defineCapability({ ...echoParameters, price: null, run })).toThrow(InvalidCapabilityDefinitionError);
    expect(() => defineCapability({ ...echoParameters, input: null, run } as never)).toThrow(/input and output/);
    expect(() => defineCapability({ ...echoParameters, precondition: () => undefined })).toThrow(/precondition needs run/);
    expect(() => defineCapability({ ...echoParameters, id: 'gateway.echo' })).toThrow(/must start with its product/);
    expect(() => defineCapability({ ...echoParameters, price: { base_units: -1n, unit: 'call' } })).toThrow(/negative/);
  });

  it('CapabilityFailure carries a stable code, a safe shortMessage and the HTTP status', () => {
    const f = new CapabilityFailure('chain_unavailable', 'The chain did not answer.', 503);
    expect([f.name, f.code, f.shortMessage, f.status]).toEqual(['CapabilityFailure', 'chain_unavailable', 'The chain did not answer.', 503]);
  });
});
