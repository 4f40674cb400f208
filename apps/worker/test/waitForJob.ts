import type { LocalAccount } from 'viem';
import { readJob } from '../../gateway/test/x402.js';

/**
 * Polls `GET {baseUrl}/api/v1/jobs/{jobId}` as `payer` (only the payer reads a job) every 100 ms
 * until `until` holds for the job (its JSON body) and returns that job; throws `job … did not reach
 * the expected state` after about 60 s (600 reads).
 */
export async function waitForJob(baseUrl: string, jobId: string, payer: LocalAccount, until: (job: any) => boolean): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const job = await readJob(baseUrl, jobId, payer);
    if (until(job)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${jobId} did not reach the expected state`);
}
