/**
 * Standalone builder entry (`node dist/builder.js`): configuration from the environment only
 * (REDIS_URL, ETHEREUM_RPC_URL, RELAY_URLS, BUILDER_BLS_SECRET_KEY, BUILDER_PORT, ...). Many builder
 * intakes can share one Redis (pool, rate limits and counters live there).
 */
import { builderConfigFromEnv } from './config.js';
import { startBuilder } from './app.js';

try {
  const builder = await startBuilder(builderConfigFromEnv(process.env));
  process.stdout.write(`builder ${builder.rpcUrl} (BLS ${builder.blsPublicKey})\n`);
  const stop = async () => {
    await builder.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`builder failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
