import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSpan } from '../src/index.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

describe('inSpan', () => {
  it('records a span of the scope with its attributes, nested under the active one unless root', async () => {
    exporter.reset();
    const out = await inSpan('@acg/test', 'outer', { 'acg.k': 'v' }, async () => {
      await inSpan('@acg/test', 'inner', {}, async () => 1);
      await inSpan('@acg/other', 'detached', {}, async () => 2, { root: true });
      return 'done';
    });
    expect(out).toBe('done');
    const spans = exporter.getFinishedSpans();
    const byName = Object.fromEntries(spans.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['detached', 'inner', 'outer']);
    expect(byName.outer.instrumentationScope.name).toBe('@acg/test');
    expect(byName.outer.attributes).toEqual({ 'acg.k': 'v' });
    expect(byName.inner.parentSpanContext?.spanId).toBe(byName.outer.spanContext().spanId);
    expect(byName.detached.parentSpanContext).toBeUndefined();
    expect(byName.detached.spanContext().traceId).not.toBe(byName.outer.spanContext().traceId);
  });

  it('marks a throw as an error with its message cut to 200 characters, rethrows it, and ends the span', async () => {
    exporter.reset();
    await expect(inSpan('@acg/test', 'fails', {}, async () => Promise.reject(new Error('x'.repeat(300))))).rejects.toThrow('x');
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('fails');
    expect(span.status).toEqual({ code: 2, message: 'x'.repeat(200) });
  });
});
