/**
 * Standalone worker entry (`node dist/worker.js`): configuration from the environment, like the gateway.
 * Startup and shutdown: `runService` (packages/env/README.md "Entry points").
 */
import { runService } from '@acg/env';
import { configFromEnv } from '@acg/config';
import { startWorker, workerOptionsFromEnv } from './worker.js';

await runService('worker', (env) => {
  const config = configFromEnv(env);
  const fromEnv = workerOptionsFromEnv(env, config);
  const { workerPort, workerHost } = config.metrics;
  return {
    config,
    ports: workerPort ? [{ name: 'WORKER_METRICS_PORT', port: workerPort, host: workerHost }] : [],
    start: (log) => startWorker(config, { ...fromEnv, log }),
    banner: (worker) => `worker up: ${worker.workers.map((w) => w.name).join(', ')}${worker.metrics.server ? `; metrics ${worker.metrics.server.url}` : ''}`,
  };
});
