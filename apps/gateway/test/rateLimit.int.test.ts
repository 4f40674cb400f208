import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';

const t = useTestGateway({ prober: false, config: { rateLimitPerSecond: 5 } });

describe('gateway rate limit', () => {
  it('answers 429 problem+json with Retry-After past the per-IP limit, without touching the cached discovery documents', async () => {
    const body = JSON.stringify({ capability_id: 'intelligence.wallet_balances', input: { address: t.stack.payment.buyers[0].address } });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => fetch(t.executeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
    );
    const statuses = answers.map((r) => r.status);
    // a fixed window of 5 per second: at least 5 and at most 10 pass (the burst may straddle a second boundary)
    const limited = answers.filter((r) => r.status === 429);
    expect(statuses.filter((s) => s === 402).length).toBeGreaterThanOrEqual(5);
    expect(limited.length).toBeGreaterThanOrEqual(2);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].headers.get('content-type')).toContain('application/problem+json');
    expect(await limited[0].json()).toMatchObject({ status: 429, title: 'Too Many Requests' });
    const docs = await Promise.all(Array.from({ length: 20 }, () => fetch(`${t.url}/registry`)));
    expect(docs.every((r) => r.status === 200)).toBe(true);
  });

  it('counts rendered web pages against the limit, but not the static files (icons, robots.txt)', async () => {
    const html = { accept: 'text/html' };
    const pages = await Promise.all(Array.from({ length: 40 }, () => fetch(`${t.url}/`, { headers: html })));
    const statuses = pages.map((r) => r.status);
    await Promise.all(pages.map((r) => r.arrayBuffer()));
    // 5 per second: 40 requests cannot all pass unless they spread over 8 seconds
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s !== 429).every((s) => s === 200)).toBe(true);
    const files = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${t.url}${i % 2 ? '/favicon.ico' : '/robots.txt'}`, { headers: html })));
    expect(files.map((r) => r.status).every((s) => s === 200)).toBe(true);
  });
});
