import { BUILTIN_CAPABILITIES, executableCapabilities, gatewayJobs, liquidationSearch } from '@acg/capabilities';
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { describe, expect, it } from 'vitest';
import { depositBazaar, executeBazaar, routeBazaar } from '../src/paidRoute/bazaar.js';
import { toolBazaar } from '../src/mcp/paidTool.js';

/** Each declaration must pass @x402/extensions' own validators: info valid against its schema, and the protocol invariants. */
function expectValid(extensions: Record<string, unknown>, label: string): DiscoveryExtension {
  const bazaar = extensions.bazaar as DiscoveryExtension;
  const r = validateDiscoveryExtension(bazaar);
  expect(r, `${label}: ${JSON.stringify(r.errors)}`).toEqual({ valid: true });
  expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>), label).toEqual({ valid: true });
  return bazaar;
}

describe('x402 Bazaar declarations', () => {
  const executables = executableCapabilities(BUILTIN_CAPABILITIES);

  it('POST /api/v1/execute: one valid declaration per executable capability, with its input and output', () => {
    expect(executables.length).toBeGreaterThan(0);
    for (const d of executables) {
      const bazaar = expectValid(executeBazaar(d), d.id);
      expect(bazaar.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json', body: { capability_id: d.id } });
      // a built-in with an example execution declares its output part
      if ((d.example.response as { execution_id?: string } | null)?.execution_id) expect(bazaar.info.output, d.id).toMatchObject({ type: 'json' });
      expect(executeBazaar(d)).toBe(executeBazaar(d));
    }
  });

  it('MCP tools: one valid declaration per executable capability (type mcp, streamable-http)', () => {
    for (const d of executables) {
      const bazaar = expectValid(toolBazaar(d), d.id);
      expect(bazaar.info.input).toMatchObject({ type: 'mcp', toolName: d.id.replace('.', '_'), transport: 'streamable-http' });
      expect((bazaar.info.input as { inputSchema: { $schema?: string } }).inputSchema.$schema).toBeUndefined();
    }
  });

  it('the paid REST routes: jobs and deposit (POST body), liquidation search (GET query)', () => {
    expect(expectValid(routeBazaar(gatewayJobs), 'jobs').info.input).toMatchObject({ method: 'POST', bodyType: 'json' });
    expect(expectValid(depositBazaar(), 'deposit').info.input).toMatchObject({ method: 'POST', body: { amount_usdc: '1.5' } });
    const search = expectValid(routeBazaar(liquidationSearch), 'liquidation search');
    expect(search.info.input).toMatchObject({ method: 'GET', queryParams: { min_profit_usd: 100, chain: 'ethereum' } });
    expect(search.info.output).toMatchObject({ type: 'json', example: { chain: 'ethereum' } });
  });

  it('an example that breaks its schema is caught by the validator (the check can fail)', () => {
    const d = executables[0];
    const bazaar = structuredClone(executeBazaar(d).bazaar) as DiscoveryExtension;
    (bazaar.info.input as { body: Record<string, unknown> }).body = { capability_id: 'other.capability', input: {} };
    expect(validateDiscoveryExtension(bazaar).valid).toBe(false);
  });
});
