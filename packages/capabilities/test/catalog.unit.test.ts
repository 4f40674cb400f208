import { compareCapabilities } from '@acg/schemas';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { BUILTIN_CAPABILITIES, CapabilityCatalog, defineCapability } from '../src/index.js';

const echo = (id: `${string}.${string}`, product = id.split('.')[0]) =>
  defineCapability({
    id,
    product: product as 'intelligence',
    name: 'Echo',
    description: 'Returns its input.',
    price: { base_units: 2000n, unit: 'call' },
    input: z.object({ text: z.string() }),
    output: z.object({ text: z.string() }),
    surface: 'REST',
    auth: 'x402',
    method: 'POST',
    endpoint: '{base_url}/api/v1/execute',
    docs: null,
    x402: 'accepted',
    built: true,
    example: { request: { text: 'hi' }, response: { text: 'hi' } },
    run: async ({ text }) => ({ text }),
  });

describe('CapabilityCatalog', () => {
  it('lists the built-ins in catalog order and finds them by id', () => {
    const catalog = new CapabilityCatalog();
    expect(catalog.list().map((d) => d.id)).toEqual([...BUILTIN_CAPABILITIES].sort(compareCapabilities).map((d) => d.id));
    expect(catalog.find('intelligence.wallet_balances')?.executable).toBe(true);
    expect(catalog.find('intelligence.nope')).toBeUndefined();
  });

  it('adds and replaces a run-time source, notifies listeners and bumps the version', () => {
    const catalog = new CapabilityCatalog();
    let calls = 0;
    catalog.onChange(() => calls++);
    const v0 = catalog.version;
    catalog.setSource('providers', [echo('intelligence.echo_one')]);
    expect(catalog.find('intelligence.echo_one')).toBeDefined();
    expect(catalog.executable().some((d) => d.id === 'intelligence.echo_one')).toBe(true);
    catalog.setSource('providers', [echo('intelligence.echo_two')]);
    expect(catalog.find('intelligence.echo_one')).toBeUndefined();
    expect(catalog.find('intelligence.echo_two')).toBeDefined();
    expect(calls).toBe(2);
    expect(catalog.version).toBeGreaterThan(v0);
    catalog.setSource('providers', []);
    expect(catalog.list()).toHaveLength(BUILTIN_CAPABILITIES.length);
  });

  it('never lets a run-time definition take a fixed id', () => {
    const catalog = new CapabilityCatalog();
    const dropped = catalog.setSource('providers', [echo('intelligence.wallet_balances'), echo('intelligence.echo')]);
    expect(dropped).toEqual(['intelligence.wallet_balances']);
    expect(catalog.find('intelligence.wallet_balances')).toBe(BUILTIN_CAPABILITIES.find((d) => d.id === 'intelligence.wallet_balances'));
  });

  it('refuses fixed definitions that share an id', () => {
    expect(() => new CapabilityCatalog([echo('intelligence.echo'), echo('intelligence.echo')])).toThrow(/defined twice/);
  });
});
