import { startTestGateway, type TestGateway } from '../../gateway/test/harness.js';
import { startWorker, type RunningWorker, type StartWorkerOptions } from '../src/index.js';

/**
 * A test gateway (anvil, private Redis; its refunds are sent by the gateway's own refund worker)
 * and a worker running its jobs with `jobs` (backoff, hooks such as `stepGates().beforeStep`),
 * without the worker's refund or wallet-monitor workers. `close()` stops the worker, then the gateway.
 */
export async function startGatewayWithJobs(jobs: StartWorkerOptions['jobs']): Promise<{ t: TestGateway; worker: RunningWorker; close(): Promise<void> }> {
  const t = await startTestGateway();
  const worker = await startWorker(t.config, { refunds: false, walletMonitor: false, jobs });
  return {
    t,
    worker,
    async close() {
      await worker.close();
      await t.close();
    },
  };
}
