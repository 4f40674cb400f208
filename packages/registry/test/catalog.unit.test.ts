import { describe, expect, it } from 'vitest';
import { BUILTIN_CAPABILITIES as CATALOG, defineCapability } from '@acg/capabilities';
import { RegistryDocument, registryDocumentJsonSchema, type ProbeRecord } from '@acg/schemas';
import { z } from 'zod';
import { DuplicateCapabilityError, REGISTRY_VERSION, buildCatalog, type CapabilityDescriptor } from '../src/index.js';
import { SPEC_CAPABILITIES } from '../../capabilities/test/specCapabilities.js';
import { context, strictAjv } from './helpers.js';

const validate = strictAjv().compile(registryDocumentJsonSchema());

function expectValid(doc: unknown) {
  expect(validate(doc), JSON.stringify(validate.errors, null, 2)).toBe(true);
}

function okProbe(url: string): ProbeRecord {
  return {
    ok: true,
    checked_at: '2025-01-02T03:04:00Z',
    probe: { url, method: 'POST', status: 402, body_sha256: 'b'.repeat(64), artifact: 'probes/wallet_balances.json' },
  };
}

/** A capability announced but not built (the spec says "x402 planned", docs/spec-notes.md 4 style): PLANNED whatever the probes say. */
const plannedCapability: CapabilityDescriptor = defineCapability({
  id: 'mev.backrun_auction',
  product: 'mev',
  name: 'Backrun auction',
  description: 'Not built yet.',
  surface: 'REST',
  auth: 'x402',
  method: 'POST',
  endpoint: '{base_url}/v1/backrun',
  docs: null,
  built: false,
  x402: 'planned',
  price: null,
  input: null,
  output: null,
  example: { request: null, response: null },
});

const providerCapability: CapabilityDescriptor = defineCapability({
  id: 'intelligence.token_prices',
  product: 'intelligence',
  name: 'Token prices',
  description: 'Spot prices from a third-party provider.',
  surface: 'REST',
  auth: 'x402',
  method: 'POST',
  endpoint: 'https://provider.example.com/prices',
  docs: null,
  provider: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
  built: true,
  x402: 'accepted',
  price: { base_units: 2500n, unit: 'call' },
  input: z.looseObject({}),
  output: z.looseObject({}),
  example: { request: null, response: null },
  run: async () => ({}),
});

describe('buildCatalog (docs/spec-notes.md 2.1/2.2)', () => {
  it('validates against the generated JSON Schema 2020-12 (strict Ajv) and the zod schema', () => {
    const doc = buildCatalog(context());
    expectValid(doc);
    expect(RegistryDocument.safeParse(doc).success).toBe(true);
    expect(doc.registry_version).toBe(REGISTRY_VERSION);
    expect(doc.generated_at).toBe('2025-01-02T03:04:05.678Z');
  });

  it('lists every spec capability, ordered by product then id', () => {
    expect(buildCatalog(context()).capabilities.map((c) => c.id)).toEqual(SPEC_CAPABILITIES);
  });

  it('keeps the static catalog data in catalog order, and merges run-time providers into place', () => {
    expect(CATALOG.map((d) => d.id)).toEqual(SPEC_CAPABILITIES);
    const ids = buildCatalog(context({ extra: [providerCapability] })).capabilities.map((c) => c.id);
    expect(ids).toEqual([...SPEC_CAPABILITIES.slice(0, 9), 'intelligence.token_prices', ...SPEC_CAPABILITIES.slice(9)]);
  });

  it('never says LIVE without a probe: built capabilities are PILOT, the rest PLANNED', () => {
    const doc = buildCatalog(context({ extra: [plannedCapability] }));
    const statuses = Object.fromEntries(doc.capabilities.map((c) => [c.id, c.status]));
    expect(Object.values(statuses)).not.toContain('LIVE');
    // derived from the data, so building a capability (built: true) moves it from PLANNED to PILOT
    expect(statuses).toEqual(Object.fromEntries([...CATALOG, plannedCapability].map((d) => [d.id, d.built ? 'PILOT' : 'PLANNED'])));
    expect(Object.values(statuses)).toContain('PILOT');
    expect(Object.values(statuses)).toContain('PLANNED');
  });

  it('makes a built capability LIVE with a successful probe record, and the result validates', () => {
    const probe = okProbe('http://127.0.0.1:8080/api/v1/execute');
    const doc = buildCatalog(context({ probes: { 'intelligence.wallet_balances': probe } }));
    expectValid(doc);
    const live = doc.capabilities.find((c) => c.id === 'intelligence.wallet_balances')!;
    expect(live.status).toBe('LIVE');
    expect(live.evidence).toEqual({ source: 'prober', checked_at: probe.checked_at, probe: probe.probe });
    expect(doc.capabilities.filter((c) => c.status === 'LIVE')).toHaveLength(1);
  });

  it('ignores a probe of a capability that is not built (stays PLANNED)', () => {
    const planned = plannedCapability;
    const doc = buildCatalog(context({ extra: [planned], probes: { [planned.id]: okProbe('http://127.0.0.1:8080/api/v1/providers') } }));
    expect(doc.capabilities.find((c) => c.id === planned.id)!.status).toBe('PLANNED');
  });

  it('demotes a built capability with a failed probe to STALE, advertised by the catalog, and it validates', () => {
    const failed: ProbeRecord = { ...okProbe('http://127.0.0.1:8080/status/health'), ok: false };
    failed.probe = { ...failed.probe, method: 'GET', status: 503 };
    const doc = buildCatalog(context({ probes: { 'gateway.health': failed } }));
    expectValid(doc);
    const stale = doc.capabilities.find((c) => c.id === 'gateway.health')!;
    expect(stale.status).toBe('STALE');
    expect(stale.evidence.advertised_by).toBe('http://127.0.0.1:8080/gateway-catalog.json');
    expect(doc.network.operational_status).toBe('degraded');
  });

  it('fills endpoints from baseUrl and builderUrl and x402 terms from the payment context', () => {
    const doc = buildCatalog(context());
    const byId = new Map(doc.capabilities.map((c) => [c.id, c]));
    expect(byId.get('intelligence.wallet_balances')!.endpoint).toBe('http://127.0.0.1:8080/api/v1/execute');
    expect(byId.get('builder.send_bundle')!.endpoint).toBe('http://127.0.0.1:8081/rpc');
    expect(byId.get('intelligence.wallet_balances')!.x402).toEqual({
      advertised: true,
      resource: 'http://127.0.0.1:8080/api/v1/execute',
      pay_to: context().payment.payTo,
      asset: context().payment.asset,
      network: 'eip155:8453',
    });
    for (const d of CATALOG.filter((x) => x.x402 === 'planned')) expect(byId.get(d.id)!.x402).toEqual({ advertised: false });
    expect(byId.get('gateway.registry')!.x402).toBeUndefined();
  });

  it('uses the spec surfaces and auth schemes', () => {
    const doc = buildCatalog(context());
    const pick = (id: string) => {
      const c = doc.capabilities.find((x) => x.id === id)!;
      return [c.surface, c.auth];
    };
    expect(pick('gateway.execute')).toEqual(['REST', 'x402']);
    expect(pick('gateway.jobs')).toEqual(['REST', 'x402']);
    expect(pick('builder.send_bundle')).toEqual(['JSON-RPC', 'bundle_signature']);
    expect(pick('mev.liquidation_search')).toEqual(['REST', 'bearer']);
    expect(pick('intelligence.wallet_monitor')).toEqual(['WEBHOOK', 'bearer']);
    expect(pick('intelligence.wallet_balances')).toEqual(['REST', 'x402']);
    expect(pick('gateway.registry')).toEqual(['REST', 'none']);
    expect(pick('gateway.mcp')).toEqual(['MCP', 'x402']);
  });

  it('rolls up operational_status from health and says how', () => {
    const sample = (status: 'up' | 'degraded' | 'down' | 'planned') => ({ status, latency_ms_p50: 10, latency_ms_p99: 20 });
    const none = buildCatalog(context()).network;
    expect(none.operational_status).toBe('degraded');
    expect(none.operational_status_source).toMatch(/no health samples/);

    const ok = buildCatalog(context({ health: { 'gateway.execute': sample('up'), 'gateway.jobs': sample('planned') } })).network;
    expect(ok.operational_status).toBe('ok');
    expect(ok.operational_status_source).toMatch(/1 up, 0 degraded, 0 down/);

    const mixed = buildCatalog(context({ health: { 'gateway.execute': sample('up'), 'gateway.health': sample('down') } })).network;
    expect(mixed.operational_status).toBe('degraded');

    const outage = buildCatalog(context({ health: { 'gateway.execute': sample('down') } })).network;
    expect(outage.operational_status).toBe('outage');

    const unknownOnly = buildCatalog(context({ health: { 'nope.nothing': sample('down') } })).network;
    expect(unknownOnly.operational_status_source).toMatch(/no health samples/);
  });

  it('refuses two definitions with the same id', () => {
    expect(() => buildCatalog(context({ extra: [{ ...providerCapability, id: 'gateway.execute', product: 'gateway' }] }))).toThrow(DuplicateCapabilityError);
  });

  it('refuses an invalid context instead of serving an invalid document', () => {
    expect(() => buildCatalog(context({ generatedAt: 'now' }))).toThrow();
    expect(() => buildCatalog(context({ baseUrl: 'not a url' }))).toThrow();
  });
});
