/**
 * Standalone builder entry (`node dist/builder.js`): configuration from the environment only
 * (REDIS_URL, ETHEREUM_RPC_URL, RELAY_URLS, BUILDER_BLS_SECRET_KEY, BUILDER_PORT, ...). Many builder
 * intakes can share one Redis (pool, rate limits and counters live there).
 */
import { assertNoProblems, guardProcess, portProblems, redisProblem } from '@acg/env';
import { pino } from 'pino';
import { builderConfigFromEnv } from './config.js';
import { startBuilder } from './app.js';

try {
  // every variable is checked before anything starts; all problems are reported at once
  const config = builderConfigFromEnv(process.env);
  const redis = await redisProblem('REDIS_URL', config.redisUrl);
  assertNoProblems([...(await portProblems([{ name: 'BUILDER_PORT', port: config.port, host: config.host }])), ...(redis ? [redis] : [])]);
  const builder = await startBuilder(config);
  process.stdout.write(`builder ${builder.rpcUrl} (BLS ${builder.blsPublicKey})\n`);
  const stop = async () => {
    await builder.close();
    process.exit(0);
  };
  // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
  guardProcess(pino({ level: config.logLevel, base: { service: 'builder' } }), () => stop());
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`builder failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
