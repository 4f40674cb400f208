/**
 * Standalone builder entry (`node dist/builder.js`): configuration from the environment only
 * (REDIS_URL, ETHEREUM_RPC_URL, RELAY_URLS, BUILDER_BLS_SECRET_KEY, BUILDER_PORT, ...). Many builder
 * intakes can share one Redis (pool, rate limits and counters live there). Startup and shutdown:
 * `runService` (packages/env/README.md "Entry points").
 */
import { runService } from '@acg/env';
import { builderConfigFromEnv } from './config.js';
import { startBuilder } from './app.js';

await runService('builder', (env) => {
  const config = builderConfigFromEnv(env);
  return {
    config,
    ports: [{ name: 'BUILDER_PORT', port: config.port, host: config.host }],
    start: (log) => startBuilder(config, { log }),
    banner: (builder) => `builder ${builder.rpcUrl} (BLS ${builder.blsPublicKey})`,
  };
});
