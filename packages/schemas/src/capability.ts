import { z } from 'zod';
import { CapabilityId, DateTime, Sha256Hex, Uri } from './primitives.js';
import { CapabilityOffer } from './routing.js';

/**
 * Products, in catalog order (docs/spec-notes.md 2.2 `product`; the fourth value is `intelligence` per docs/decisions.md
 * "Registry, catalog and health"). The registry document orders capabilities by the position of
 * their product in this list, then by id (see {@link compareCapabilities}).
 */
export const PRODUCTS = ['gateway', 'builder', 'mev', 'intelligence'] as const;

/** Product of a capability: `gateway | builder | mev | intelligence` (docs/spec-notes.md 2.2). */
export const Product = z.enum(PRODUCTS);
export type Product = z.infer<typeof Product>;

/** Capability status in the registry: `LIVE | PARTIAL | STALE | PLANNED | PILOT` (docs/spec-notes.md 2.2, 3). */
export const CapabilityStatus = z.enum(['LIVE', 'PARTIAL', 'STALE', 'PLANNED', 'PILOT']);
export type CapabilityStatus = z.infer<typeof CapabilityStatus>;

/** Surface a capability is reached on: `MCP | JSON-RPC | REST | SSE | WEBHOOK | WEB` (docs/spec-notes.md 2.2). */
export const Surface = z.enum(['MCP', 'JSON-RPC', 'REST', 'SSE', 'WEBHOOK', 'WEB']);
export type Surface = z.infer<typeof Surface>;

/** Authentication scheme: `none | bearer | bundle_signature | x402 | custom` (docs/spec-notes.md 2.2 `auth`, 5). */
export const Auth = z.enum(['none', 'bearer', 'bundle_signature', 'x402', 'custom']);
export type Auth = z.infer<typeof Auth>;

/** HTTP method a probe used: `GET | POST | OPTIONS` (docs/spec-notes.md 2.2 `evidence.probe.method`). */
export const ProbeMethod = z.enum(['GET', 'POST', 'OPTIONS']);
export type ProbeMethod = z.infer<typeof ProbeMethod>;

/**
 * One recorded probe (docs/spec-notes.md 2.2 `evidence.probe`, no extra keys): `url` probed, `method`, HTTP
 * `status` received (integer), `body_sha256` of the response body (64 lowercase hex), and optional
 * `artifact`, a relative path (no leading `/`, no scheme) where the raw response is stored.
 */
export const Probe = z.strictObject({
  url: Uri,
  method: ProbeMethod,
  status: z.int().min(100).max(599),
  body_sha256: Sha256Hex,
  artifact: z
    .string()
    .regex(/^(?![a-zA-Z][a-zA-Z0-9+.-]*:)[^/\\\s][^\\\s]*$/, 'must be a relative path')
    .optional(),
});
export type Probe = z.infer<typeof Probe>;

/**
 * The `status` a probe records when no HTTP answer came back (connection refused, timeout, a
 * refused URL): 599, the highest status {@link Probe} allows. A status outside 100..599 (e.g. 0,
 * which an HTTP client reports for "no answer") would make every page that shows the probe fail
 * validation (issue 33: `/registry` and `/status/health` answered 500).
 */
export const PROBE_NO_ANSWER_STATUS = 599;

/** `status` when it is a valid HTTP status (integer 100..599), else {@link PROBE_NO_ANSWER_STATUS}. */
export function probeStatus(status: number): number {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : PROBE_NO_ANSWER_STATUS;
}

/**
 * Evidence behind a capability's status (docs/spec-notes.md 2.2, no extra keys): `source` (required, non-empty:
 * who or what vouches), `checked_at` (RFC 3339 UTC time of the last successful probe), `probe`,
 * `advertised_by` (where a broken claim is published), `next_action` (free note).
 * The LIVE and STALE variants below tighten which keys are required.
 */
export const Evidence = z.strictObject({
  source: z.string().min(1),
  checked_at: DateTime.optional(),
  probe: Probe.optional(),
  advertised_by: z.string().min(1).optional(),
  next_action: z.string().optional(),
});
export type Evidence = z.infer<typeof Evidence>;

/** Evidence of a LIVE capability: `checked_at`, `source` and `probe` required (docs/spec-notes.md 2.2 rule 1). */
export const LiveEvidence = Evidence.extend({ checked_at: DateTime, probe: Probe });
export type LiveEvidence = z.infer<typeof LiveEvidence>;

/** Evidence of a STALE capability: `source` and `advertised_by` required (docs/spec-notes.md 2.2 rule 2). */
export const StaleEvidence = Evidence.extend({ advertised_by: z.string().min(1) });
export type StaleEvidence = z.infer<typeof StaleEvidence>;

/**
 * x402 advertisement of a catalog capability (docs/spec-notes.md 2.2 `x402`, optional keys only, no others):
 * `advertised` (the capability takes x402 payment now), `descriptor` (URI of a payment descriptor),
 * `resource` (URI that answers 402), `pay_to` (recipient address), `asset` (token contract),
 * `network` (CAIP-2 chain, e.g. `eip155:8453`).
 */
export const X402Advert = z.strictObject({
  advertised: z.boolean().optional(),
  descriptor: Uri.optional(),
  resource: Uri.optional(),
  pay_to: z.string().optional(),
  asset: z.string().optional(),
  network: z.string().optional(),
});
export type X402Advert = z.infer<typeof X402Advert>;

/**
 * Shape of a capability with the given `status` and `evidence` schemas, keys in docs/spec-notes.md 2.2 order
 * (zod emits parsed objects in shape order).
 */
function capabilityShape<S extends z.ZodType, E extends z.ZodType>(status: S, evidence: E) {
  return {
    id: CapabilityId,
    product: Product,
    name: z.string().min(1),
    description: z.string().optional(),
    status,
    surface: Surface,
    endpoint: Uri,
    auth: Auth,
    provider: z.string().min(1),
    proof: z.string().nullable().optional(),
    jwks_url: Uri.nullable().optional(),
    x402: X402Advert.optional(),
    docs_url: Uri.nullable().optional(),
    related_capabilities: z.array(CapabilityId).optional(),
    evidence,
    notes: z.string().optional(),
    /** A capability offered by providers: every offer, cheapest first (docs/marketplace.md "Contracts and offers"). */
    offers: z.array(CapabilityOffer).optional(),
  };
}

/** A capability whose status is LIVE: evidence holds a successful probe (docs/spec-notes.md 2.2 rule 1, docs/spec-notes.md 3). */
export const LiveCapability = z.strictObject(capabilityShape(z.literal('LIVE'), LiveEvidence));
export type LiveCapability = z.infer<typeof LiveCapability>;

/** A capability whose status is STALE: evidence says where the broken claim is advertised (docs/spec-notes.md 2.2 rule 2). */
export const StaleCapability = z.strictObject(capabilityShape(z.literal('STALE'), StaleEvidence));
export type StaleCapability = z.infer<typeof StaleCapability>;

/** A capability whose status is PARTIAL, PLANNED or PILOT: evidence needs only `source` (docs/spec-notes.md 2.2). */
export const UnprovenCapability = z.strictObject(capabilityShape(z.enum(['PARTIAL', 'PLANNED', 'PILOT']), Evidence));
export type UnprovenCapability = z.infer<typeof UnprovenCapability>;

/**
 * Registry item (docs/spec-notes.md 2.2), no extra properties at any level. A discriminated union on `status`,
 * so the two conditional rules survive `z.toJSONSchema` as a `oneOf` of three closed objects.
 * zod parsing additionally checks that the id's prefix equals `product` (not expressible in the
 * generated JSON Schema).
 */
export const Capability = z
  .discriminatedUnion('status', [LiveCapability, StaleCapability, UnprovenCapability])
  .refine((c) => c.id.split('.')[0] === c.product, {
    message: 'id must start with its product',
    path: ['id'],
  });
export type Capability = z.infer<typeof Capability>;

/**
 * Catalog order (docs/spec-notes.md 2.1 `capabilities`: "ordered by product, then by id"): by the index of
 * `product` in {@link PRODUCTS}, then by `id` in code-unit order. Returns <0, 0 or >0 like any
 * `Array#sort` comparator.
 */
export function compareCapabilities(a: { product: Product; id: string }, b: { product: Product; id: string }): number {
  const byProduct = PRODUCTS.indexOf(a.product) - PRODUCTS.indexOf(b.product);
  if (byProduct !== 0) return byProduct;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * What a prober records for one capability (docs/decisions.md "Registry, catalog and health"): `ok` (the probe
 * succeeded), `checked_at` (RFC 3339 UTC time of this probe) and the `probe` itself (docs/spec-notes.md 2.2).
 * The registry turns an `ok` record into LIVE evidence and a failed one into STALE.
 */
export const ProbeRecord = z.object({
  ok: z.boolean(),
  checked_at: DateTime,
  probe: Probe,
  /**
   * True when the probe also ran the capability itself on the gateway and its output validated (a
   * free run of a read-only built-in, e.g. a balance read; the probe never pays). The capability page
   * says so instead of "only the payment challenge was seen". Not part of the registry's `evidence`.
   */
  ran: z.boolean().optional(),
});
export type ProbeRecord = z.infer<typeof ProbeRecord>;

/**
 * A capability definition that cannot be used: a bug in the definition, not in a request.
 * `capabilityId`, and `shortMessage` saying what is wrong; `message` is
 * `"<subject> <capabilityId>: <shortMessage>"`. The base of `InvalidCapabilityDefinitionError`
 * (@acg/capabilities) and `InvalidProviderCapabilityError` (@acg/provider-kit).
 */
export class InvalidDefinitionError extends Error {
  constructor(
    readonly capabilityId: string,
    readonly shortMessage: string,
    subject = 'capability',
  ) {
    super(`${subject} ${capabilityId}: ${shortMessage}`);
  }
}
