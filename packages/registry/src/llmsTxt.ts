import type { Capability, RegistryDocument } from '@acg/schemas';
import type { BuildContext } from './build.js';
import { allDescriptors } from './build.js';
import type { CapabilityDescriptor } from './descriptor.js';
import { formatUsdc, toBaseUnits } from './price.js';

/** The discovery documents every gateway serves, relative to {base_url} (SPEC 4 "Discovery"). */
export const DISCOVERY_DOCUMENTS = [
  { path: '/gateway-catalog.json', title: 'Capability catalog', note: 'full catalog (JSON, JSON Schema 2020-12), statuses with evidence' },
  { path: '/registry', title: 'Registry', note: 'legacy registry: prices, x402 terms, input/output JSON Schemas and examples per capability; cached 60 s' },
  { path: '/openapi.json', title: 'OpenAPI', note: 'OpenAPI 3.0 description of every REST endpoint' },
  { path: '/status/health', title: 'Health', note: 'per-capability status and measured latencies, builder state' },
] as const;

function priceText(d: CapabilityDescriptor | undefined): string {
  const price = d?.price ? toBaseUnits(d.price.base_units) : null;
  if (!d || price === null) {
    if (d?.id === 'gateway.execute') return 'price of the capability executed';
    return d?.x402 === 'accepted' ? 'price set by the request' : 'no published price';
  }
  if (price === 0n) return 'free';
  return `${formatUsdc(price)} USDC per ${d.price?.unit ?? 'call'}`;
}

function authText(c: Capability): string {
  switch (c.auth) {
    case 'none':
      return 'no authentication';
    case 'x402':
      return 'pay per call with x402 (see below)';
    case 'bearer':
      return 'header `Authorization: Bearer <token>`';
    case 'bundle_signature':
      return 'header `X-Bundle-Signature: <address>:<signature>`';
    default:
      return `auth ${c.auth}`;
  }
}

function callText(c: Capability, d: CapabilityDescriptor | undefined): string {
  const method = d?.method ?? 'GET';
  const example = d?.example.request;
  if (example && typeof example === 'object' && method === 'GET') {
    // a GET capability also executable through /api/v1/execute keeps its example in execute form: its input is the query
    const params =
      'capability_id' in example && 'input' in example ? (example as { input: Record<string, unknown> }).input : (example as Record<string, unknown>);
    const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return `\`GET ${c.endpoint}?${query}\``;
  }
  if (example && typeof example === 'object') {
    return `\`${method} ${c.endpoint}\` with JSON body \`${JSON.stringify(example)}\``;
  }
  return `\`${method} ${c.endpoint}\``;
}

function capabilityLine(c: Capability, d: CapabilityDescriptor | undefined): string {
  const description = c.description ? ` ${c.description}` : '';
  return (
    `- [${c.name}](${c.endpoint}): \`${c.id}\`, status ${c.status}, ${c.surface}, ${priceText(d)}.${description} ` + `Call: ${callText(c, d)}; ${authText(c)}.`
  );
}

/**
 * llms.txt (llmstxt.org format) for the gateway: an H1 title, a blockquote summary, a Discovery
 * section linking /gateway-catalog.json, /registry, /openapi.json and /status/health, a
 * Capabilities section (one line each: id, status, price, how to call it), the x402 payment flow
 * in three lines, and an Optional section (sitemap). Capabilities come from `doc` (already built
 * by `buildCatalog`); prices and call examples from the definitions (`ctx.capabilities` + `ctx.extra`).
 * Returns text ending in a newline.
 */
export function renderLlmsTxt(doc: RegistryDocument, ctx: BuildContext): string {
  const base = ctx.baseUrl.replace(/\/+$/, '');
  const descriptors = new Map(allDescriptors(ctx.capabilities, ctx.extra).map((d) => [d.id, d]));
  const organization = doc.network.organization;
  const lines: string[] = [
    `# ${organization}`,
    '',
    '> A public catalog of capabilities for programmatic agents, executed per call and paid with x402 in USDC ' +
      `on ${ctx.payment.network}. Discovery needs no authentication; every capability lists its status and the evidence behind it.`,
    '',
    `Registry version ${doc.registry_version}, generated ${doc.generated_at}; operational status ${doc.network.operational_status} ` +
      `(${doc.network.operational_status_source}). A capability is LIVE only with a recorded successful probe, PILOT when built but not yet probed, PLANNED when not built.`,
    '',
    '## Discovery',
    '',
    ...DISCOVERY_DOCUMENTS.map((d) => `- [${d.title}](${base}${d.path}): ${d.note}`),
    '',
    '## Capabilities',
    '',
    ...doc.capabilities.map((c) => capabilityLine(c, descriptors.get(c.id))),
    '',
    '## Paying with x402',
    '',
    `1. Call \`POST ${base}/api/v1/execute\` with \`{"capability_id": ..., "input": ...}\`; without payment it answers 402 with a challenge (JSON body and \`PAYMENT-REQUIRED\` header): scheme \`exact\`, network \`${ctx.payment.network}\`, USDC \`asset\` ${ctx.payment.asset}, \`payTo\` ${ctx.payment.payTo}, \`maxAmountRequired\` in USDC base units (6 decimals).`,
    '2. Sign an EIP-3009 `transferWithAuthorization` for that amount with your wallet and retry the same request with the signed payment in the `PAYMENT-SIGNATURE` header (`X-PAYMENT` is accepted too).',
    '3. The gateway settles on-chain, then executes, and returns `execution_id`, `status`, `result` and `payment {tx_hash, amount}` with a `PAYMENT-RESPONSE` header; one payment never runs twice, and a failed run is refunded.',
    '',
    '## Optional',
    '',
    `- [Sitemap](${base}/sitemap.xml): every discovery URL`,
    '',
  ];
  return lines.join('\n');
}
