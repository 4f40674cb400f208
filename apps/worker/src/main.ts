/** Standalone worker entry (`node dist/worker.js`): configuration from the environment, like the gateway. */
import { assertNoProblems, guardProcess, redisProblem } from '@acg/env';
import { pino } from 'pino';
import { configFromEnv } from '@acg/config';
import { liquidationsFromEnv } from './liquidationsConfig.js';
import { paymentRecoveryFromEnv, startWorker } from './worker.js';

try {
  // every variable is checked before anything starts; all problems are reported at once
  const config = configFromEnv(process.env);
  const paymentRecovery = paymentRecoveryFromEnv(process.env);
  const redis = await redisProblem('REDIS_URL', config.redisUrl);
  assertNoProblems(redis ? [redis] : []);
  const worker = await startWorker(config, { liquidations: liquidationsFromEnv(process.env, config), paymentRecovery });
  process.stdout.write(`worker up: ${worker.workers.map((w) => w.name).join(', ')}\n`);
  const stop = async () => {
    await worker.close();
    process.exit(0);
  };
  // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
  guardProcess(pino({ level: config.logLevel, base: { service: 'worker' } }), () => stop());
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
} catch (e) {
  process.stderr.write(`worker failed to start: ${(e as Error).message}\n`);
  process.exit(1);
}
