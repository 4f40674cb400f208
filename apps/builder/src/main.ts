/**
 * Standalone builder entry (`node dist/builder.js`): configuration from the environment only
 * (REDIS_URL, ETHEREUM_RPC_URL, RELAY_URLS, BUILDER_BLS_SECRET_KEY, BUILDER_PORT, ...). Many builder
 * intakes can share one Redis (pool, rate limits and counters live there).
 */
import { assertNoProblems, guardProcess, portProblems, redisTargetProblem } from '@acg/env';
import { createLogger, startTracing } from '@acg/observability';
import { builderConfigFromEnv } from './config.js';
import { startBuilder } from './app.js';

try {
  // every variable is checked before anything starts; all problems are reported at once
  const config = builderConfigFromEnv(process.env);
  const redis = await redisTargetProblem(config);
  assertNoProblems([...(await portProblems([{ name: 'BUILDER_PORT', port: config.port, host: config.host }])), ...(redis ? [redis] : [])]);
  const log = createLogger({ service: 'builder', level: config.logLevel, pretty: config.logPretty });
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (README "Operating" → Traces); nothing otherwise
  const tracing = startTracing({ serviceName: 'builder', log });
  const builder = await startBuilder(config, { log });
  process.stdout.write(`builder ${builder.rpcUrl} (BLS ${builder.blsPublicKey})\n`);
  const stop = async () => {
    await builder.close();
    await tracing.shutdown();
    process.exit(0);
  };
  // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
  guardProcess(log, () => stop());
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`builder failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
