import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from 'pino';
import { routeOf } from './requestLog.js';

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `service.name` of the spans (`gateway`, `worker`, `builder`, `launcher`), unless `OTEL_SERVICE_NAME` is set. */
  serviceName: string;
  /** Where the `OTEL_*` variables are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Told once where traces go (info) and of export failures (warn). */
  log?: Pick<Logger, 'info' | 'warn'>;
}

/** What {@link startTracing} started. */
export interface Tracing {
  /** false when `OTEL_EXPORTER_OTLP_ENDPOINT` (and `..._TRACES_ENDPOINT`) is unset or `OTEL_SDK_DISABLED=true`: nothing was started. */
  readonly enabled: boolean;
  /** The OTLP/HTTP traces URL spans are POSTed to (e.g. `http://collector:4318/v1/traces`), when enabled. */
  readonly url?: string;
  /** Sends the spans ended so far (tests, before reading a receiver). */
  flush(): Promise<void>;
  /** Sends what is left, stops the exporter and unregisters the global provider, context manager and propagator. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * The OTLP/HTTP traces URL of `env` (OpenTelemetry's exporter variables): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; undefined when neither is set or
 * `OTEL_SDK_DISABLED` is `true`.
 */
export function otlpTracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

let active: Tracing | undefined;

/**
 * Starts OpenTelemetry tracing for this process when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set (docs/operating.md → Traces): a
 * `NodeTracerProvider` registered globally (AsyncLocalStorage context, W3C `traceparent` and
 * baggage propagation) whose spans a `BatchSpanProcessor` sends with the OTLP/HTTP exporter of
 * `@opentelemetry/exporter-trace-otlp-http` (JSON encoding). The resource is `service.name` =
 * `OTEL_SERVICE_NAME` or `serviceName`, plus `OTEL_RESOURCE_ATTRIBUTES`; the SDK reads its other
 * standard variables itself (`OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`).
 *
 * Unset: nothing starts and this returns a handle whose calls do nothing; the spans of the code
 * (`@opentelemetry/api` only) then go to the API's no-op tracer. One tracing per process: a second
 * start before {@link Tracing.shutdown} throws.
 */
export function startTracing(o: TracingOptions): Tracing {
  const env = o.env ?? process.env;
  const url = otlpTracesUrl(env);
  if (!url) return { enabled: false, flush: async () => undefined, shutdown: async () => undefined };
  if (active) throw new Error('tracing is already started in this process');
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || o.serviceName;
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': serviceName }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))] });
  provider.register();
  o.log?.info({ url, service_name: serviceName }, 'tracing: OTLP/HTTP exporter started');
  let stopped: Promise<void> | undefined;
  const tracing: Tracing = {
    enabled: true,
    url,
    flush: () => provider.forceFlush().catch((e: unknown) => o.log?.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'tracing: export failed')),
    shutdown: () =>
      (stopped ??= provider
        .shutdown()
        .catch((e: unknown) => o.log?.warn({ err: String((e as Error)?.message ?? e).slice(0, 200) }, 'tracing: export failed at shutdown'))
        .finally(() => {
          trace.disable();
          context.disable();
          propagation.disable();
          active = undefined;
        })),
  };
  active = tracing;
  return tracing;
}

/** The instrumentation scope of the request spans. */
const SCOPE = '@acg/observability';

/**
 * Runs `handle` for one request of a node:http server inside a SERVER span (OpenTelemetry HTTP
 * semantic conventions), the parent of every span the handler starts (paywall, settle, execute,
 * store...). The span continues an incoming W3C `traceparent`; when the answer ends (or the client
 * leaves) it is named `METHOD route` (the template of {@link routeOf}), gets
 * `http.request.method`, `http.route`, `url.path`, `http.response.status_code` (499 when the
 * client left first), `acg.request_id`, and error status for 5xx. Without tracing (no provider
 * registered) the API's no-op span is not recording and `handle` runs as it is.
 */
export function traceRequest<T>(req: IncomingMessage, res: ServerResponse, handle: () => T): T {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method ?? 'GET';
  const span = trace.getTracer(SCOPE).startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording() && !isSpanContextValid(span.spanContext())) return handle();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  span.setAttributes({ 'http.request.method': method, 'url.path': q === -1 ? url : url.slice(0, q) });
  res.once('close', () => {
    const route = routeOf(req);
    const status = res.writableEnded ? res.statusCode : 499;
    span.updateName(`${method} ${route}`);
    const id = (req as IncomingMessage & { id?: string }).id; // set by createRequestObserver
    span.setAttributes({ 'http.route': route, 'http.response.status_code': status, ...(id !== undefined ? { 'acg.request_id': id } : {}) });
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  return context.with(trace.setSpan(parent, span), handle);
}
