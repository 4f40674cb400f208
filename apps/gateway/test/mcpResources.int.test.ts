import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type TextResourceContents } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';

/**
 * The catalog as MCP resources, the MCP prompts, and `get_capability`'s `capability_id`, with the
 * official MCP client (`Client` + `StreamableHTTPClientTransport`) against the test gateway
 * (private Redis, anvil): apps/gateway/README.md "MCP", docs/mcp.md.
 */

const ID = 'intelligence.wallet_balances';

let t: TestGateway;
let client: Client;

beforeAll(async () => {
  t = await startTestGateway();
  client = new Client({ name: 'acg-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await t?.close();
});

/** The /registry entry of `id`, as the REST API serves it (the one source the resources are built from). */
async function registryEntry(
  id: string,
): Promise<Record<string, unknown> & { price: string; price_base_units: string; input_schema: object; output_schema: object }> {
  const registry = (await fetch(`${t.url}/registry`).then((r) => r.json())) as { capabilities: { id: string }[] };
  return registry.capabilities.find((c) => c.id === id) as never;
}

/** The JSON-RPC error a client call rejects with. */
async function mcpError(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

describe('MCP initialize', () => {
  it('advertises tools, resources and prompts', () => {
    const caps = client.getServerCapabilities();
    expect(caps).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(client.getInstructions()).toContain('acg://capabilities');
  });
});

describe('MCP resources: the catalog', () => {
  it('lists the index, then a Markdown page and JSON Schemas for every /registry capability', async () => {
    const { resources } = await client.listResources();
    const registry = (await fetch(`${t.url}/registry`).then((r) => r.json())) as { capabilities: { id: string; input_schema: object | null }[] };
    expect(resources[0]).toMatchObject({ uri: 'acg://capabilities', mimeType: 'text/markdown' });
    const uris = new Set(resources.map((r) => r.uri));
    for (const c of registry.capabilities) {
      expect(uris.has(`acg://capabilities/${c.id}`), c.id).toBe(true);
      expect(uris.has(`acg://capabilities/${c.id}/input-schema`), c.id).toBe(c.input_schema !== null);
    }
    const page = resources.find((r) => r.uri === `acg://capabilities/${ID}`);
    expect(page).toMatchObject({ name: ID, mimeType: 'text/markdown' });
    expect(resources.find((r) => r.uri === `acg://capabilities/${ID}/output-schema`)).toMatchObject({ mimeType: 'application/schema+json' });
    for (const r of resources) expect(r.name.length).toBeGreaterThan(0);
  });

  it('lists the URI templates', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((x) => x.uriTemplate)).toEqual([
      'acg://capabilities/{capability_id}',
      'acg://capabilities/{capability_id}/input-schema',
      'acg://capabilities/{capability_id}/output-schema',
    ]);
  });

  it("reads a capability's page: Markdown with its price, status, latency, tool, schemas and example, from /registry", async () => {
    const entry = await registryEntry(ID);
    const { contents } = await client.readResource({ uri: `acg://capabilities/${ID}` });
    expect(contents).toHaveLength(1);
    const page = contents[0] as TextResourceContents;
    expect(page).toMatchObject({ uri: `acg://capabilities/${ID}`, mimeType: 'text/markdown' });
    const md = page.text;
    expect(md).toMatch(/^# .+ \(`intelligence\.wallet_balances`\)\n/);
    expect(md).toContain(`${entry.price} USDC per call`);
    expect(md).toContain(`(${entry.price_base_units} USDC base units, 6 decimals)`);
    expect(md).toContain(`**Status**: ${entry.status}`);
    expect(md).toContain('latency p50 ');
    expect(md).toContain('**MCP tool**: `intelligence_wallet_balances`');
    expect(md).toContain(`pay to \`${(entry.x402 as { payTo: string }).payTo}\``);
    // the schemas and the example, as JSON in fenced blocks, equal to /registry's
    const blocks = [...md.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]));
    expect(blocks).toEqual([entry.input_schema, entry.output_schema, entry.example_request, entry.example_response]);
    expect(md).toContain(`acg://capabilities/${ID}/input-schema`);
  });

  it("is named on the capability's web page, in its MCP snippet", async () => {
    const page = await fetch(`${t.url}/capabilities/${ID}`, { headers: { accept: 'text/html' } }).then((r) => r.text());
    expect(page).toContain(`// resource: acg://capabilities/${ID}`);
  });

  it('reads the schema resources: valid JSON Schema 2020-12 documents equal to /registry', async () => {
    const entry = await registryEntry(ID);
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    // the example is the execute envelope: its `input` and `result` are what the schemas describe
    for (const [kind, schema, example] of [
      ['input-schema', entry.input_schema, (entry.example_request as { input: unknown }).input],
      ['output-schema', entry.output_schema, (entry.example_response as { result: unknown }).result],
    ] as const) {
      const { contents } = await client.readResource({ uri: `acg://capabilities/${ID}/${kind}` });
      const doc = contents[0] as TextResourceContents;
      expect(doc.mimeType).toBe('application/schema+json');
      const parsed = JSON.parse(doc.text);
      expect(parsed).toEqual(schema);
      const validate = ajv.compile(parsed);
      expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
      expect(validate({ unexpected: true })).toBe(false);
    }
  });

  it('reads the index: every capability with its status, price and tool', async () => {
    const { contents } = await client.readResource({ uri: 'acg://capabilities' });
    const md = (contents[0] as TextResourceContents).text;
    expect(md).toMatch(/^# Capability catalog/);
    expect(md).toMatch(/\| `intelligence\.wallet_balances` \| .+ \| \w+ \| 0\.001 USDC per call \| `intelligence_wallet_balances` \|/);
    expect(md).toContain('| `gateway.mcp` |');
  });

  it('answers an unknown URI with MCP error -32002 (resource not found) naming it', async () => {
    for (const uri of ['acg://capabilities/intelligence.nothing', `acg://capabilities/${ID}/example`, 'file:///etc/passwd', 'acg://capabilities/']) {
      const err = await mcpError(client.readResource({ uri }));
      expect(err.code, uri).toBe(-32002);
      expect(err.data).toEqual({ uri });
      expect(err.message).toBe('MCP error -32002: Resource not found');
    }
  });
});

describe('MCP prompts', () => {
  it('lists find_and_pay_for_capability and run_job_for_objective with their arguments', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['find_and_pay_for_capability', 'run_job_for_objective']);
    for (const p of prompts) expect(p.description?.length).toBeGreaterThan(0);
    expect(prompts[0].arguments).toEqual([
      expect.objectContaining({ name: 'need', required: true }),
      expect.objectContaining({ name: 'max_price_usdc', required: false }),
    ]);
    expect(prompts[1].arguments).toEqual([
      expect.objectContaining({ name: 'objective', required: true }),
      expect.objectContaining({ name: 'budget_usdc', required: true }),
      expect.objectContaining({ name: 'capabilities', required: false }),
    ]);
  });

  it('gets find_and_pay_for_capability with its arguments in the text', async () => {
    const r = await client.getPrompt({ name: 'find_and_pay_for_capability', arguments: { need: 'USDC balance of my wallet', max_price_usdc: '0.005' } });
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0].role).toBe('user');
    const text = (r.messages[0].content as { type: 'text'; text: string }).text;
    expect(text).toContain('I need: USDC balance of my wallet');
    expect(text).toContain('"0.005"');
    expect(text).toContain('search_capabilities');
    expect(text).toContain('_meta["x402/payment"]');
  });

  it('gets run_job_for_objective with the objective, budget and capabilities', async () => {
    const r = await client.getPrompt({
      name: 'run_job_for_objective',
      arguments: { objective: 'Watch my treasury', budget_usdc: '0.05', capabilities: `${ID}, mev.liquidation_search` },
    });
    const text = (r.messages[0].content as { type: 'text'; text: string }).text;
    expect(text).toContain('Objective: Watch my treasury');
    expect(text).toContain('at most 0.05 USDC');
    expect(text).toContain(`The job may use: ${ID}, mev.liquidation_search.`);
  });

  it('refuses missing or invalid arguments and unknown prompts with -32602', async () => {
    const missing = await mcpError(client.getPrompt({ name: 'run_job_for_objective', arguments: { objective: 'x' } }));
    expect(missing.code).toBe(ErrorCode.InvalidParams);
    expect(missing.message).toContain('budget_usdc');
    const bad = await mcpError(client.getPrompt({ name: 'find_and_pay_for_capability', arguments: { need: 'x', max_price_usdc: 'cheap' } }));
    expect(bad.code).toBe(ErrorCode.InvalidParams);
    expect(bad.message).toContain('max_price_usdc');
    const unknown = await mcpError(client.getPrompt({ name: 'nope' }));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
  });
});

describe('get_capability', () => {
  const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'get_capability', arguments: args })) as CallToolResult;
  const body = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

  it('takes capability_id (as execute does): a capability id or its tool name', async () => {
    await client.listTools();
    for (const ref of [ID, 'intelligence_wallet_balances']) {
      const r = await call({ capability_id: ref });
      expect(r.isError, ref).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ id: ID, price_base_units: '1000' });
    }
  });

  it('still accepts id, the older name', async () => {
    const r = await call({ id: ID });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ id: ID });
    expect(await call({ id: ID, capability_id: ID })).toMatchObject({ structuredContent: { id: ID } });
  });

  it('lists capability_id in its input schema, and refuses none, two different, or an unknown one', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === 'get_capability')!;
    expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual(['capability_id', 'id']);
    const none = await call({});
    expect(none.isError).toBe(true);
    expect(body(none)).toMatchObject({ status: 400, errors: [{ path: ['capability_id'] }] });
    const two = await call({ capability_id: ID, id: 'mev.liquidation_search' });
    expect(body(two)).toMatchObject({ status: 400, errors: [{ path: ['id'] }] });
    const unknown = await call({ capability_id: 'intelligence.nothing' });
    expect(body(unknown)).toMatchObject({ status: 404 });
  });
});
