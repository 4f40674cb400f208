import { createHash } from 'node:crypto';
import type { Services } from './services.js';
import { gatewayJobs, liquidationPlan, liquidationSearch, type CapabilityCatalog, type ExecutableCapability } from '@acg/capabilities';
import { CapabilityResolutionError, executableDefinition } from '@acg/execution';
import { inputJsonSchema, outputJsonSchema } from '@acg/registry';
import type { DiscoveryResource, DiscoveryResourcesQuery, DiscoveryResourcesResponse, JsonSchema, PaymentRequirements } from '@acg/schemas';
import type { ChallengedResource } from '@acg/payments';
import { MCP_PATH, toolBazaar } from './mcp/paidTool.js';
import { depositBazaar, executeBazaar, routeBazaar } from './paidRoute/bazaar.js';
import { capabilityPath } from './routers/capabilityRoute.js';
import { executeDescription } from './paidRoute/execution.js';
import { JOB_SCHEMES } from './routers/jobs.js';

/**
 * `GET /discovery/resources`: every paid resource of this gateway in the format of x402's
 * facilitator discovery API (x402 specification v2 §8; `withBazaar(...).extensions.bazaar.listResources`
 * of `@x402/extensions/bazaar` reads it unchanged; apps/gateway README "Discovery for indexers"):
 * - `POST /api/v1/execute`, once per executable capability (its price, its body and result schemas);
 * - `POST /api/v1/jobs` (accepts: the example budget, `exact` then `upto` with the jobs' window, as
 *   its 402 offers them; a job pays the budget it asks for);
 * - `POST /v1/account/deposit` (accepts: the example amount; a deposit pays the amount it asks for);
 * - `GET /v1/liquidation-search` (its price per query) and `POST /v1/liquidation-plans` (its price per plan);
 * - one MCP tool per executable capability (type `mcp`, resource `/mcp`, `metadata.toolName`).
 * The list is built once per catalog version (a provider coming or going rebuilds it), its
 * `lastUpdated` is when that version was first listed; pages are cut from it per request.
 */
export class DiscoveryResources {
  private built?: { version: number; baseUrl: string; items: DiscoveryResource[] };

  constructor(
    private readonly opts: {
      baseUrl: () => string;
      catalog: Pick<CapabilityCatalog, 'list' | 'executable' | 'version'>;
      /**
       * The PaymentRequirements a resource's 402 offers (`Paywall.accepts`): `exact` for `price` (USDC
       * base units) first, then the other `schemes` the paywall accepts (default: `exact` alone).
       */
      accepts: (offer: Pick<ChallengedResource, 'price' | 'schemes' | 'deferredMaxTimeoutSeconds'>) => PaymentRequirements[];
      /** `maxTimeoutSeconds` of the jobs' `upto` offer (JOB_UPTO_MAX_TIMEOUT_SECONDS). */
      jobUptoMaxTimeoutSeconds: number;
      now?: () => Date;
    },
  ) {}

  /** Every paid resource, in a stable order (REST routes, then MCP tools). */
  all(): DiscoveryResource[] {
    const { catalog } = this.opts;
    const baseUrl = this.opts.baseUrl();
    if (this.built?.version !== catalog.version || this.built.baseUrl !== baseUrl) {
      this.built = { version: catalog.version, baseUrl, items: this.build(baseUrl, (this.opts.now?.() ?? new Date()).toISOString()) };
    }
    return this.built.items;
  }

  /** One page for `query`: the filters (`type`, `payTo`, `scheme`, `network`, `extensions`), then `offset` and `limit`; `total` counts every match. */
  page(query: DiscoveryResourcesQuery): DiscoveryResourcesResponse {
    const matching = this.all().filter((item) => matches(item, query));
    return {
      x402Version: 2,
      items: matching.slice(query.offset, query.offset + query.limit),
      pagination: { limit: query.limit, offset: query.offset, total: matching.length },
    };
  }

  /** The page as the discovery documents are served: its value, JSON bytes and a strong ETag (as `/registry`). */
  rendered(query: DiscoveryResourcesQuery): { value: DiscoveryResourcesResponse; etag: string } {
    const value = this.page(query);
    const body = JSON.stringify(value);
    return { value, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
  }

  private build(baseUrl: string, lastUpdated: string): DiscoveryResource[] {
    const { catalog } = this.opts;
    const executables = catalog.executable().filter((d) => !(executableDefinition(catalog.list(), d.id) instanceof CapabilityResolutionError));
    const http = (
      path: string,
      price: bigint,
      description: string,
      bazaar: Record<string, unknown>,
      extra: Record<string, unknown>,
      offer: Offer = {},
    ): DiscoveryResource => this.item(`${baseUrl}${path}`, 'http', { ...offer, price }, description, bazaar, extra, lastUpdated);
    const jobsBudget = exampleAmount(gatewayJobs.example.request, 'budget_usdc') ?? 1_000_000n;
    const depositAmount = 1_500_000n;
    return [
      ...executables.map((d) =>
        http('/api/v1/execute', d.price.base_units, executeDescription(d.id), executeBazaar(d), { capability_id: d.id, method: 'POST', ...schemasOf(d) }),
      ),
      http(
        '/api/v1/jobs',
        jobsBudget,
        `${gatewayJobs.description} Pays the budget it asks for (budget_usdc); accepts shows the example's.`,
        routeBazaar(gatewayJobs),
        {
          capability_id: gatewayJobs.id,
          method: 'POST',
          price: 'budget_usdc of the request',
          ...schemasOf(gatewayJobs),
        },
        // as the jobs 402 offers them: `upto` after `exact`, the budget its ceiling, with the jobs' window
        { schemes: JOB_SCHEMES, deferredMaxTimeoutSeconds: this.opts.jobUptoMaxTimeoutSeconds },
      ),
      http(
        '/v1/account/deposit',
        depositAmount,
        'Deposit USDC into your metered account; pays the amount it asks for (amount_usdc); accepts shows 1.5 USDC.',
        depositBazaar(),
        {
          method: 'POST',
          price: 'amount_usdc of the request',
        },
      ),
      http(capabilityPath(liquidationSearch), liquidationSearch.price.base_units, liquidationSearch.description, routeBazaar(liquidationSearch), {
        capability_id: liquidationSearch.id,
        method: 'GET',
        ...schemasOf(liquidationSearch),
      }),
      http(capabilityPath(liquidationPlan), liquidationPlan.price.base_units, liquidationPlan.description, routeBazaar(liquidationPlan), {
        capability_id: liquidationPlan.id,
        method: 'POST',
        ...schemasOf(liquidationPlan),
      }),
      ...executables.map((d) => {
        const bazaar = toolBazaar(d);
        const input = (bazaar.bazaar as { info: { input: { toolName: string } } }).info.input;
        return this.item(
          `${baseUrl}${MCP_PATH}`,
          'mcp',
          { price: d.price.base_units },
          executeDescription(d.id),
          bazaar,
          { capability_id: d.id, toolName: input.toolName, transport: 'streamable-http', ...schemasOf(d) },
          lastUpdated,
        );
      }),
    ];
  }

  private item(
    resource: string,
    type: 'http' | 'mcp',
    offer: Pick<ChallengedResource, 'price' | 'schemes' | 'deferredMaxTimeoutSeconds'>,
    description: string,
    extensions: Record<string, unknown>,
    metadata: Record<string, unknown>,
    lastUpdated: string,
  ): DiscoveryResource {
    const bazaar = extensions.bazaar as { info?: { input?: unknown; output?: unknown } } | undefined;
    return {
      resource,
      type,
      x402Version: 2,
      accepts: this.opts.accepts(offer),
      lastUpdated,
      description,
      mimeType: 'application/json',
      // bazaar metadata: how to call it and what it answers, with the JSON Schemas
      metadata: { ...metadata, ...(bazaar?.info?.input ? { input: bazaar.info.input } : {}), ...(bazaar?.info?.output ? { output: bazaar.info.output } : {}) },
      extensions,
    };
  }
}

/** The schemes a listed resource's 402 offers besides `exact` (default none), and the window of its deferred one. */
type Offer = Pick<ChallengedResource, 'schemes' | 'deferredMaxTimeoutSeconds'>;

/** The capability's input and output JSON Schemas, as the catalog publishes them. */
function schemasOf(d: Parameters<typeof inputJsonSchema>[0] | ExecutableCapability): { inputSchema?: JsonSchema; outputSchema?: JsonSchema } {
  const input = inputJsonSchema(d);
  const output = outputJsonSchema(d);
  return { ...(input ? { inputSchema: input } : {}), ...(output ? { outputSchema: output } : {}) };
}

/** `field` of an example request (a decimal USDC amount) in USDC base units, if it has one. */
function exampleAmount(request: unknown, field: string): bigint | undefined {
  const v = typeof request === 'object' && request !== null ? (request as Record<string, unknown>)[field] : undefined;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? BigInt(Math.round(v * 1e6)) : undefined;
}

function matches(item: DiscoveryResource, q: DiscoveryResourcesQuery): boolean {
  if (q.type !== undefined && item.type !== q.type) return false;
  if (q.payTo !== undefined && !item.accepts.some((a) => a.payTo.toLowerCase() === q.payTo!.toLowerCase())) return false;
  if (q.scheme !== undefined && !item.accepts.some((a) => a.scheme === q.scheme)) return false;
  if (q.network !== undefined && !item.accepts.some((a) => a.network === q.network)) return false;
  if (q.extensions !== undefined && !(q.extensions in item.extensions)) return false;
  return true;
}

const built = new WeakMap<object, DiscoveryResources>();

/**
 * The {@link DiscoveryResources} of a gateway's services (built on first use, one per services
 * object): its public base URL, its catalog and its paywall's `accepts`. Built here
 * rather than in `services.ts`, so the composition root imports no module that imports it back.
 */
export function discoveryResourcesOf(services: Pick<Services, 'publicBaseUrl' | 'catalog' | 'paywall' | 'config'>): DiscoveryResources {
  let d = built.get(services);
  if (!d) {
    const { paywall } = services;
    d = new DiscoveryResources({
      baseUrl: services.publicBaseUrl,
      catalog: services.catalog,
      accepts: (offer) => paywall.accepts(offer).map((r) => ({ ...r, scheme: r.scheme as PaymentRequirements['scheme'], extra: r.extra ?? {} })),
      jobUptoMaxTimeoutSeconds: services.config.payment.jobUptoMaxTimeoutSeconds,
    });
    built.set(services, d);
  }
  return d;
}
