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
    const section = lines.slice(lines.indexOf('## Paying with x402') + 1, lines.indexOf('## Optional'));
    const steps = section.filter((l) => /^\d\. /.test(l));
    expect(steps).toHaveLength(3);
    expect(steps[0]).toContain('402');
    expect(steps[0]).toContain('eip155:8453');
    expect(steps[1]).toContain('PAYMENT-SIGNATURE');
  });
});
