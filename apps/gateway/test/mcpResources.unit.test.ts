import { findByMcpToolName, type LegacyRegistryEntry, mcpToolName } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { capabilityMarkdown, catalogMarkdown, listResources, readResource, RESOURCE_NOT_FOUND } from '../src/mcp/resources.js';

/**
 * The Markdown pages of the MCP catalog resources (apps/gateway/src/mcp/resources.ts, docs/mcp.md)
 * with text a third-party provider controls: backticks in the schema and the example, Markdown in
 * the name. The JSON blocks must still parse back to the entry's values, and the page keep its
 * structure.
 */

/** A provider's capability as /registry lists it, with hostile text. */
const entry: LegacyRegistryEntry = {
  id: 'community.echo_ticks',
  product: 'community' as LegacyRegistryEntry['product'],
  name: 'Echo | *ticks* `x`',
  description: 'Echoes. ```\n# Not a heading of the page\n```',
  status: 'PILOT',
  surface: 'REST',
  endpoint: 'https://gateway.example.com/api/v1/execute',
  method: 'POST',
  auth: 'x402',
  provider: 'prv_01JD5X0Q6Z8R3M2N4P5Q6R7S8V',
  proof: null,
  jwks_url: null,
  docs_url: null,
  evidence: { source: 'provider offer' },
  price: '0.002',
  price_base_units: '2000',
  price_unit: 'call',
  currency: 'USDC',
  latency_ms_p50: 12.4,
  latency_ms_p99: null,
  authentication: 'x402',
  x402: null,
  input_schema: { type: 'object', properties: { text: { type: 'string', description: 'with ````` five backticks' } } },
  output_schema: null,
  availability: null,
  example_request: { capability_id: 'community.echo_ticks', input: { text: '```json\n{"a": 1}\n```' } },
  example_response: null,
};

describe('capability page (acg://capabilities/{id})', () => {
  const md = capabilityMarkdown(entry, true);

  it('keeps every JSON block parseable, whatever backticks the provider put in it', () => {
    // a fence is a run of at least 3 backticks longer than any run inside it (CommonMark)
    const blocks = [...md.matchAll(/^(`{3,})json\n([\s\S]*?)\n\1$/gm)].map((m) => JSON.parse(m[2]));
    expect(blocks).toEqual([entry.input_schema, entry.example_request]);
  });

  it('escapes Markdown in the title and gives the price, latency, tool and missing parts in words', () => {
    expect(md.split('\n')[0]).toBe('# Echo \\| \\*ticks\\* \\`x\\` (`community.echo_ticks`)');
    expect(md).toContain('0.002 USDC per call (2000 USDC base units, 6 decimals)');
    expect(md).toContain('latency p50 12 ms, p99 not measured yet');
    expect(md).toContain('`community_echo_ticks`');
    expect(md).toContain('## Output schema\n\nNot specified yet.');
    expect(md).toContain('No example response published.');
    // the description is one paragraph: its Markdown cannot add a heading or a code block to the page
    expect(md.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      md.split('\n')[0],
      '## Input schema',
      '## Output schema',
      '## Example',
      '### Request',
      '### Response',
    ]);
  });

  it('says which x402 scheme suits which caller when the capability takes x402, and not otherwise', () => {
    expect(md).not.toContain('**Which scheme**');
    const paid = capabilityMarkdown(
      {
        ...entry,
        x402: {
          x402Version: 2,
          scheme: 'exact',
          network: 'eip155:8453',
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          resource: 'http://127.0.0.1:8080/api/v1/execute',
        },
      },
      true,
    );
    const line = paid.split('\n').find((l) => l.startsWith('- **Which scheme**')) ?? '';
    expect(line).toContain('`exact` for one-off calls');
    expect(line).toContain('where the 402 offers them');
    expect(line).toContain('`upto` for calls whose cost is known only afterwards');
    expect(line).toContain('`batch-settlement` for many small calls from one agent');
  });
});

describe('resources/list and resources/read', () => {
  it('lists the page and only the schemas the capability publishes', () => {
    const uris = listResources([entry]).map((r) => r.uri);
    expect(uris).toEqual(['acg://capabilities', 'acg://capabilities/community.echo_ticks', 'acg://capabilities/community.echo_ticks/input-schema']);
  });

  it('reads the schema it publishes and refuses the one it does not, with -32002 and the uri', () => {
    const read = readResource('acg://capabilities/community.echo_ticks/input-schema', [entry], () => true);
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(entry.input_schema);
    const uri = 'acg://capabilities/community.echo_ticks/output-schema';
    expect(() => readResource(uri, [entry], () => true)).toThrow(expect.objectContaining({ code: RESOURCE_NOT_FOUND, data: { uri } }));
  });

  it('marks capabilities without an MCP tool in the index', () => {
    expect(catalogMarkdown([entry], () => false)).toContain(
      '| `community.echo_ticks` | Echo \\| \\*ticks\\* \\`x\\` | PILOT | 0.002 USDC per call | (REST only) |',
    );
  });
});

describe('the MCP tool-name mapping (@acg/schemas/mcpToolName)', () => {
  it('replaces the dot, and finds an item back by its tool name even when the product holds "_"', () => {
    expect(mcpToolName('intelligence.wallet_balances')).toBe('intelligence_wallet_balances');
    const items = [{ id: 'a_b.c' }, { id: 'a.b_c' }];
    expect(mcpToolName(items[0].id)).toBe(mcpToolName(items[1].id));
    expect(findByMcpToolName(items, 'a_b_c')).toBe(items[0]);
    expect(findByMcpToolName(items, 'nothing')).toBeUndefined();
  });
});
