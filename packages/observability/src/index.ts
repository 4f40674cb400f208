/**
 * @acg/observability: what an operator sees of a service (docs/decisions.md "Operations"). Prometheus metrics
 * with prom-client (one `Registry` per service instance, the metric families, the `GET /metrics`
 * handler with the optional METRICS_TOKEN, the worker's metrics listener), the request log line
 * and `X-Request-Id` (one pino line per request, pino-http's shape), the service logger (LOG_LEVEL,
 * LOG_PRETTY), and OpenTelemetry tracing (`startTracing` with OTEL_EXPORTER_OTLP_ENDPOINT, the
 * request span `traceRequest`).
 */
export * from './endpoint.js';
export * from './logger.js';
export * from './logKeys.js';
export * from './redact.js';
export * from './metrics.js';
export * from './requestLog.js';
export * from './tracing.js';
export type { Registry } from 'prom-client';
