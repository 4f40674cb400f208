import { describe, expect, it } from 'vitest';
import { LATENCY_BUCKET_CAP, LATENCY_BUCKET_MS, LATENCY_RETENTION_SECONDS, LatencySeries, nearestRank } from '../src/index.js';
import { BACKENDS, useBackend } from './backends.js';

// per-minute latency buckets on a private redis-server and on a private 3-master Redis Cluster
// (hash-tagged prefix: a writer's MULTI with its own keys and the bucket stays in one slot)
describe.each(BACKENDS)('LatencySeries on %s', (backend) => {
  const db = useBackend(backend, 'latseries');
  const { keys } = db;

  // a fixed minute, far from now, so the test never straddles a real minute boundary
  const minute = 29_000_000;
  const at = (m: number, s = 0) => m * LATENCY_BUCKET_MS + s * 1000;

  it('stores samples per minute and reads the last N minutes back, oldest first, with percentiles and failures', async () => {
    const series = new LatencySeries(db.redis, keys);
    await series.add('x.a', 10, true, at(minute - 2, 5));
    await series.add('x.a', 30, false, at(minute - 2, 50));
    await series.add('x.a', 20, true, at(minute - 2, 59));
    await series.add('x.a', 7.04, true, at(minute, 1));
    // a writer's own MULTI (as Telemetry and the delivery worker do)
    const own = keys.latency('x.a');
    await LatencySeries.append(db.redis.multi().lpush(own, 'mine'), keys, 'x.a', 99, true, at(minute, 2)).exec();
    expect(await db.redis.lrange(own, 0, -1)).toEqual(['mine']);

    const read = await series.read(['x.a', 'x.none'], 3, at(minute, 30));
    expect(read['x.a'].points).toEqual([
      { t: at(minute - 2) / 1000, p50: 20, p99: 30, samples: 3, errors: 1 },
      { t: at(minute - 1) / 1000, p50: null, p99: null, samples: 0, errors: 0 },
      { t: at(minute) / 1000, p50: 7, p99: 99, samples: 2, errors: 0 },
    ]);
    expect(read['x.a'].window).toEqual({ p50: 20, p99: 99, samples: 5 });
    expect(read['x.none'].window).toEqual({ p50: null, p99: null, samples: 0 });
    expect(read['x.none'].points).toHaveLength(3);
    // a minute outside the window is not read
    expect((await series.read(['x.a'], 2, at(minute, 30)))['x.a'].window.samples).toBe(2);
  });

  it('expires each bucket after the retention and caps it at the newest samples', async () => {
    const series = new LatencySeries(db.redis, keys);
    await series.add('x.ttl', 1, true, at(minute));
    const ttl = await db.redis.ttl(keys.latencyMinute('x.ttl', minute));
    expect(ttl).toBeGreaterThan(LATENCY_RETENTION_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(LATENCY_RETENTION_SECONDS);
    expect(LATENCY_RETENTION_SECONDS).toBeGreaterThanOrEqual(3600);

    const multi = db.redis.multi();
    for (let i = 0; i < LATENCY_BUCKET_CAP + 5; i++) LatencySeries.append(multi, keys, 'x.cap', i, true, at(minute));
    await multi.exec();
    const { points } = (await series.read(['x.cap'], 1, at(minute, 59)))['x.cap'];
    expect(points[0].samples).toBe(LATENCY_BUCKET_CAP);
    // the oldest five were dropped
    expect(await db.redis.lindex(keys.latencyMinute('x.cap', minute), -1)).toBe('5.0:1');
  });
});

describe('nearestRank', () => {
  it('is the nearest-rank percentile the health document uses', () => {
    expect(nearestRank([])).toEqual({ p50: null, p99: null, samples: 0 });
    expect(nearestRank([5])).toEqual({ p50: 5, p99: 5, samples: 1 });
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(nearestRank(hundred)).toEqual({ p50: 50, p99: 99, samples: 100 });
  });
});
