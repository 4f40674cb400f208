import { readBuilderHealth } from '@acg/bundles';
import * as builtin from '@acg/capabilities';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { probeProviderCapability } from '@acg/provider-directory';
import type { ProbeSpec } from './probes.js';
import { capabilityPath } from './routers/capabilityRoute.js';
import type { Services } from './services.js';

/** An address without code on any chain (checksummed): the plan probe's market, which no planner accepts. */
const NO_CODE_ADDRESS = '0x000000000000000000000000000000000000dEaD';

/** A 402 body that carries docs/spec-notes.md 2.9's fields and an x402 v2 `accepts` list. */
function isChallenge(body: unknown): boolean {
  const b = body as Record<string, unknown>;
  return b?.x402Version === 2 && b.scheme === 'exact' && typeof b.payTo === 'string' && Array.isArray(b.accepts) && b.accepts.length > 0;
}

/**
 * What the prober checks for each built capability (docs/decisions.md "Registry, catalog and health"):
 * discovery endpoints answer 200; execute answers an unpaid call with a well-formed x402
 * challenge; wallet_balances additionally reads a real balance through its handler; the MCP
 * endpoint answers `initialize` and then lists the tools.
 */
export function probeSpecs(services: Services): ProbeSpec[] {
  const example = builtin.walletBalances.example.request as { capability_id: string; input: Record<string, unknown> };
  return [
    ...providerProbeSpecs(services),
    {
      // onboarding answers a challenge (issued, never used: it expires in 10 minutes); the smallest
      // well-formed request is a retirement of a provider id that does not exist (nothing is checked at issue)
      capabilityId: builtin.gatewayProviders.id,
      method: 'POST',
      path: '/api/v1/providers/challenge',
      body: { address: services.config.payment.payTo, action: 'retire', provider_id: 'prv_00000000000000000000000000' },
      expectStatus: 200,
      check: (body) => typeof (body as { message?: unknown })?.message === 'string' && typeof (body as { nonce?: unknown }).nonce === 'string',
    },
    { capabilityId: builtin.gatewayRegistry.id, method: 'GET', path: '/registry', expectStatus: 200 },
    // unpaid and unauthenticated: the x402 challenge (needs the liquidation index to be ready: 503 before)
    {
      capabilityId: builtin.liquidationSearch.id,
      method: 'GET',
      path: `${capabilityPath(builtin.liquidationSearch)}?chain=ethereum`,
      expectStatus: 402,
      check: isChallenge,
      // the search itself, on the gateway: a read of the liquidation index, free
      direct: () => runDirectly(services, builtin.liquidationSearch, { chain: 'ethereum' }),
    },
    {
      // the plan route before payment: the planner reads the chain and refuses a market that is no
      // Pool (422 unknown_position, free); needs the index ready (503 before) and the chain reachable
      capabilityId: builtin.liquidationPlan.id,
      method: 'POST',
      path: capabilityPath(builtin.liquidationPlan),
      body: {
        chain: 'ethereum',
        searcher: NO_CODE_ADDRESS,
        opportunity: {
          protocol: 'aave_v3',
          borrower: NO_CODE_ADDRESS,
          market: NO_CODE_ADDRESS,
          collateral_token: NO_CODE_ADDRESS,
          debt_token: NO_CODE_ADDRESS,
        },
      },
      expectStatus: 422,
      check: (body) => (body as { reason?: unknown })?.reason === 'unknown_position',
    },
    {
      // the builder's JSON-RPC answers an unsigned eth_sendBundle with -32600 (signature required),
      // and the builder reported that its node can seal blocks (else no block reaches a relay)
      capabilityId: builtin.sendBundle.id,
      method: 'POST',
      path: '/rpc',
      url: () => `${services.config.builderUrl.replace(/\/$/, '')}/rpc`,
      body: { jsonrpc: '2.0', id: 1, method: 'eth_sendBundle', params: [{ txs: [], blockNumber: '0x1' }] },
      expectStatus: 200,
      check: (body) =>
        (body as { jsonrpc?: string; error?: { code?: number } })?.jsonrpc === '2.0' && (body as { error?: { code?: number } }).error?.code === -32600,
      gate: async () => (await readBuilderHealth(services.redis, services.keys))?.sealer?.ok === true,
    },
    { capabilityId: builtin.gatewayHealth.id, method: 'GET', path: '/status/health', expectStatus: 200 },
    {
      // a real MCP session over POST /mcp: initialize, then tools/list must list wallet_balances with its schema
      capabilityId: builtin.gatewayMcp.id,
      method: 'POST',
      path: '/mcp',
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'acg-prober', version: '1.0.0' } },
      },
      expectStatus: 200,
      check: (body) => {
        const r = (body as { result?: { protocolVersion?: string; capabilities?: { tools?: unknown } } })?.result;
        return typeof r?.protocolVersion === 'string' && r.capabilities?.tools !== undefined;
      },
      followUp: [
        {
          body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          check: (body) => {
            const tools = (body as { result?: { tools?: { name: string; inputSchema?: { type?: string } }[] } })?.result?.tools ?? [];
            return tools.some((x) => x.name === 'intelligence_wallet_balances' && x.inputSchema?.type === 'object');
          },
        },
      ],
    },
    { capabilityId: builtin.gatewayExecute.id, method: 'POST', path: '/api/v1/execute', body: example, expectStatus: 402, check: isChallenge },
    {
      capabilityId: builtin.gatewayJobs.id,
      method: 'POST',
      path: '/api/v1/jobs',
      body: builtin.gatewayJobs.example.request,
      expectStatus: 402,
      check: isChallenge,
    },
    {
      // Bearer-only: an unauthenticated subscription must be refused with a 401 problem; the
      // direct check reads the delivery queue and watcher reports (no subscription is created).
      capabilityId: builtin.walletMonitor.id,
      method: 'POST',
      path: '/v1/wallet-monitor',
      body: builtin.walletMonitor.example.request,
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
      capabilityId: builtin.walletBalances.id,
      method: 'POST',
      path: '/api/v1/execute',
      body: example,
      expectStatus: 402,
      check: isChallenge,
      // the balance read itself, on the gateway: free
      direct: () => runDirectly(services, builtin.walletBalances, { ...example.input, address: services.config.payment.payTo }),
    },
  ];
}

/**
 * A built-in capability's free run for its probe (docs/decisions.md "Registry, catalog and health"):
 * parses `input`, runs the capability on the gateway as a paid call would (no payment, no record),
 * validates its output and records the latency sample. True when all of it passed.
 */
async function runDirectly<I, O>(
  services: Services,
  capability: {
    id: string;
    input: { parse(v: unknown): I };
    output: { parse(v: unknown): O };
    run(input: I, deps: Services['capabilityDeps']): Promise<unknown>;
  },
  input: unknown,
): Promise<boolean> {
  const started = performance.now();
  let ok = false;
  try {
    capability.output.parse(await capability.run(capability.input.parse(input), services.capabilityDeps));
    ok = true;
  } catch {
    ok = false;
  }
  await services.telemetry.record(capability.id, performance.now() - started, ok);
  return ok;
}

/**
 * One probe per provider offer (packages/provider-directory README, probing; docs/marketplace.md): a signed,
 * free call with the contract's `example_request` to the provider's endpoint, its output checked
 * against the offer's and the contract's `output_schema`. The offer's routing status follows it
 * (`OfferStats.recordProbe`: an offer that joined a contract is routed to only once one passed).
 * The capability's own record (its LIVE status and evidence) is written by a passing probe of any
 * of its offers, and by a failing one only when no other offer of it is live.
 */
function providerProbeSpecs(services: Services): ProbeSpec[] {
  const { directory, client, stats } = services.providers;
  return directory.contracts().flatMap((contract) =>
    contract.offers.map(
      ({ record, offer }): ProbeSpec => ({
        capabilityId: contract.id,
        providerId: record.provider_id,
        method: 'POST',
        // the provider's endpoint is private (only its owner sees it): the public record names the gateway's URL
        path: '/api/v1/execute',
        expectStatus: 200,
        custom: async () => {
          const url = `${services.publicBaseUrl().replace(/\/+$/, '')}/api/v1/execute`;
          const probe = await probeProviderCapability(client, record, offer, url, contract.contract.offer);
          await stats.recordProbe(contract.id, record.provider_id, probe.record.ok, probe.ms, probe.record.checked_at);
          // a probe is trust evidence, and the way back from a suspension (docs/trust-v1.md)
          await services.providers.trust
            .record(
              { provider_id: record.provider_id, listed_at: record.created_at, capability_id: contract.id, timeout_ms: offer.timeout_ms },
              { source: 'probe', outcome: probe.outcome, latency_ms: probe.latency_ms },
            )
            .catch(() => undefined);
          if (probe.record.ok || contract.offers.length === 1) return probe.record;
          const others = contract.offers.filter((o) => o.record.provider_id !== record.provider_id);
          const measured = await stats.read(others.map((o) => ({ capabilityId: contract.id, providerId: o.record.provider_id })));
          return measured.some((m) => m.status === 'live') ? undefined : probe.record;
        },
      }),
    ),
  );
}
