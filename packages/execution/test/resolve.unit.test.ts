import { BUILTIN_CAPABILITIES, defineCapability, type CapabilityDeps } from '@acg/capabilities';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { echoCapabilityParameters } from '../../capabilities/test/echoCapability.js';
import { CapabilityResolutionError, resolveCapability } from '../src/index.js';

const parsedInputs: unknown[] = [];
const echo = defineCapability({
  ...echoCapabilityParameters('intelligence.echo_unit'),
  input: z.strictObject({ text: z.string(), times: z.int().min(1).default(1) }),
  precondition(input) {
    parsedInputs.push(input);
    return input.text === 'forbidden' ? 'This text cannot be echoed here.' : undefined;
  },
  run: async ({ text, times }) => ({ text: text.repeat(times) }),
});
const definitions = [...BUILTIN_CAPABILITIES, echo];
const deps: CapabilityDeps = { chainClient: () => undefined };

const failure = (id: string, input: unknown) => {
  const r = resolveCapability(definitions, id, input, deps);
  if (r.ok) throw new Error('expected a failure');
  expect(r.error).toBeInstanceOf(CapabilityResolutionError);
  return r.error;
};

describe('resolveCapability', () => {
  it('resolves an executable capability with its input parsed once (defaults applied) and its price', () => {
    const r = resolveCapability(definitions, 'intelligence.echo_unit', { text: 'hi' }, deps);
    expect(r).toMatchObject({ ok: true, input: { text: 'hi', times: 1 }, price: 1000n });
    expect(r.ok && r.definition).toBe(echo);
    // the precondition saw the parsed input, not the raw one
    expect(parsedInputs.at(-1)).toEqual({ text: 'hi', times: 1 });
  });

  it('answers 404 for an unknown id, 422 for a listed capability without run', () => {
    expect(failure('intelligence.nothing', {})).toMatchObject({ code: 'unknown_capability', status: 404 });
    expect(failure('gateway.health', {})).toMatchObject({ code: 'not_executable', status: 422 });
    expect(failure('gateway.providers', {}).shortMessage).toBe('The capability "gateway.providers" cannot be executed through /api/v1/execute.');
  });

  it('answers 400 with each zod issue and its path inside the input', () => {
    const error = failure('intelligence.echo_unit', { text: 7, times: 0 });
    expect(error).toMatchObject({ code: 'invalid_input', status: 400 });
    expect(error.issues!.map((i) => i.path)).toEqual([['text'], ['times']]);
  });

  it('answers 422 with the reason when the precondition is unmet (e.g. a chain not configured)', () => {
    expect(failure('intelligence.echo_unit', { text: 'forbidden' })).toMatchObject({
      code: 'precondition_unmet',
      status: 422,
      shortMessage: 'This text cannot be echoed here.',
    });
    expect(failure('intelligence.wallet_balances', { address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', chain: 'arbitrum' }).shortMessage).toMatch(
      /"arbitrum" is not configured/,
    );
  });
});
