import { createLogger, startTracing } from '@acg/observability';
import type { Logger } from 'pino';
import { assertNoProblems } from './env.js';
import { type PortCheck, portProblems, redisTargetProblem } from './preflight.js';
import { guardProcess } from './process.js';

/** A started service: what {@link runService} stops on SIGINT, SIGTERM or an uncaught exception. */
export interface RunningService {
  close(): Promise<unknown>;
}

/** What an entry's environment gives {@link runService} (README "Entry points"). */
export interface ServiceSetup<S extends RunningService> {
  /** The checked configuration: its Redis target is preflighted, its log level and LOG_PRETTY build the logger. */
  config: { redisUrl: string; redisClusterNodes?: readonly string[]; logLevel?: string; logPretty?: boolean };
  /** The ports the service will listen on, checked free before it starts (port 0 skipped). */
  ports: readonly PortCheck[];
  /** Starts the service with the entry's logger. */
  start(log: Logger): Promise<S>;
  /** The one line printed on stdout once it is up (without the newline). */
  banner(service: S): string;
}

/**
 * The startup and shutdown every standalone entry shares (`apps/{gateway,builder,worker}/src/main.ts`;
 * packages/env/README.md "Entry points"):
 * 1. `configure(process.env)` reads and checks the environment (throws `EnvError` with every problem);
 * 2. the Redis target and `ports` are preflighted and all problems reported at once;
 * 3. the logger (`service` = `name`) and OpenTelemetry tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) start;
 * 4. `start(log)` runs and `banner` is printed on stdout;
 * 5. SIGINT, SIGTERM and an uncaught exception ({@link guardProcess}) close the service, shut tracing down and exit.
 *
 * Any failure before the service is up prints `<name> failed to start: <message>` on stderr and exits 1.
 *
 * @param name - The service name: `gateway`, `builder`, `worker`.
 * @param configure - Reads the environment; returns the {@link ServiceSetup}.
 */
export async function runService<S extends RunningService>(name: string, configure: (env: NodeJS.ProcessEnv) => ServiceSetup<S>): Promise<void> {
  try {
    // every variable is checked before anything starts; all problems are reported at once
    const setup = configure(process.env);
    const redis = await redisTargetProblem(setup.config);
    const ports = await portProblems(setup.ports);
    assertNoProblems([...ports, ...(redis ? [redis] : [])]);
    const log = createLogger({ service: name, level: setup.config.logLevel, pretty: setup.config.logPretty });
    // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operating.md → Traces); nothing otherwise
    const tracing = startTracing({ serviceName: name, log });
    const service = await setup.start(log);
    process.stdout.write(`${setup.banner(service)}\n`);
    const stop = async () => {
      await service.close();
      await tracing.shutdown();
      process.exit(0);
    };
    // an unhandled rejection is logged and the process keeps serving; an uncaught exception stops it in order
    guardProcess(log, () => stop());
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
  } catch (e) {
    process.stderr.write(`${name} failed to start: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
