import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BuilderMetrics,
  codeLabel,
  createLogger,
  createRegistry,
  createRequestObserver,
  createServiceMetrics,
  DeliveryMetrics,
  ExecutionMetrics,
  HttpMetrics,
  JobMetrics,
  logPrettyFromEnv,
  metricsAuthorized,
  PaymentMetrics,
  QueueMetrics,
  repeatedKeys,
  requestIdOf,
  SELF_CHECK_HEADER,
  selfCheckToken,
  setRoute,
  startMetricsServer,
  topLevelKeys,
} from '../src/index.js';
import { Scrape } from './prometheus.js';

/** A pino destination keeping each written line. */
function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(l);
      cb();
    },
  });
  return { lines, stream };
}

function get(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: IncomingMessage['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('request ids', () => {
  const req = (id?: string | string[]) => ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as unknown as IncomingMessage;
  it('keeps a sane client id (1-128 of [A-Za-z0-9._:-]) and makes a UUID otherwise', () => {
    expect(requestIdOf(req('abc-123_x.y:z'))).toBe('abc-123_x.y:z');
    expect(requestIdOf(req('a'.repeat(128)))).toBe('a'.repeat(128));
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const bad of [undefined, '', 'a'.repeat(129), 'has space', 'semi;colon', 'ünïcode', '{"json":1}', ['a', 'b']]) {
      expect(requestIdOf(req(bad)), String(bad)).toMatch(uuid);
    }
    expect(requestIdOf(req())).not.toBe(requestIdOf(req()));
  });
});

describe('log line keys', () => {
  it('reads top-level keys from the raw text, repeated ones included, ignoring nested objects and strings', () => {
    expect(topLevelKeys('{"a":1,"b":{"a":2,"c":[{"d":1}]},"s":"x\\",\\"a\\":1","a":3}')).toEqual(['a', 'b', 's', 'a']);
    expect(repeatedKeys('{"module":"wallet-monitor","module":"watcher","chain":"base","chain":"base","msg":"x"}')).toEqual(['module', 'chain']);
    expect(repeatedKeys('{"a":1,"b":2}')).toEqual([]);
  });

  it('pino repeats a key bound twice (the defect the key rule avoids); module + component + chain once each do not repeat', () => {
    const { lines, stream } = capture();
    const log = createLogger({ service: 'worker', destination: stream });
    log.child({ module: 'wallet-monitor' }).child({ module: 'watcher', chain: 'base' }).info({ chain: 'base' }, 'old way');
    log.child({ module: 'wallet-monitor' }).child({ component: 'watcher', chain: 'base' }).info('new way');
    expect(repeatedKeys(lines[0])).toEqual(['module', 'chain']);
    expect(repeatedKeys(lines[1])).toEqual([]);
    expect(JSON.parse(lines[1])).toMatchObject({ service: 'worker', module: 'wallet-monitor', component: 'watcher', chain: 'base', msg: 'new way' });
  });
});

describe('LOG_PRETTY', () => {
  it('reads 1/true/0/false and falls back when unset', () => {
    expect(logPrettyFromEnv({ LOG_PRETTY: '1' })).toBe(true);
    expect(logPrettyFromEnv({ LOG_PRETTY: 'TRUE' })).toBe(true);
    expect(logPrettyFromEnv({ LOG_PRETTY: '0' }, true)).toBe(false);
    expect(logPrettyFromEnv({}, true)).toBe(true);
    expect(logPrettyFromEnv({})).toBe(false);
  });

  it('writes one readable line per entry: time, level, service/module: message, fields inline', () => {
    const { lines, stream } = capture();
    const log = createLogger({ service: 'gateway', pretty: true, destination: stream });
    log.child({ module: 'http' }).info({ route: '/registry', status: 200 }, 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: gateway\/http: request \{"route":"\/registry","status":200\}$/);
  });
});

describe('metrics', () => {
  it('registers every family in a registry of its own: two service instances in one process do not clash', async () => {
    const families = (r: ReturnType<typeof createRegistry>) => {
      new HttpMetrics(r);
      new PaymentMetrics(r);
      new ExecutionMetrics(r);
      new JobMetrics(r);
      new DeliveryMetrics(r);
      new BuilderMetrics(r);
      new QueueMetrics(r);
    };
    const a = createRegistry();
    const b = createRegistry();
    families(a);
    families(b);
    expect(() => new HttpMetrics(a)).toThrow(/already been registered/);
    const scrape = new Scrape(await a.metrics());
    for (const name of [
      'acg_http_requests_total',
      'acg_payments_settled_total',
      'acg_job_steps_total',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(scrape.family(name), name).toBeDefined();
    }
  });

  it('createServiceMetrics: one registry per call holding each family under its key, in key order', async () => {
    const a = createServiceMetrics({ jobs: JobMetrics, payments: PaymentMetrics });
    const b = createServiceMetrics({ jobs: JobMetrics, payments: PaymentMetrics });
    expect(a.jobs).toBeInstanceOf(JobMetrics);
    expect(a.payments).toBeInstanceOf(PaymentMetrics);
    expect(a.registry).not.toBe(b.registry);
    expect(() => new JobMetrics(a.registry)).toThrow(/already been registered/);
    const text = await a.registry.metrics();
    expect(text.indexOf('acg_job_steps_total')).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('acg_job_steps_total')).toBeLessThan(text.indexOf('acg_payments_settled_total'));
    expect(new Scrape(text).family('process_cpu_user_seconds_total')).toBeDefined();
  });

  it('counts with low-cardinality labels: unknown methods and foreign reason codes collapse', async () => {
    const r = createRegistry({ processMetrics: false });
    const http = new HttpMetrics(r);
    const payments = new PaymentMetrics(r);
    http.observe('/api/v1/jobs/{job_id}', 'GET', 200, 0.003);
    http.observe('/api/v1/jobs/{job_id}', 'GET', 200, 0.2);
    http.observe('unmatched', 'PROPFIND', 404, 0.001);
    payments.refused({ reason: 'invalid_exact_evm_payload_signature' });
    payments.refused({ reason: 'Error: execution reverted 0xdeadbeef' });
    payments.settled({ route: 'execute', amount: '1500' });
    const s = new Scrape(await r.metrics());
    expect(s.value('acg_http_requests_total', { route: '/api/v1/jobs/{job_id}', method: 'GET', status: '200' })).toBe(2);
    expect(s.value('acg_http_requests_total', { route: 'unmatched', method: 'other', status: '404' })).toBe(1);
    expect(s.family('acg_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(s.line('acg_http_request_duration_seconds_count', { route: '/api/v1/jobs/{job_id}', method: 'GET' })).toBe(2);
    expect(s.line('acg_http_request_duration_seconds_bucket', { route: '/api/v1/jobs/{job_id}', le: '0.005' })).toBe(1);
    expect(s.line('acg_http_request_duration_seconds_bucket', { route: '/api/v1/jobs/{job_id}', le: '0.25' })).toBe(2);
    expect(s.value('acg_payments_refused_total', { reason: 'invalid_exact_evm_payload_signature' })).toBe(1);
    expect(s.value('acg_payments_refused_total', { reason: 'other' })).toBe(1);
    expect(s.value('acg_payments_settled_total', { route: 'execute' })).toBe(1);
    expect(s.value('acg_payments_settled_usdc_total', { route: 'execute' })).toBeCloseTo(0.0015, 10);
    expect(codeLabel(undefined)).toBe('other');
  });

  it('reads queue depths at scrape time and leaves out a queue that cannot answer', async () => {
    const r = createRegistry({ processMetrics: false });
    const queues = new QueueMetrics(r);
    let waiting = 3;
    queues.add('jobs', { getJobCounts: async () => ({ waiting, active: 1, delayed: 2, failed: 0 }) });
    queues.add('refunds', { getJobCounts: async () => Promise.reject(new Error('redis down')) });
    let s = new Scrape(await r.metrics());
    expect(s.value('acg_queue_jobs', { queue: 'jobs', state: 'waiting' })).toBe(3);
    expect(s.value('acg_queue_jobs', { queue: 'jobs', state: 'delayed' })).toBe(2);
    expect(s.sample('acg_queue_jobs', { queue: 'jobs', state: 'paused' })?.value).toBe('0');
    expect(s.sample('acg_queue_jobs', { queue: 'refunds' })).toBeUndefined();
    waiting = 7;
    s = new Scrape(await r.metrics());
    expect(s.value('acg_queue_jobs', { queue: 'jobs', state: 'waiting' })).toBe(7);
  });

  it('METRICS_TOKEN: Bearer <token> only, compared whole', () => {
    const token = 'tok_0123456789abcdef';
    expect(metricsAuthorized(undefined, undefined)).toBe(true);
    expect(metricsAuthorized(`Bearer ${token}`, token)).toBe(true);
    expect(metricsAuthorized(`bearer ${token}`, token)).toBe(true);
    expect(metricsAuthorized(undefined, token)).toBe(false);
    expect(metricsAuthorized(`Bearer ${token}x`, token)).toBe(false);
    expect(metricsAuthorized(`Basic ${token}`, token)).toBe(false);
    expect(metricsAuthorized(`Bearer ${token.slice(0, -1)}`, token)).toBe(false);
  });
});

describe('the worker metrics listener', () => {
  const token = 'worker-metrics-token-0123';
  let server: Awaited<ReturnType<typeof startMetricsServer>>;
  beforeAll(async () => {
    const registry = createRegistry({ processMetrics: false });
    new JobMetrics(registry).step('succeeded');
    server = await startMetricsServer({ registry, port: 0, token });
  });
  afterAll(() => server?.close());

  it('serves GET /metrics with the token, 401 problem+json without it, 404 elsewhere, 405 for other methods', async () => {
    const ok = await get(server.url, { Authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(new Scrape(ok.text).value('acg_job_steps_total', { outcome: 'succeeded' })).toBe(1);
    const refused = await get(server.url);
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(JSON.parse(refused.text)).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect(refused.text).not.toContain('acg_');
    expect((await get(server.url.replace('/metrics', '/other'))).status).toBe(404);
    const post = await get(server.url, { Authorization: `Bearer ${token}` }, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('the request observer', () => {
  const { lines, stream } = capture();
  const registry = createRegistry({ processMetrics: false });
  const http = new HttpMetrics(registry);
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const observe = createRequestObserver({
      log: createLogger({ service: 'test', destination: stream }).child({ module: 'http' }),
      metrics: http,
      clientIp: () => '203.0.113.7',
    });
    server = createServer((req, res) => {
      observe(req, res);
      if (req.url === '/things/1') {
        setRoute(req, '/things/{id}');
        res.end('ok');
      } else if (req.url === '/boom') {
        setRoute(req, '/boom');
        res.statusCode = 500;
        res.end();
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('answers with X-Request-Id and writes one line per request: request_id, method, route template, status, ms, ip, with no repeated key', async () => {
    const a = await get(`${base}/things/1`, { 'X-Request-Id': 'client-id-1' });
    const b = await get(`${base}/nowhere`);
    const c = await get(`${base}/boom`);
    expect(a.headers['x-request-id']).toBe('client-id-1');
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await expect.poll(() => lines.length).toBe(3);
    for (const l of lines) expect(repeatedKeys(l), l).toEqual([]);
    const [la, lb, lc] = lines.map((l) => JSON.parse(l));
    expect(la).toMatchObject({
      level: 30,
      service: 'test',
      module: 'http',
      request_id: 'client-id-1',
      method: 'GET',
      route: '/things/{id}',
      status: 200,
      ip: '203.0.113.7',
      msg: 'request',
    });
    expect(typeof la.ms).toBe('number');
    expect(lb).toMatchObject({ request_id: b.headers['x-request-id'], route: 'unmatched', status: 404 });
    expect(lc).toMatchObject({ level: 50, route: '/boom', status: 500, msg: 'request failed' });
    expect(Object.keys(la).sort()).toEqual(['ip', 'level', 'method', 'module', 'ms', 'msg', 'request_id', 'route', 'service', 'status', 'time']);
    expect(c.status).toBe(500);
    const s = new Scrape(await registry.metrics());
    expect(s.value('acg_http_requests_total', { route: '/things/{id}', method: 'GET', status: '200' })).toBe(1);
    expect(s.value('acg_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(s.value('acg_http_requests_total', { route: '/boom', method: 'GET', status: '500' })).toBe(1);
  });

  it('writes this process’s own self-check requests at debug, and a forged self-check header at info', async () => {
    const { lines: quiet, stream: quietStream } = capture();
    const { lines: verbose, stream: verboseStream } = capture();
    const servers: Server[] = [];
    const urls: string[] = [];
    for (const [level, destination] of [
      ['info', quietStream],
      ['debug', verboseStream],
    ] as const) {
      const observe = createRequestObserver({ log: createLogger({ service: 'test', level, destination }), clientIp: () => '127.0.0.1' });
      const s = createServer((req, res) => {
        observe(req, res);
        res.end('ok');
      });
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      urls.push(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    }
    try {
      for (const url of urls) {
        await get(`${url}/probe`, { [SELF_CHECK_HEADER]: selfCheckToken() });
        await get(`${url}/forged`, { [SELF_CHECK_HEADER]: 'not-the-token' });
      }
      await expect.poll(() => verbose.length).toBe(2);
      await expect.poll(() => quiet.length).toBe(1);
      expect(JSON.parse(quiet[0])).toMatchObject({ level: 30, msg: 'request' });
      expect(verbose.map((l) => JSON.parse(l)).map((l) => [l.level, l.msg])).toEqual(
        expect.arrayContaining([
          [20, 'self-check request'],
          [30, 'request'],
        ]),
      );
    } finally {
      for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
    }
  });
});
