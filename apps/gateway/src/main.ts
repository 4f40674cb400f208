/**
 * Standalone gateway entry (`node dist/gateway.js`): configuration from the environment only
 * (PAYMENT_RPC_URL, REDIS_URL, PAY_TO_ADDRESS, FACILITATOR_PRIVATE_KEY or FACILITATOR_URL, ...),
 * no embedded dev chain. Many of these run behind one Redis to scale out (docs/architecture.md "Shape").
 */
import { assertNoProblems, guardProcess, portProblems, redisTargetProblem } from '@acg/env';
import { createLogger, startTracing } from '@acg/observability';
import { configFromEnv } from '@acg/config';
import { startGateway } from './app.js';

try {
  // every variable is checked before anything starts; all problems are reported at once
  const config = configFromEnv(process.env);
  const redis = await redisTargetProblem(config);
  assertNoProblems([...(await portProblems([{ name: 'GATEWAY_PORT', port: config.port, host: config.host }])), ...(redis ? [redis] : [])]);
  // refunds, jobs and watchers run in the worker processes (`node dist/worker.js`): run at least one
  const log = createLogger({ service: 'gateway', level: config.logLevel, pretty: config.logPretty });
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (README "Operating" → Traces); nothing otherwise
  const tracing = startTracing({ serviceName: 'gateway', log });
  const gateway = await startGateway(config, { refundWorker: false, log });
  process.stdout.write(`gateway ${gateway.url}\n`);
  const stop = async () => {
    await gateway.close();
    await tracing.shutdown();
    process.exit(0);
  };
  // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
  guardProcess(log, () => stop());
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`gateway failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
