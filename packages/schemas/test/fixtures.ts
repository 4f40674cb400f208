import type { RegistryDocument } from '../src/index.js';

/** A small valid registry document exercising every optional field once. */
export function validDocument(): RegistryDocument {
  return {
    registry_version: '1.0.0',
    generated_at: '2025-01-02T03:04:05.678Z',
    network: {
      organization: 'Example Org',
      domains: {
        discover: 'https://gw.example.com',
        execute: 'https://gw.example.com',
        intelligence: 'https://gw.example.com',
      },
      operational_status: 'ok',
      operational_status_source: 'rollup of health statuses',
    },
    capabilities: [
      {
        id: 'gateway.execute',
        product: 'gateway',
        name: 'Execute',
        description: 'Runs a capability.',
        status: 'LIVE',
        surface: 'REST',
        endpoint: 'https://gw.example.com/api/v1/execute',
        auth: 'x402',
        provider: 'Example Org',
        proof: null,
        jwks_url: null,
        x402: {
          advertised: true,
          resource: 'https://gw.example.com/api/v1/execute',
          pay_to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          network: 'eip155:8453',
        },
        docs_url: 'https://gw.example.com/openapi.json',
        related_capabilities: ['intelligence.wallet_balances'],
        evidence: {
          source: 'prober',
          checked_at: '2025-01-02T03:04:00Z',
          probe: {
            url: 'https://gw.example.com/api/v1/execute',
            method: 'POST',
            status: 402,
            body_sha256: 'a'.repeat(64),
            artifact: 'probes/gateway.execute.json',
          },
        },
        notes: 'note',
      },
      {
        id: 'builder.send_bundle',
        product: 'builder',
        name: 'Bundle submit',
        status: 'STALE',
        surface: 'JSON-RPC',
        endpoint: 'https://builder.example.com/rpc',
        auth: 'bundle_signature',
        provider: 'Example Org',
        evidence: { source: 'prober', advertised_by: 'https://gw.example.com/gateway-catalog.json', next_action: 're-probe' },
      },
      {
        id: 'intelligence.wallet_balances',
        product: 'intelligence',
        name: 'Wallet balances',
        status: 'PLANNED',
        surface: 'REST',
        endpoint: 'https://gw.example.com/api/v1/execute',
        auth: 'x402',
        provider: 'Example Org',
        evidence: { source: 'catalog' },
      },
    ],
    metric_definitions: {
      latency_ms_p50: { description: 'median latency', unit: 'ms' },
      availability: { description: 'health status' },
    },
  };
}
