/** Standalone worker entry (`node dist/worker.js`): configuration from the environment, like the gateway. */
import { assertNoProblems, guardProcess, portProblems, redisTargetProblem } from '@acg/env';
import { createLogger, startTracing } from '@acg/observability';
import { configFromEnv } from '@acg/config';
import { startWorker, workerOptionsFromEnv } from './worker.js';

try {
  // every variable is checked before anything starts; all problems are reported at once
  const config = configFromEnv(process.env);
  const fromEnv = workerOptionsFromEnv(process.env, config);
  const redis = await redisTargetProblem(config);
  const { workerPort, workerHost } = config.metrics;
  const ports = workerPort ? await portProblems([{ name: 'WORKER_METRICS_PORT', port: workerPort, host: workerHost }]) : [];
  assertNoProblems([...ports, ...(redis ? [redis] : [])]);
  const log = createLogger({ service: 'worker', level: config.logLevel, pretty: config.logPretty });
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (README "Operating" → Traces); nothing otherwise
  const tracing = startTracing({ serviceName: 'worker', log });
  const worker = await startWorker(config, { ...fromEnv, log });
  process.stdout.write(`worker up: ${worker.workers.map((w) => w.name).join(', ')}${worker.metrics.server ? `; metrics ${worker.metrics.server.url}` : ''}\n`);
  const stop = async () => {
    await worker.close();
    await tracing.shutdown();
    process.exit(0);
  };
  // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
  guardProcess(log, () => stop());
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`worker failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
