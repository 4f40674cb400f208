import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

export type { Attributes, Span } from '@opentelemetry/api';

/**
 * Runs `fn` inside an active span `name` of the instrumentation scope `scope` (e.g.
 * `@acg/payments`; docs/operating.md → Traces), through `@opentelemetry/api` only: without a
 * registered provider the API's no-op tracer makes this a plain call. A throw marks the span as an
 * error (its message, cut to 200 characters) and is rethrown; the span always ends. `root`: start
 * a new trace whatever the active context holds (the worker's `job.step`).
 */
export function inSpan<T>(scope: string, name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: { root?: boolean } = {}): Promise<T> {
  // the tracer is looked up per span (a cached one would outlive a provider shut down and started again)
  return trace.getTracer(scope).startActiveSpan(name, { attributes, root: options.root }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String((e as Error)?.message ?? e).slice(0, 200) });
      throw e;
    } finally {
      span.end();
    }
  });
}
