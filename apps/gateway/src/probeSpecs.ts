import { findCapability } from '@acg/registry';
import { WALLET_BALANCES_ID } from '@acg/schemas';
import { HANDLERS } from './capabilities/index.js';
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
  const example = findCapability(WALLET_BALANCES_ID)?.example_request as { capability_id: string; input: Record<string, unknown> };
  const handler = HANDLERS.get(WALLET_BALANCES_ID)!;
  return [
    { capabilityId: 'gateway.registry', method: 'GET', path: '/registry', expectStatus: 200 },
    { capabilityId: 'gateway.health', method: 'GET', path: '/status/health', expectStatus: 200 },
    { capabilityId: 'gateway.execute', method: 'POST', path: '/api/v1/execute', body: example, expectStatus: 402, check: isChallenge },
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
          const input = handler.input.parse({ ...example.input, address: services.config.payment.payTo });
          handler.output.parse(await handler.run(input, services.capabilityDeps));
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
