import { BuilderStats, readBuilderHealth } from '@acg/bundles';
import { HealthDocument } from '@acg/schemas';
import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';

/**
 * The health document's `builder` part comes from the builder's live counters in Redis
 * (`readBuilderHealth` of @acg/bundles): what a builder process writes under the same key prefix
 * shows on the gateway without the gateway importing the builder.
 */
const t = useTestGateway();

const health = async () => {
  t.gateway.services.discovery.invalidate();
  const res = await fetch(`${t.url}/status/health`);
  expect(res.status).toBe(200);
  return HealthDocument.parse(await res.json());
};

describe('/status/health builder part', () => {
  it('is null until a builder registers, then shows its counters, its relays (accepted, rejected by reason, latency) and its sealer', async () => {
    expect((await health()).builder).toBeNull();
    const { redis, keys } = t.gateway.services;
    const stats = new BuilderStats(redis, keys);
    const sealer = { ok: true, client: 'Geth/v1.15.11-stable', zero_state_root: false, checked_at: '2026-01-01T00:00:00.000Z' };
    await stats.register(
      `0x${'a'.repeat(96)}`,
      [
        { name: 'flashbots', url: 'http://127.0.0.1:1/flashbots' },
        { name: 'ultrasound', url: 'http://127.0.0.1:1/ultrasound' },
      ],
      sealer,
    );
    await stats.recordSubmission('flashbots', true, new Date('2026-01-01T00:00:00Z'), { latencyMs: 40 });
    await stats.recordSubmission('flashbots', true, new Date('2026-01-01T00:00:00Z'), { latencyMs: 10 });
    await stats.recordSubmission('ultrasound', false, new Date('2026-01-01T00:00:01Z'), { latencyMs: 7, reason: 'invalid signature' });
    await stats.recordSubmission('ultrasound', false, new Date('2026-01-01T00:00:01Z'), { reason: 'timeout' });
    await stats.recordSubmission('ultrasound', false, new Date('2026-01-01T00:00:01Z'), { latencyMs: 9, reason: 'invalid signature' });
    const doc = await health();
    expect(doc.builder).toEqual(await readBuilderHealth(redis, keys));
    expect(doc.builder).toMatchObject({
      submits: 5,
      accepted: 2,
      bls_public_key: `0x${'a'.repeat(96)}`,
      sealer,
      relays: [
        {
          name: 'flashbots',
          status: 'up',
          submits: 2,
          accepted: 2,
          rejected: 0,
          rejections: [],
          latency_ms: { p50: 10, p99: 40, samples: 2 },
          last_submit_at: '2026-01-01T00:00:00.000Z',
        },
        {
          name: 'ultrasound',
          status: 'down',
          submits: 3,
          accepted: 0,
          rejected: 3,
          rejections: [
            { reason: 'invalid signature', count: 2 },
            { reason: 'timeout', count: 1 },
          ],
          latency_ms: { p50: 7, p99: 9, samples: 2 },
          last_submit_at: '2026-01-01T00:00:01.000Z',
        },
      ],
    });
  });
});
