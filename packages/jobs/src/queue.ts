import { Queue } from 'bullmq';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';

export const JOB_QUEUE = 'jobs';

/** The BullMQ queue of jobs; one BullMQ job per gateway job, id = the job id (`job_...`). */
export class JobQueue {
  private readonly queue: Queue;
  constructor(keys: RedisKeys, connection: Redis) {
    this.queue = new Queue(JOB_QUEUE, { connection, prefix: keys.bullPrefix() });
    // a Redis outage surfaces as the failing enqueue (503 to the caller); the event itself is noise
    this.queue.on('error', () => undefined);
  }
  /** Enqueues `jobId` once (a second call for the same id is a no-op). */
  async enqueue(jobId: string): Promise<void> {
    await this.queue.add(
      'job',
      { job_id: jobId },
      { jobId, removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: false, attempts: 1000, backoff: { type: 'fixed', delay: 5_000 } },
    );
  }
  /** BullMQ job counts of the job queue by state (`Queue.getJobCounts`), e.g. for queue-depth metrics. */
  getJobCounts(...types: string[]): Promise<Record<string, number>> {
    return this.queue.getJobCounts(...(types as Parameters<Queue['getJobCounts']>));
  }
  close(): Promise<void> {
    return this.queue.close();
  }
}
