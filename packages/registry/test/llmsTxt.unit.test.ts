import { describe, expect, it } from 'vitest';
import { buildCatalog, renderLlmsTxt } from '../src/index.js';
import { context } from './helpers.js';

const ctx = context();
const text = renderLlmsTxt(buildCatalog(ctx), ctx);
const lines = text.split('\n');

describe('renderLlmsTxt (llmstxt.org)', () => {
  it('starts with an H1 title followed by a blockquote summary', () => {
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.filter((l) => l.startsWith('# '))).toHaveLength(1);
    const firstContent = lines.slice(1).find((l) => l.trim() !== '');
    expect(firstContent).toMatch(/^> \S/);
  });

  it('links every discovery document with a markdown link', () => {
    for (const path of ['/gateway-catalog.json', '/registry', '/openapi.json', '/status/health']) {
      expect(text).toContain(`](http://127.0.0.1:8080${path})`);
    }
  });

  it('has H2 sections whose list items are markdown links', () => {
    const h2 = lines.filter((l) => l.startsWith('## '));
    expect(h2).toEqual(expect.arrayContaining(['## Discovery', '## Capabilities', '## Paying with x402', '## Optional']));
    const discovery = lines.slice(lines.indexOf('## Discovery') + 1, lines.indexOf('## Capabilities'));
    for (const item of discovery.filter((l) => l.startsWith('- '))) expect(item).toMatch(/^- \[[^\]]+\]\(https?:\/\/[^)]+\)/);
  });

  it('lists each capability with its price and how to call it', () => {
    const wb = lines.find((l) => l.includes('`intelligence.wallet_balances`'))!;
    expect(wb).toContain('0.001 USDC per call');
    expect(wb).toContain('POST http://127.0.0.1:8080/api/v1/execute');
    expect(wb).toContain('"capability_id":"intelligence.wallet_balances"');
    expect(lines.find((l) => l.includes('`builder.send_bundle`'))).toContain('0.1 USDC per bundle');
    expect(lines.find((l) => l.includes('`mev.liquidation_search`'))).toContain('GET http://127.0.0.1:8080/v1/liquidation-search?min_profit_usd=100');
    expect(lines.find((l) => l.includes('`intelligence.wallet_monitor`'))).toContain('0.001 USDC per event');
    for (const c of buildCatalog(ctx).capabilities) expect(text).toContain(`\`${c.id}\`, status ${c.status}`);
  });

  it('explains x402 payment in three numbered lines', () => {
    const section = lines.slice(lines.indexOf('## Paying with x402') + 1, lines.indexOf('## MCP'));
    const steps = section.filter((l) => /^\d\. /.test(l));
    expect(steps).toHaveLength(3);
    expect(steps[0]).toContain('402');
    expect(steps[0]).toContain('eip155:8453');
    expect(steps[1]).toContain('PAYMENT-SIGNATURE');
  });

  it('explains the MCP endpoint with host configuration snippets and x402 over MCP', () => {
    const section = lines.slice(lines.indexOf('## MCP') + 1, lines.indexOf('## Bearer tokens (Sign-In with Ethereum)'));
    const mcp = section.join('\n');
    expect(mcp).toContain('[MCP server](http://127.0.0.1:8080/mcp)');
    expect(mcp).toContain('intelligence_wallet_balances');
    for (const tool of ['search_capabilities', 'get_capability', 'get_health']) expect(mcp).toContain(tool);
    // the catalog as resources, and the prompts
    for (const name of ['`acg://capabilities/{capability_id}`', 'find_and_pay_for_capability', 'run_job_for_objective']) expect(mcp).toContain(name);
    // both snippets are JSON an MCP host accepts
    const snippets = [...mcp.matchAll(/```json\n([^`]+)\n```/g)].map((m) => JSON.parse(m[1]));
    expect(snippets).toEqual([
      { mcpServers: { acg: { url: 'http://127.0.0.1:8080/mcp' } } },
      { mcpServers: { acg: { command: 'npx', args: ['-y', 'mcp-remote', 'http://127.0.0.1:8080/mcp'] } } },
    ]);
    expect(mcp).toContain('_meta["x402/payment"]');
    expect(mcp).toContain('_meta["x402/payment-response"]');
    expect(mcp).toContain('"x402/error"');
  });

  it('says how to get a bearer token and which SDKs exist', () => {
    const bearer = lines.slice(lines.indexOf('## Bearer tokens (Sign-In with Ethereum)') + 1, lines.indexOf('## SDKs')).join('\n');
    expect(bearer).toContain('POST http://127.0.0.1:8080/v1/auth/nonce');
    expect(bearer).toContain('POST http://127.0.0.1:8080/v1/auth/token');
    expect(bearer).toContain('Authorization: Bearer <access_token>');
    const sdks = lines.slice(lines.indexOf('## SDKs') + 1, lines.indexOf('## Becoming a provider')).join('\n');
    expect(sdks).toContain('npm install agent-capability-gateway-sdk viem');
    expect(sdks).toContain('local_signer');
    expect(sdks).toContain('sdk-python-stub');
  });

  it('mentions the x402 extensions every 402 carries', () => {
    expect(text).toContain('`bazaar`');
    expect(text).toContain('`payment-identifier`');
  });

  it('explains how to become a provider: challenge, EIP-191 signature, registration, signed calls', () => {
    const section = lines.slice(lines.indexOf('## Becoming a provider') + 1, lines.indexOf('## Optional')).join('\n');
    expect(section).toContain('/api/v1/providers/challenge');
    expect(section).toContain('EIP-191');
    expect(section).toContain('signing_secret');
    expect(section).toContain('webhook-signature');
  });
});
