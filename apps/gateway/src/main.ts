/**
 * Standalone gateway entry (`node dist/gateway.js`): configuration from the environment only
 * (PAYMENT_RPC_URL, REDIS_URL, PAY_TO_ADDRESS, FACILITATOR_PRIVATE_KEY or FACILITATOR_URL, ...),
 * no embedded dev chain. Many of these run behind one Redis to scale out (docs/architecture.md "Shape").
 * Startup and shutdown: `runService` (packages/env/README.md "Entry points").
 */
import { runService } from '@acg/env';
import { configFromEnv } from '@acg/config';
import { startGateway } from './app.js';

await runService('gateway', (env) => {
  const config = configFromEnv(env);
  return {
    config,
    ports: [{ name: 'GATEWAY_PORT', port: config.port, host: config.host }],
    // refunds, jobs and watchers run in the worker processes (`node dist/worker.js`): run at least one
    start: (log) => startGateway(config, { refundWorker: false, log }),
    banner: (gateway) => `gateway ${gateway.url}`,
  };
});
