import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { trace } from '@opentelemetry/api';
import { defineCapability } from '@acg/capabilities';
import { startTracing, type Tracing } from '@acg/observability';
import type { LocalAccount } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { echoCapabilityParameters } from '../../../packages/capabilities/test/echoCapability.js';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { paidPost, readJob } from '../../gateway/test/x402.js';
import { startWorker, type RunningWorker } from '../src/index.js';

/**
 * OpenTelemetry traces (docs/operating.md → Traces): a local OTLP/HTTP receiver (node:http, the
 * JSON encoding of `ExportTraceServiceRequest` that @opentelemetry/exporter-trace-otlp-http sends)
 * collects what a real gateway and worker export: request → paywall → verify/settle → execute →
 * store for a paid execute, job.step → execute for a job. Unset OTEL_EXPORTER_OTLP_ENDPOINT: no
 * provider, nothing exported. Tracing is started and shut down inside the tests (one process):
 * after shutdown nothing global is left.
 */

/** One span as OTLP/JSON carries it, with its resource's `service.name`. */
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  service: string;
  scope: string;
};
type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttributes = { key: string; value: OtlpValue }[] | undefined;

const attributesOf = (list: OtlpAttributes): Record<string, unknown> =>
  Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  );

/** A minimal OTLP/HTTP traces receiver: POST /v1/traces with a JSON body (gzip accepted), answers `{}`. */
async function startReceiver(): Promise<{ url: string; posts: number; spans: OtlpSpan[]; close(): Promise<void> }> {
  const state = { posts: 0, spans: [] as OtlpSpan[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.statusCode = 404;
        return res.end();
      }
      state.posts += 1;
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      expect(req.headers['content-type']).toBe('application/json');
      const body = JSON.parse(raw.toString('utf8')) as {
        resourceSpans: { resource: { attributes: OtlpAttributes }; scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[] }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(attributesOf(rs.resource.attributes)['service.name']);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            // a root span's parentSpanId is absent or empty
            const parentSpanId = (s.parentSpanId as string | undefined) || undefined;
            state.spans.push({
              ...(s as unknown as OtlpSpan),
              parentSpanId,
              attributes: attributesOf(s.attributes as OtlpAttributes),
              service,
              scope: ss.scope.name,
            });
          }
        }
      }
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get posts() {
      return state.posts;
    },
    get spans() {
      return state.spans;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A capability of this test (one definition, for the gateway and the worker). */
const echo = defineCapability({
  ...echoCapabilityParameters('intelligence.echo_trace_test'),
  name: 'Echo (trace test)',
  async run(input) {
    return { text: input.text };
  },
});

const t = useTestGateway({ capabilities: [echo] });
let worker: RunningWorker;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const tracings: Tracing[] = [];

const execute = (buyer: LocalAccount, text: string) => paidPost(buyer, t.executeUrl, { capability_id: echo.id, input: { text } });

/** Whether the global API currently has a real provider (a span started now records). */
const providerRegistered = () => {
  const span = trace.getTracer('probe').startSpan('probe');
  span.end();
  return span.isRecording();
};

beforeAll(async () => {
  receiver = await startReceiver();
  worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs: { backoffMs: 50, lockDurationMs: 2_000 }, capabilities: [echo] });
});
// each test's tracing ends with it (a failed test must not leave a provider registered for the next)
afterEach(async () => {
  for (const tracing of tracings.splice(0)) await tracing.shutdown();
});
afterAll(async () => {
  await worker?.close();
  await receiver?.close();
});

describe('OpenTelemetry traces', () => {
  it('OTEL_EXPORTER_OTLP_ENDPOINT unset: nothing is started, the span helpers are no-ops, nothing is exported', async () => {
    const off = startTracing({ serviceName: 'gateway', env: {} });
    expect(off.enabled).toBe(false);
    expect(off.url).toBeUndefined();
    expect(providerRegistered()).toBe(false);
    const r = await execute(t.stack.payment.buyers[0], 'untraced');
    expect(r.status).toBe(200);
    await off.flush();
    await off.shutdown();
    expect(receiver.posts).toBe(0);
    // OTEL_SDK_DISABLED wins over an endpoint
    expect(startTracing({ serviceName: 'gateway', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' } }).enabled).toBe(false);
    expect(providerRegistered()).toBe(false);
  });

  it('a paid execute exports request → paywall → settle → execute → store in one trace (x402 upfront: no verify); a job exports job.step → execute', async () => {
    const tracing = startTracing({ serviceName: 'gateway-under-test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/` } });
    tracings.push(tracing);
    expect(tracing).toMatchObject({ enabled: true, url: `${receiver.url}/v1/traces` });
    expect(() => startTracing({ serviceName: 'again', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } })).toThrow(/already started/);

    const buyer = t.stack.payment.buyers[1];
    const r = await execute(buyer, 'traced');
    expect(r.status).toBe(200);
    const executionId = r.body.execution_id as string;
    await tracing.flush();
    const spans = receiver.spans;
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['gateway-under-test']));

    // the paid retry's request span (the first try was answered 402: its own trace, paywall step `challenge`)
    const requests = spans.filter((s) => s.name === 'POST /api/v1/execute');
    expect(requests.map((s) => s.attributes['http.response.status_code']).sort()).toEqual([200, 402]);
    const request = requests.find((s) => s.attributes['http.response.status_code'] === 200)!;
    expect(request).toMatchObject({ kind: 2, parentSpanId: undefined, scope: '@acg/observability' }); // SERVER, a root
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/api/v1/execute', 'url.path': '/api/v1/execute' });
    expect(request.attributes['acg.request_id']).toMatch(/^[0-9a-f-]{36}$/);

    const inTrace = spans.filter((s) => s.traceId === request.traceId);
    const childrenOf = (parent: OtlpSpan) => inTrace.filter((s) => s.parentSpanId === parent.spanId);
    const [paywall, ...others] = childrenOf(request);
    expect(others).toEqual([]);
    expect(paywall).toMatchObject({ name: 'paywall', scope: '@acg/payments', attributes: { 'acg.route': 'execute', 'acg.paywall.step': 'settled' } });
    const steps = childrenOf(paywall).sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    // the gateway's in-process facilitator offers x402's upfront flow: settle verifies, no verify call
    expect(steps.map((s) => s.name)).toEqual(['settle', 'execute', 'store']);
    const [settle, run, store] = steps;
    expect(settle.attributes).toMatchObject({ 'x402.network': 'eip155:8453', 'x402.amount': '1000' });
    expect(settle.attributes['x402.transaction']).toMatch(/^0x[0-9a-f]{64}$/);
    expect(run).toMatchObject({
      scope: '@acg/execution',
      attributes: { 'acg.execution_id': executionId, 'acg.capability_id': echo.id, 'acg.execution_status': 'SUCCEEDED' },
    });
    expect(store.attributes).toMatchObject({ 'acg.outcome': 'succeeded' });
    // one after the other: settle ends before execute starts, execute before store (the SDK's
    // timestamps are performance.now() converted to ns, so back-to-back spans may differ by rounding: 1 ms slack)
    const slack = 1_000_000n;
    expect(BigInt(settle.endTimeUnixNano) <= BigInt(run.startTimeUnixNano) + slack).toBe(true);
    expect(BigInt(run.endTimeUnixNano) <= BigInt(store.startTimeUnixNano) + slack).toBe(true);
    // every span of the trace is the request or below it
    expect(inTrace.every((s) => s === request || inTrace.some((p) => p.spanId === s.parentSpanId))).toBe(true);

    // a one-step job: the worker's job.step (a root) → execute
    const job = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'Echo once',
      budget_usdc: 0.001,
      capabilities: [echo.id],
      steps: [{ capability_id: echo.id, input: { text: 'job' } }],
    });
    expect(job.status).toBe(202);
    const jobId = job.body.job_id as string;
    let state: any;
    for (let i = 0; i < 600 && state?.status !== 'succeeded'; i++) {
      state = await readJob(t.url, jobId, buyer);
      if (state.status !== 'succeeded') await new Promise((res) => setTimeout(res, 100));
    }
    expect(state.status).toBe('succeeded');
    await tracing.flush();
    const step = receiver.spans.find((s) => s.name === 'job.step' && s.attributes['acg.job_id'] === jobId);
    expect(step).toMatchObject({
      parentSpanId: undefined,
      scope: '@acg/jobs',
      attributes: { 'acg.step_index': 0, 'acg.capability_id': echo.id, 'acg.step_status': 'succeeded' },
    });
    const stepChildren = receiver.spans.filter((s) => s.parentSpanId === step!.spanId);
    expect(stepChildren.map((s) => s.name)).toEqual(['execute']);
    expect(stepChildren[0].attributes).toMatchObject({ 'acg.job_id': jobId, 'acg.capability_id': echo.id, 'acg.execution_status': 'SUCCEEDED' });
    // the job's paid request: request → paywall → settle, store (creating a job executes nothing)
    const jobRequest = receiver.spans.find((s) => s.name === 'POST /api/v1/jobs' && s.attributes['http.response.status_code'] === 202)!;
    const jobPaywall = receiver.spans.find((s) => s.parentSpanId === jobRequest.spanId)!;
    expect(jobPaywall.attributes).toMatchObject({ 'acg.route': 'jobs', 'acg.paywall.step': 'settled' });
    expect(
      receiver.spans
        .filter((s) => s.parentSpanId === jobPaywall.spanId)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['settle', 'store']);

    // shut down: the globals are gone, and what runs now is not exported
    await tracing.shutdown();
    expect(providerRegistered()).toBe(false);
    const posts = receiver.posts;
    expect((await execute(buyer, 'after shutdown')).status).toBe(200);
    expect(receiver.posts).toBe(posts);
  });

  it('starts again after a shutdown in the same process, and continues an incoming W3C traceparent', async () => {
    const before = receiver.spans.length;
    const tracing = startTracing({ serviceName: 'second', env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces` } });
    tracings.push(tracing);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const res = await fetch(`${t.url}/status/health`, { headers: { traceparent: `00-${traceId}-${parent}-01` } });
    expect(res.status).toBe(200);
    await res.text();
    await tracing.shutdown();
    const spans = receiver.spans.slice(before);
    expect(spans.map((s) => [s.name, s.service, s.traceId, s.parentSpanId])).toEqual([['GET /status/health', 'second', traceId, parent]]);
  });
});
