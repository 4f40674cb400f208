import { mcpToolName, type LegacyRegistryEntry } from '@acg/schemas';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { paymentSchemeSentence } from '@acg/registry';
import type { Services } from '../services.js';
import { STATUS_MEANING } from '../web/pages/capability.js';
import { priceText } from '../web/pages/components.js';

/**
 * The capability catalog as MCP resources (apps/gateway/README.md "MCP"; docs/mcp.md):
 * - `acg://capabilities`: the catalog index, Markdown (id, name, status, price, MCP tool);
 * - `acg://capabilities/{capability_id}`: one capability's page, Markdown: description, status with
 *   its evidence, availability and p50/p99 latency, price and x402 terms, how to call it (MCP tool,
 *   REST endpoint), input and output JSON Schemas, example request and response;
 * - `acg://capabilities/{capability_id}/input-schema` and `.../output-schema`: the JSON Schema
 *   2020-12 documents, `application/schema+json`.
 * Everything is read from the `/registry` document at each request (`Discovery.registry()`, the
 * same entries as `GET /registry` and the `/capabilities/{id}` web page), never a second copy.
 * An unknown URI is the MCP error -32002 "Resource not found" with `data.uri`.
 */

/** URI scheme and path root of the catalog resources. */
export const CATALOG_RESOURCE_URI = 'acg://capabilities';
/** MCP's JSON-RPC error code for a resource that does not exist (MCP 2025-11-25, server/resources "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error the SDK's server sends as is (`{code, message, data}`): an `McpError` would
 * prefix its message with "MCP error <code>: ", which the client then prefixes again.
 */
export function jsonRpcError(code: number, message: string, data?: unknown): Error & { code: number; data?: unknown } {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

const MARKDOWN = 'text/markdown';
const SCHEMA_JSON = 'application/schema+json';
const SCHEMA_KINDS = { 'input-schema': 'input_schema', 'output-schema': 'output_schema' } as const;
type SchemaKind = keyof typeof SCHEMA_KINDS;
const URI = /^acg:\/\/capabilities(?:\/([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)(?:\/(input-schema|output-schema))?)?$/;

/** The resource templates (RFC 6570), for `resources/templates/list`. */
export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  {
    uriTemplate: `${CATALOG_RESOURCE_URI}/{capability_id}`,
    name: 'capability-page',
    title: 'Capability page',
    description: 'One capability as Markdown: description, status and latency, price and x402 terms, how to call it, schemas and an example.',
    mimeType: MARKDOWN,
  },
  {
    uriTemplate: `${CATALOG_RESOURCE_URI}/{capability_id}/input-schema`,
    name: 'capability-input-schema',
    title: 'Capability input schema',
    description: "A capability's input as a JSON Schema 2020-12 document.",
    mimeType: SCHEMA_JSON,
  },
  {
    uriTemplate: `${CATALOG_RESOURCE_URI}/{capability_id}/output-schema`,
    name: 'capability-output-schema',
    title: 'Capability output schema',
    description: "A capability's result as a JSON Schema 2020-12 document.",
    mimeType: SCHEMA_JSON,
  },
];

/** Adds `resources/list`, `resources/templates/list` and `resources/read` to an MCP server (which must declare the `resources` capability). */
export function registerCatalogResources(server: Server, services: Pick<Services, 'discovery' | 'catalog'>): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources((await services.discovery.registry()).value.capabilities) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const executable = new Set(services.catalog.executable().map((d) => d.id));
    return readResource(request.params.uri, (await services.discovery.registry()).value.capabilities, (id) => executable.has(id));
  });
}

/** `resources/list`: the index, then per capability its page and each published schema. */
export function listResources(entries: readonly LegacyRegistryEntry[]): Resource[] {
  const out: Resource[] = [
    {
      uri: CATALOG_RESOURCE_URI,
      name: 'capabilities',
      title: 'Capability catalog',
      description: 'Every capability of this gateway: id, name, status, price and MCP tool.',
      mimeType: MARKDOWN,
    },
  ];
  for (const c of entries) {
    const uri = `${CATALOG_RESOURCE_URI}/${c.id}`;
    out.push({ uri, name: c.id, title: c.name, description: c.description ?? c.name, mimeType: MARKDOWN });
    for (const [kind, field] of Object.entries(SCHEMA_KINDS) as [SchemaKind, (typeof SCHEMA_KINDS)[SchemaKind]][]) {
      if (c[field] === null) continue;
      out.push({
        uri: `${uri}/${kind}`,
        name: `${c.id}/${kind}`,
        title: `${c.name}: ${kind === 'input-schema' ? 'input' : 'output'} schema`,
        description: `JSON Schema 2020-12 of the ${kind === 'input-schema' ? 'input' : 'result'} of ${c.id}.`,
        mimeType: SCHEMA_JSON,
      });
    }
  }
  return out;
}

/**
 * `resources/read` of `uri` against the registry entries; `executable(id)` says whether the
 * capability has an MCP tool here. Throws the JSON-RPC error {@link RESOURCE_NOT_FOUND} for any other URI.
 */
export function readResource(uri: string, entries: readonly LegacyRegistryEntry[], executable: (id: string) => boolean): ReadResourceResult {
  const m = URI.exec(uri);
  if (m && m[1] === undefined) return { contents: [{ uri, mimeType: MARKDOWN, text: catalogMarkdown(entries, executable) }] };
  const entry = m ? entries.find((c) => c.id === m[1]) : undefined;
  if (!entry) throw jsonRpcError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  const kind = m?.[2] as SchemaKind | undefined;
  if (kind === undefined) return { contents: [{ uri, mimeType: MARKDOWN, text: capabilityMarkdown(entry, executable(entry.id)) }] };
  const schema = entry[SCHEMA_KINDS[kind]];
  if (schema === null) throw jsonRpcError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  return { contents: [{ uri, mimeType: SCHEMA_JSON, text: JSON.stringify(schema, null, 2) }] };
}

/** A fenced code block whose fence is longer than any backtick run in `text` (CommonMark), so the text cannot close it. */
function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((r) => r[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

/** Text on one line, with the characters that would start Markdown structure in a table cell escaped. */
function inline(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/([\\`*_[\]|<>])/g, '\\$1');
}

const ms = (v: number | null) => (v === null ? 'not measured yet' : `${Math.round(v)} ms`);

/** The `acg://capabilities` index. */
export function catalogMarkdown(entries: readonly LegacyRegistryEntry[], executable: (id: string) => boolean): string {
  const rows = entries.map(
    (c) =>
      `| \`${c.id}\` | ${inline(c.name)} | ${c.status} | ${inline(priceText(c))} | ${executable(c.id) ? `\`${mcpToolName(c.id)}\`` : '(REST only)'} | ${CATALOG_RESOURCE_URI}/${c.id} |`,
  );
  return [
    '# Capability catalog',
    '',
    `${entries.length} capabilities. Read \`${CATALOG_RESOURCE_URI}/{capability_id}\` for one page. Paid tools are paid per call with x402 in USDC (see each page).`,
    '',
    '| Capability | Name | Status | Price | MCP tool | Page |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** One capability's page (`acg://capabilities/{id}`): the same facts as `/capabilities/{id}` on the web. */
export function capabilityMarkdown(c: LegacyRegistryEntry, executable: boolean): string {
  const uri = `${CATALOG_RESOURCE_URI}/${c.id}`;
  const facts = [
    `- **Status**: ${c.status}, ${STATUS_MEANING[c.status]}.`,
    `- **Evidence**: ${inline(c.evidence.source)}${c.evidence.checked_at ? `; last passing probe ${c.evidence.checked_at}` : ''}${c.evidence.probe ? ` (\`${c.evidence.probe.method} ${c.evidence.probe.url}\` answered ${c.evidence.probe.status})` : ''}.`,
    `- **Availability**: ${c.availability ?? 'not measured yet'}; latency p50 ${ms(c.latency_ms_p50)}, p99 ${ms(c.latency_ms_p99)}.`,
    `- **Price**: ${inline(priceText(c))}${c.price_base_units !== null ? ` (${c.price_base_units} USDC base units, 6 decimals)` : ''}.`,
    c.x402
      ? `- **Payment**: x402 v${c.x402.x402Version} \`${c.x402.scheme}\` on \`${c.x402.network}\`, USDC \`${c.x402.asset}\`, pay to \`${c.x402.payTo}\`.`
      : `- **Authentication**: ${c.auth}.`,
    ...(c.x402 ? [`- **Which scheme**: ${paymentSchemeSentence()}`] : []),
    executable
      ? `- **MCP tool**: \`${mcpToolName(c.id)}\`. Call it without \`_meta["x402/payment"]\` to get the x402 PaymentRequired, sign one of its \`accepts\`, call again with the PaymentPayload in \`_meta["x402/payment"]\`.`
      : '- **MCP tool**: none (not callable through MCP).',
    `- **REST**: \`${c.method} ${c.endpoint}\` (${c.surface}, ${c.auth}).`,
    `- **Provider**: ${inline(c.provider)}.`,
    ...(c.proof ? [`- **Proof**: ${c.proof}${c.jwks_url ? ` (keys: ${c.jwks_url})` : ''}.`] : []),
    ...(c.docs_url ? [`- **Docs**: ${c.docs_url}`] : []),
    ...(c.notes ? [`- **Notes**: ${inline(c.notes)}`] : []),
  ];
  const schema = (kind: SchemaKind, title: string, value: unknown) =>
    value === null
      ? [`## ${title}`, '', 'Not specified yet.', '']
      : [`## ${title}`, '', `Resource: ${uri}/${kind}`, '', fence(JSON.stringify(value, null, 2), 'json'), ''];
  const example = (title: string, value: unknown, none: string) =>
    value === null || value === undefined ? [`### ${title}`, '', none, ''] : [`### ${title}`, '', fence(JSON.stringify(value, null, 2), 'json'), ''];
  return [
    `# ${inline(c.name)} (\`${c.id}\`)`,
    '',
    ...(c.description ? [inline(c.description), ''] : []),
    ...facts,
    '',
    ...schema('input-schema', 'Input schema', c.input_schema),
    ...schema('output-schema', 'Output schema', c.output_schema),
    '## Example',
    '',
    ...example('Request', c.example_request, 'No request body.'),
    ...example('Response', c.example_response, 'No example response published.'),
  ].join('\n');
}
