import {
  type Capability,
  type CapabilityOffer,
  compareCapabilities,
  LegacyRegistry,
  RegistryDocument,
  toJsonSchema,
  type JsonSchema,
  type HealthStatus,
  type LegacyRegistryEntry,
  type LegacyX402Terms,
  type MetricDefinition,
  type ProbeRecord,
  type X402Advert,
} from '@acg/schemas';
import type { CapabilityDescriptor } from './descriptor.js';
import { formatUsdc, parseUsdc, toBaseUnits } from './price.js';
import { deriveStatus, rollupOperationalStatus } from './status.js';

/** SemVer of the registry file format itself, not of any capability (docs/spec-notes.md 2.1, 9). */
export const REGISTRY_VERSION = '1.0.0';

/** Organization named in the registry when the context gives none (docs/spec-notes.md 2.1 `network.organization`). */
export const DEFAULT_ORGANIZATION = 'Agent Capability Gateway';

/** Measured health of one capability, as the gateway's health document reports it (docs/spec-notes.md 2.4). */
export interface HealthSample {
  status: HealthStatus;
  /** Median latency in milliseconds; null before the first sample. */
  latency_ms_p50: number | null;
  /** 99th percentile latency in milliseconds; null before the first sample. */
  latency_ms_p99: number | null;
}

/** Everything a discovery document depends on at build time. Pure data: building does no I/O. */
export interface BuildContext {
  /** Gateway base URL, absolute, e.g. `http://127.0.0.1:8080` ({base_url}); a trailing `/` is ignored. */
  baseUrl: string;
  /** Bundle-submission host, absolute ({builder_url}). */
  builderUrl: string;
  /** RFC 3339 UTC time of generation (`new Date().toISOString()`). */
  generatedAt: string;
  /** x402 payment terms: CAIP-2 `network` (`eip155:8453`), USDC `asset` contract, treasury `payTo`. */
  payment: { network: 'eip155:8453' | (string & {}); asset: string; payTo: string };
  /** `network.organization`; default {@link DEFAULT_ORGANIZATION}. */
  organization?: string;
  /** `network.domains` overrides; each defaults to `baseUrl`. */
  domains?: Partial<Record<'discover' | 'execute' | 'intelligence', string>>;
  /** Latest probe per capability id (written by the prober); an `ok` one makes a built capability LIVE. */
  probes?: Record<string, ProbeRecord>;
  /** Latest health per capability id; feeds the rollup and the /registry latency and availability fields. */
  health?: Record<string, HealthSample>;
  /**
   * The capability definitions to publish: the built-ins (`BUILTIN_CAPABILITIES` of
   * @acg/capabilities) plus those the app adds (providers, tests), in any order.
   */
  capabilities: readonly CapabilityDescriptor[];
  /** When set, every executable capability carries `proof` = `scheme` and `jwks_url` = `jwksUrl` (docs/spec-notes.md 2.2; docs/decisions.md "Proofs and receipts"). */
  proofs?: { scheme: string; jwksUrl: string };
  /** Capabilities registered by providers at run time, merged after `capabilities`. */
  extra?: readonly CapabilityDescriptor[];
  /** The offers of each capability offered by providers, cheapest first (docs/marketplace.md "Contracts and offers"). */
  offers?: Record<string, CapabilityOffer[]>;
}

/** Thrown when two descriptors (static or registered) share an id. */
export class DuplicateCapabilityError extends Error {
  override name = 'DuplicateCapabilityError';
  constructor(readonly capabilityId: string) {
    super(`capability id ${capabilityId} is defined twice`);
  }
}

/** Metric names used by the discovery documents, with units (docs/spec-notes.md 2.1 `metric_definitions`). */
export const METRIC_DEFINITIONS: Record<string, MetricDefinition> = {
  latency_ms_p50: { description: 'Median end-to-end latency of successful calls over the health window.', unit: 'ms' },
  latency_ms_p99: { description: '99th percentile end-to-end latency of successful calls over the health window.', unit: 'ms' },
  price: { description: 'Price of one call, event or bundle in currency units (decimal string).', unit: 'USDC' },
  price_base_units: { description: 'Price of one call, event or bundle in USDC base units (6 decimals, integer string).', unit: 'USDC base units' },
  availability: { description: 'Per-capability health status from /status/health: up, degraded, down or planned.' },
};

/**
 * `capabilities` plus `extra`, in catalog order (product, then id); throws
 * {@link DuplicateCapabilityError} when two share an id.
 */
export function allDescriptors(capabilities: readonly CapabilityDescriptor[], extra: readonly CapabilityDescriptor[] = []): CapabilityDescriptor[] {
  const all = [...capabilities, ...extra];
  const seen = new Set<string>();
  for (const d of all) {
    if (seen.has(d.id)) throw new DuplicateCapabilityError(d.id);
    seen.add(d.id);
  }
  return all.sort(compareCapabilities);
}

/** Replace `{base_url}` and `{builder_url}` in a descriptor template. */
export function expandTemplate(template: string, ctx: Pick<BuildContext, 'baseUrl' | 'builderUrl'>): string {
  return template.replaceAll('{base_url}', trimSlash(ctx.baseUrl)).replaceAll('{builder_url}', trimSlash(ctx.builderUrl));
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** URL of the full catalog document: where this gateway advertises its claims. */
function catalogUrl(ctx: BuildContext): string {
  return `${trimSlash(ctx.baseUrl)}/gateway-catalog.json`;
}

/**
 * Where an x402 payment for `d` is made: its own endpoint when that endpoint takes x402 (REST
 * surfaces), else `POST {base_url}/api/v1/execute` for a capability executable there (e.g. a
 * JSON-RPC bundle paid per bundle).
 */
function x402Resource(d: CapabilityDescriptor, endpoint: string, ctx: BuildContext): string {
  return d.surface !== 'REST' && d.executable ? `${trimSlash(ctx.baseUrl)}/api/v1/execute` : endpoint;
}

function x402Advert(d: CapabilityDescriptor, endpoint: string, ctx: BuildContext): X402Advert | undefined {
  if (d.x402 === 'none') return undefined;
  if (d.x402 === 'planned' || !d.built) return { advertised: false };
  return { advertised: true, resource: x402Resource(d, endpoint, ctx), pay_to: ctx.payment.payTo, asset: ctx.payment.asset, network: ctx.payment.network };
}

function capabilityOf(d: CapabilityDescriptor, ctx: BuildContext): Capability {
  const endpoint = expandTemplate(d.endpoint, ctx);
  const { status, evidence } = deriveStatus(d, ctx.probes?.[d.id], catalogUrl(ctx));
  const x402 = x402Advert(d, endpoint, ctx);
  return {
    id: d.id,
    product: d.product,
    name: d.name,
    description: d.description,
    status,
    surface: d.surface,
    endpoint,
    auth: d.auth,
    provider: d.provider ?? ctx.organization ?? DEFAULT_ORGANIZATION,
    proof: d.executable && ctx.proofs ? ctx.proofs.scheme : null,
    ...(d.executable && ctx.proofs ? { jwks_url: ctx.proofs.jwksUrl } : {}),
    ...(x402 ? { x402 } : {}),
    docs_url: d.docs === null ? null : expandTemplate(d.docs, ctx),
    ...(d.related_capabilities ? { related_capabilities: [...d.related_capabilities] } : {}),
    evidence,
    ...(d.notes ? { notes: expandTemplate(d.notes, ctx) } : {}),
    ...(ctx.offers?.[d.id] ? { offers: ctx.offers[d.id] } : {}),
  } as Capability;
}

function networkOf(ctx: BuildContext, capabilities: readonly Capability[]) {
  const base = trimSlash(ctx.baseUrl);
  const known = new Set(capabilities.map((c) => c.id));
  const health = Object.fromEntries(Object.entries(ctx.health ?? {}).filter(([id]) => known.has(id)));
  return {
    organization: ctx.organization ?? DEFAULT_ORGANIZATION,
    domains: {
      discover: ctx.domains?.discover ?? base,
      execute: ctx.domains?.execute ?? base,
      intelligence: ctx.domains?.intelligence ?? base,
    },
    ...rollupOperationalStatus(health, capabilities),
  };
}

/**
 * The registry document served at `/gateway-catalog.json` (docs/spec-notes.md 2.1/2.2): `ctx.capabilities` plus
 * `ctx.extra`, ordered by product then id, statuses derived by `deriveStatus` (LIVE only with a
 * successful probe record; built but unprobed = PILOT; not built = PLANNED), `operational_status`
 * rolled up from `ctx.health`. The result is validated with `RegistryDocument` before it is
 * returned. Throws `DuplicateCapabilityError`, or a `ZodError` if the catalog data is invalid.
 */
export function buildCatalog(ctx: BuildContext): RegistryDocument {
  const capabilities = allDescriptors(ctx.capabilities, ctx.extra).map((d) => capabilityOf(d, ctx));
  return RegistryDocument.parse({
    registry_version: REGISTRY_VERSION,
    generated_at: ctx.generatedAt,
    network: networkOf(ctx, capabilities),
    capabilities,
    metric_definitions: METRIC_DEFINITIONS,
  });
}

function legacyX402(d: CapabilityDescriptor, endpoint: string, price: bigint | null, ctx: BuildContext): LegacyX402Terms | null {
  if (d.x402 !== 'accepted' || !d.built) return null;
  return {
    x402Version: 2,
    scheme: 'exact',
    network: ctx.payment.network,
    asset: ctx.payment.asset,
    payTo: ctx.payment.payTo,
    resource: x402Resource(d, endpoint, ctx),
    ...(price !== null ? { maxAmountRequired: price.toString() } : {}),
  };
}

/**
 * The JSON Schema 2020-12 a capability publishes for what the caller sends: its own
 * `inputJsonSchema` (e.g. a provider's) or the one generated from its zod `input` with `io: "input"`
 * (fields with defaults optional); null when it has none. The same schema feeds `/registry`
 * `input_schema`, MCP tools' `inputSchema` and x402 Bazaar declarations.
 */
export function inputJsonSchema(d: CapabilityDescriptor): JsonSchema | null {
  return d.inputJsonSchema ?? (d.input ? toJsonSchema(d.input, { io: 'input' }) : null);
}

/** Like {@link inputJsonSchema}, for what the caller gets (`outputJsonSchema`, or zod `output` with `io: "output"`). */
export function outputJsonSchema(d: CapabilityDescriptor): JsonSchema | null {
  return d.outputJsonSchema ?? (d.output ? toJsonSchema(d.output, { io: 'output' }) : null);
}

/** The lowest price among live offers (USDC base units), else among all offers; null without offers (docs/marketplace.md). */
function offeredPrice(offers: readonly CapabilityOffer[] | undefined): bigint | null {
  if (!offers || offers.length === 0) return null;
  const live = offers.filter((o) => o.status === 'live');
  const prices = (live.length > 0 ? live : offers).map((o) => parseUsdc(o.price));
  let min = prices[0];
  for (const p of prices) if (p < min) min = p;
  return min;
}

function legacyEntryOf(d: CapabilityDescriptor, capability: Capability, ctx: BuildContext): LegacyRegistryEntry {
  const { x402: _advert, ...fields } = capability;
  const price = offeredPrice(ctx.offers?.[d.id]) ?? (d.price === null ? null : toBaseUnits(d.price.base_units));
  const health = ctx.health?.[d.id];
  return {
    ...fields,
    method: d.method,
    price: price === null ? null : formatUsdc(price),
    price_base_units: price === null ? null : price.toString(),
    price_unit: price === null ? null : d.price!.unit,
    currency: 'USDC',
    latency_ms_p50: health?.latency_ms_p50 ?? null,
    latency_ms_p99: health?.latency_ms_p99 ?? null,
    authentication: d.auth,
    x402: legacyX402(d, capability.endpoint, price, ctx),
    input_schema: inputJsonSchema(d),
    output_schema: outputJsonSchema(d),
    availability: health?.status ?? (capability.status === 'PLANNED' ? 'planned' : null),
    example_request: d.example.request ?? null,
    example_response: d.example.response ?? null,
  };
}

/**
 * The legacy registry served at `GET /registry` (docs/spec-notes.md 2.3, 4): `{registry_version, generated_at,
 * network, capabilities}` where each entry is the catalog capability (same status and evidence as
 * {@link buildCatalog}) plus method, price (`"0.001"` USDC), price_base_units (`"1000"`),
 * price_unit, currency, latencies (ms, from `ctx.health`, null before a sample), authentication,
 * x402 payment terms, input/output JSON Schema 2020-12, availability and examples. Types and units
 * are documented in packages/registry/README.md. Throws like {@link buildCatalog}.
 */
export function buildLegacyRegistry(ctx: BuildContext): LegacyRegistry {
  const catalog = buildCatalog(ctx);
  const descriptors = new Map(allDescriptors(ctx.capabilities, ctx.extra).map((d) => [d.id, d]));
  return LegacyRegistry.parse({
    registry_version: catalog.registry_version,
    generated_at: catalog.generated_at,
    network: catalog.network,
    capabilities: catalog.capabilities.map((c) => legacyEntryOf(descriptors.get(c.id)!, c, ctx)),
  });
}
