import { Writable } from 'node:stream';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { createLogger, repeatedKeys } from '@acg/observability';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scrape } from '../../../packages/observability/test/prometheus.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { bearerToken, craftPayload, paidPost, paymentHeader, post, walletBalancesRequest } from './x402.js';

/**
 * `GET /metrics` (Prometheus text, parsed with a Prometheus text-format parser), METRICS_TOKEN,
 * `X-Request-Id` and the request log line, on a real gateway (anvil payment chain, private Redis).
 */
const TOKEN = 'metrics-test-token-0123456789';
const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(l);
    cb();
  },
});
let t: TestGateway;
const auth = { Authorization: `Bearer ${TOKEN}` };

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${t.url}/metrics`, { headers: auth });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return new Scrape(await res.text());
}

beforeAll(async () => {
  t = await startTestGateway({
    log: createLogger({ service: 'gateway', level: 'info', destination: sink }),
    config: { metrics: { token: TOKEN, workerHost: '127.0.0.1' } },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /metrics on the gateway port', () => {
  it('counts a 402, a refused payment, a 404 and a paid execute by route template, method and status; payments settled and refused; executions', async () => {
    // a job is read by its payer only: an unknown job answers a signed-in wallet 404
    const token = await bearerToken(t.url, t.stack.payment.buyers[1]);
    const before = await scrape();
    expect(before.value('acg_payments_settled_total', { route: 'execute' })).toBe(0);
    const executeUrl = `${t.url}/api/v1/execute`;
    const buyer = t.stack.payment.buyers[0];

    // 1. unpaid: the 402 challenge
    const unpaid = await post(executeUrl, walletBalancesRequest(buyer.address));
    expect(unpaid.status).toBe(402);
    // 2. a payment refused: signed by another key than its `from`
    const requirements = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!).accepts[0];
    const forged = await craftPayload(t.stack.payment.buyers[1], requirements, 8453, { from: buyer.address });
    const refused = await post(executeUrl, walletBalancesRequest(buyer.address), { 'PAYMENT-SIGNATURE': paymentHeader(forged) });
    expect(refused.status).toBe(402);
    const reason = refused.body.reason as string;
    expect(reason).toMatch(/^[a-z0-9_]+$/);
    // 3. no such path, and a documented template answering 404
    expect((await fetch(`${t.url}/api/v1/nothing-here`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/v1/jobs/job_01JD5X0Q6Z8R3M2N4P5Q6R7S8T`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    // 4. paid with the official client: its first try is a 402, the paid retry a 200
    const paid = await paidPost(buyer, executeUrl, walletBalancesRequest(buyer.address));
    expect(paid.status).toBe(200);
    expect(paid.body.status).toBe('SUCCEEDED');

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(delta('acg_http_requests_total', { route: '/api/v1/execute', method: 'POST', status: '402' })).toBe(3);
    expect(delta('acg_http_requests_total', { route: '/api/v1/execute', method: 'POST', status: '200' })).toBe(1);
    expect(delta('acg_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(delta('acg_http_requests_total', { route: '/api/v1/jobs/{job_id}', method: 'GET', status: '404' })).toBe(1);
    // the first scrape is counted too, once its answer ended
    expect(after.value('acg_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBe(1);
    expect(after.family('acg_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    const count = { route: '/api/v1/execute', method: 'POST' };
    expect(after.line('acg_http_request_duration_seconds_count', count) - before.line('acg_http_request_duration_seconds_count', count)).toBe(4);
    expect(after.value('acg_payments_settled_total', { route: 'execute' })).toBe(1);
    expect(after.value('acg_payments_settled_usdc_total', { route: 'execute' })).toBeCloseTo(0.001, 9);
    expect(after.value('acg_payments_refused_total', { reason })).toBe(1);
    expect(after.value('acg_executions_total', { capability: 'intelligence.wallet_balances', outcome: 'succeeded' })).toBe(1);
    // queue depths read from Redis at scrape time
    for (const queue of ['jobs', 'refunds', 'webhook_deliveries']) expect(after.sample('acg_queue_jobs', { queue, state: 'waiting' }), queue).toBeDefined();
    expect(after.family('process_resident_memory_bytes')).toBeDefined();
  });

  it('is in the route table (405 for POST) but not in the OpenAPI document', async () => {
    const res = await fetch(`${t.url}/metrics`, { method: 'POST', headers: auth });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const openapi = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).not.toContain('/metrics');
    expect(Object.keys(openapi.paths).length).toBeGreaterThan(5);
  });

  it('METRICS_TOKEN: without the bearer token (or with another) 401 problem+json and no metrics', async () => {
    const refusedHeaders: Record<string, string>[] = [{}, { Authorization: 'Bearer not-the-token-0123456789' }, { Authorization: TOKEN }];
    for (const headers of refusedHeaders) {
      const res = await fetch(`${t.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ status: 401, title: 'Unauthorized' });
      expect(text).not.toContain('acg_');
    }
    const head = await fetch(`${t.url}/metrics`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });
});

describe('X-Request-Id and the request log line', () => {
  it('echoes a sane X-Request-Id and makes one otherwise, on every answer (404, 405, 401, 402, 413)', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const echo = await fetch(`${t.url}/registry`, { headers: { 'X-Request-Id': 'trace.01:abc-DEF_9' } });
    expect(echo.headers.get('x-request-id')).toBe('trace.01:abc-DEF_9');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const r = await fetch(`${t.url}/registry`, { headers: { 'X-Request-Id': bad } });
      expect(r.headers.get('x-request-id'), bad).toMatch(uuid);
    }
    const answers = await Promise.all([
      fetch(`${t.url}/nope`),
      fetch(`${t.url}/registry`, { method: 'DELETE' }),
      fetch(`${t.url}/metrics`),
      post(`${t.url}/api/v1/execute`, walletBalancesRequest(t.stack.payment.buyers[3].address)),
      fetch(`${t.url}/api/v1/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(1_048_577) }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([404, 405, 401, 402, 413]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(uuid);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('logs one line for a 404 and for a body refused before tRPC, with the request id, and no line repeats a key', async () => {
    await fetch(`${t.url}/api/v1/not-a-route?x=1`, { headers: { 'X-Request-Id': 'log-test-404' } });
    await fetch(`${t.url}/api/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'X-Request-Id': 'log-test-415' },
      body: 'hello',
    });
    const find = (id: string) => lines.map((l) => JSON.parse(l)).filter((l) => l.request_id === id);
    await expect.poll(() => find('log-test-404').length).toBe(1);
    expect(find('log-test-404')[0]).toMatchObject({
      service: 'gateway',
      module: 'http',
      msg: 'request',
      method: 'GET',
      route: 'unmatched',
      status: 404,
      ip: expect.stringMatching(/127\.0\.0\.1$/),
      ms: expect.any(Number),
    });
    await expect.poll(() => find('log-test-415').length).toBe(1);
    expect(find('log-test-415')[0]).toMatchObject({ route: '/api/v1/execute', method: 'POST', status: 415 });
    expect(lines.length).toBeGreaterThan(10);
    for (const l of lines) expect(repeatedKeys(l), l).toEqual([]);
  });
});
