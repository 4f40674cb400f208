import { waitForRedis, type RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { StoredJob } from './types.js';

/**
 * Job records in Redis (JSON, kept 30 days after the last update). The job runner is the only
 * writer once a job is queued (BullMQ runs one processor per job at a time); cancellation is a
 * separate flag key, so a cancel never races a runner write.
 */
export class JobStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly ttlSeconds = 30 * 24 * 3600,
  ) {}

  private key(id: string) {
    return `${this.keys.prefix}job:${id}`;
  }
  private cancelKey(id: string) {
    return `${this.keys.prefix}job:${id}:cancel`;
  }

  /** Creates the record only if absent (a replayed creation never overwrites progress). */
  async create(job: StoredJob): Promise<boolean> {
    return (await this.redis.set(this.key(job.job_id), JSON.stringify(job), 'EX', this.ttlSeconds, 'NX')) === 'OK';
  }

  async save(job: StoredJob): Promise<void> {
    job.updated_at = new Date().toISOString();
    await this.redis.set(this.key(job.job_id), JSON.stringify(job), 'EX', this.ttlSeconds);
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const raw = await this.redis.get(this.key(id));
    return raw ? (JSON.parse(raw) as StoredJob) : undefined;
  }

  /** Resolves once Redis answers again; rejects after `toleranceMs` without an answer. */
  waitUntilAvailable(toleranceMs: number): Promise<void> {
    return waitForRedis(this.redis, toleranceMs);
  }

  async requestCancel(id: string): Promise<void> {
    await this.redis.set(this.cancelKey(id), new Date().toISOString(), 'EX', this.ttlSeconds);
  }

  async cancelRequested(id: string): Promise<boolean> {
    return (await this.redis.exists(this.cancelKey(id))) === 1;
  }
}
