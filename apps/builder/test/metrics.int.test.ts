import { devAccount } from '@acg/devnet';
import { parseEther } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { Scrape } from '../../../packages/observability/test/prometheus.js';
import { flashbotsSignature, freshIp, httpRequest, post, sendBundleBody, transfer } from './harness.js';

/** `GET /metrics` on the builder port: bundle counters move with a bundle; METRICS_TOKEN; X-Request-Id. */
const TOKEN = 'builder-metrics-token-0123456789';
const t = useTestBuilder({ metricsToken: TOKEN });
let metricsUrl: string;
beforeAll(async () => {
  metricsUrl = `${t.builder.url}/metrics`;
});

async function scrape(): Promise<Scrape> {
  const r = await httpRequest(metricsUrl, { method: 'GET', headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return new Scrape(r.text);
}

describe('GET /metrics on the builder port', () => {
  it('counts a bundle received, simulated, included, and the block submitted to each relay (accepted)', async () => {
    const before = await scrape();
    const searcher = devAccount(5);
    const target = (await t.client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const tip = await transfer(t.client, 6, { to: t.builder.coinbase, value: parseEther('0.01'), tipGwei: '1' });
    const body = sendBundleBody([tip], target);
    const sent = await post(t.builder.rpcUrl, body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, freshIp());
    expect(sent.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toHaveLength(1);
    expect(attempt.bid?.submissions.every((s) => s.accepted)).toBe(true);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    expect(delta('acg_builder_bundles_received_total')).toBe(1);
    expect(delta('acg_builder_bundles_simulated_total', { outcome: 'valid' })).toBe(1);
    expect(delta('acg_builder_bundles_included_total')).toBe(1);
    expect(delta('acg_builder_blocks_submitted_total')).toBe(1);
    const relays = t.relays.relays.map((r) => r.name);
    expect(relays).toHaveLength(4);
    for (const relay of relays) expect(delta('acg_builder_relay_submissions_total', { relay, outcome: 'accepted' }), relay).toBe(1);
    expect(delta('acg_http_requests_total', { route: '/rpc', method: 'POST', status: '200' })).toBe(1);
    expect(after.value('acg_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
  });

  it('needs the bearer token when METRICS_TOKEN is set (401 problem+json), answers 405 to POST, and every answer carries X-Request-Id', async () => {
    const refused = await httpRequest(metricsUrl, { method: 'GET' });
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.json).toMatchObject({ status: 401 });
    expect(refused.text).not.toContain('acg_');
    const posted = await httpRequest(metricsUrl, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(posted.status).toBe(405);
    expect(posted.headers.allow).toBe('GET, HEAD');
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await httpRequest(`${t.builder.url}/nowhere`, { method: 'GET', headers: { 'X-Request-Id': 'builder-req-1' } });
    expect(echoed.status).toBe(404);
    expect(echoed.headers['x-request-id']).toBe('builder-req-1');
    const counted = await scrape();
    expect(counted.value('acg_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(counted.value('acg_http_requests_total', { route: '/metrics', method: 'GET', status: '401' })).toBe(1);
  });
});
