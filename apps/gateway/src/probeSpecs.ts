import { findCapability, walletBalances } from '@acg/capabilities';
import { WALLET_BALANCES_ID } from '@acg/schemas';
import type { ProbeSpec } from './probes.js';
import type { Services } from './services.js';

/** A 402 body that carries SPEC 2.9's fields and an x402 v2 `accepts` list. */
function isChallenge(body: unknown): boolean {
  const b = body as Record<string, unknown>;
  return b?.x402Version === 2 && b.scheme === 'exact' && typeof b.payTo === 'string' && Array.isArray(b.accepts) && b.accepts.length > 0;
}

/**
 * What the prober checks for each built capability (DESIGN "Registry, catalog and health"):
 * discovery endpoints answer 200; execute answers an unpaid call with a well-formed x402
 * challenge; wallet_balances additionally reads a real balance through its handler.
 */
export function probeSpecs(services: Services): ProbeSpec[] {
  const example = walletBalances.example.request as { capability_id: string; input: Record<string, unknown> };
  return [
    { capabilityId: 'gateway.registry', method: 'GET', path: '/registry', expectStatus: 200 },
    // unpaid and unauthenticated: the x402 challenge (needs the liquidation index to be ready: 503 before)
    { capabilityId: 'mev.liquidation_search', method: 'GET', path: '/v1/liquidation-search?chain=ethereum', expectStatus: 402, check: isChallenge },
    {
      // the builder's JSON-RPC answers an unsigned eth_sendBundle with -32600 (signature required)
      capabilityId: 'builder.send_bundle',
      method: 'POST',
      path: '/rpc',
      url: () => `${services.config.builderUrl.replace(/\/$/, '')}/rpc`,
      body: { jsonrpc: '2.0', id: 1, method: 'eth_sendBundle', params: [{ txs: [], blockNumber: '0x1' }] },
      expectStatus: 200,
      check: (body) =>
        (body as { jsonrpc?: string; error?: { code?: number } })?.jsonrpc === '2.0' && (body as { error?: { code?: number } }).error?.code === -32600,
    },
    { capabilityId: 'gateway.health', method: 'GET', path: '/status/health', expectStatus: 200 },
    { capabilityId: 'gateway.execute', method: 'POST', path: '/api/v1/execute', body: example, expectStatus: 402, check: isChallenge },
    {
      capabilityId: 'gateway.jobs',
      method: 'POST',
      path: '/api/v1/jobs',
      body: findCapability('gateway.jobs')?.example.request,
      expectStatus: 402,
      check: isChallenge,
    },
    {
      // Bearer-only: an unauthenticated subscription must be refused with a 401 problem; the
      // direct check reads the delivery queue and watcher reports (no subscription is created).
      capabilityId: 'intelligence.wallet_monitor',
      method: 'POST',
      path: '/v1/wallet-monitor',
      body: findCapability('intelligence.wallet_monitor')?.example.request,
      expectStatus: 401,
      check: (body) => (body as { status?: number; title?: string })?.status === 401 && typeof (body as { title?: string }).title === 'string',
      direct: async () => {
        try {
          await services.walletMonitor.health();
          return true;
        } catch {
          return false;
        }
      },
    },
    {
      capabilityId: WALLET_BALANCES_ID,
      method: 'POST',
      path: '/api/v1/execute',
      body: example,
      expectStatus: 402,
      check: isChallenge,
      direct: async () => {
        const started = performance.now();
        try {
          const input = walletBalances.input.parse({ ...example.input, address: services.config.payment.payTo });
          walletBalances.output.parse(await walletBalances.run(input, services.capabilityDeps));
          await services.telemetry.record(WALLET_BALANCES_ID, performance.now() - started, true);
          return true;
        } catch {
          await services.telemetry.record(WALLET_BALANCES_ID, performance.now() - started, false);
          return false;
        }
      },
    },
  ];
}
