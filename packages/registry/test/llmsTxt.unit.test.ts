import { describe, expect, it } from 'vitest';
import { buildCatalog, renderLlmsTxt } from '../src/index.js';
import { context } from './helpers.js';

const ctx = context();
const text = renderLlmsTxt(buildCatalog(ctx), ctx);
const lines = text.split('\n');
/** The lines between the heading line `from` and the heading line `to`, both left out. */
const linesBetween = (from: string, to: string) => lines.slice(lines.indexOf(from) + 1, lines.indexOf(to));

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
    const discovery = linesBetween('## Discovery', '## Capabilities');
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

  it("documents the builder's JSON-RPC methods and the bundle fields of 2026", () => {
    const section = linesBetween('## Bundles (builder JSON-RPC)', '## Becoming a provider').join('\n');
    expect(section).toContain(`POST ${ctx.builderUrl.replace(/\/+$/, '')}/rpc`);
    for (const name of [
      'eth_sendBundle',
      'eth_sendEndOfBlockBundle',
      'mev_sendBundle',
      'flashbots_getBundleStatsV2',
      'buildernet_getFeeRefundTotalsByRecipient',
      'buildernet_getFeeRefundsByRecipient',
      'buildernet_getFeeRefundsByBundle',
      'buildernet_getDelayedRefunds',
      'buildernet_getDelayedRefundTotalsByRecipient',
      'replacementNonce',
      'refundIdentity',
      'delayedRefund',
      'receivedTimestampMs',
      'inclusionLatencyMs',
      'BottomOfBlock',
      'targetPools',
      '-32602',
    ])
      expect(section).toContain(name);
  });

  it('explains x402 payment in three numbered lines', () => {
    const section = linesBetween('## Paying with x402', '## MCP');
    const steps = section.filter((l) => /^\d\. /.test(l));
    expect(steps).toHaveLength(3);
    expect(steps[0]).toContain('402');
    expect(steps[0]).toContain('eip155:8453');
    expect(steps[1]).toContain('PAYMENT-SIGNATURE');
  });

  it('says which x402 scheme suits which caller: exact always, upto and batch-settlement where the 402 offers them', () => {
    const section = linesBetween('## Paying with x402', '## MCP');
    const bullet = (scheme: string) => section.find((l) => l.startsWith(`- \`${scheme}\``)) ?? '';
    expect(bullet('exact')).toContain('one-off calls');
    expect(bullet('exact')).toContain('EIP-3009');
    expect(bullet('exact')).not.toContain('where the 402 offers it');
    expect(bullet('upto')).toContain('where the 402 offers it');
    expect(bullet('upto')).toContain('known only afterwards');
    expect(bullet('upto')).toContain('ceiling');
    expect(bullet('batch-settlement')).toContain('where the 402 offers it');
    expect(bullet('batch-settlement')).toContain('many small calls from one agent');
    expect(bullet('batch-settlement')).toContain('voucher');
  });

  it('explains the MCP endpoint with host configuration snippets and x402 over MCP', () => {
    const mcp = linesBetween('## MCP', '## Bearer tokens (Sign-In with Ethereum)').join('\n');
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
    // x402 over MCP: the payment, its settlement and the error that carries the challenge
    for (const key of ['_meta["x402/payment"]', '_meta["x402/payment-response"]', '"x402/error"']) expect(mcp).toContain(key);
  });

  it('says how to get a bearer token and which SDKs exist', () => {
    const bearer = linesBetween('## Bearer tokens (Sign-In with Ethereum)', '## SDKs').join('\n');
    for (const step of ['POST http://127.0.0.1:8080/v1/auth/nonce', 'POST http://127.0.0.1:8080/v1/auth/token', 'Authorization: Bearer <access_token>']) {
      expect(bearer).toContain(step);
    }
    const sdks = linesBetween('## SDKs', '## Becoming a provider').join('\n');
    for (const sdk of ['npm install agent-capability-gateway-sdk viem', 'local_signer', 'sdk-python-stub']) expect(sdks).toContain(sdk);
  });

  it('mentions the x402 extensions every 402 carries', () => {
    expect(text).toContain('`bazaar`');
    expect(text).toContain('`payment-identifier`');
  });

  it('explains how to become a provider: challenge, EIP-191 signature, registration, signed calls', () => {
    const section = linesBetween('## Becoming a provider', '## Optional').join('\n');
    for (const step of ['/api/v1/providers/challenge', 'EIP-191', 'signing_secret', 'webhook-signature']) expect(section).toContain(step);
  });
});
