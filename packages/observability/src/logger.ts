import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';
import { lineRedactor, REDACT_PATHS, REDACTED, secretValuesFromEnv } from './redact.js';

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** The `service` field of every line: `gateway`, `builder`, `worker`, `launcher`. */
  service: string;
  /** pino level (LOG_LEVEL; default `info`). */
  level?: string;
  /** Readable one-line output for development (LOG_PRETTY=1) instead of JSON lines. */
  pretty?: boolean;
  /** Where lines go (tests); default stdout. With `pretty`, the readable lines go there. */
  destination?: DestinationStream;
  /**
   * Secret values masked in every line (`[redacted]`), besides those of the environment's
   * `*_KEY`/`*_SECRET`/`*_TOKEN`/`*PASSWORD*` variables ({@link secretValuesFromEnv}), e.g. keys
   * given in code rather than in the environment.
   */
  secrets?: readonly string[];
}

/**
 * The service logger (pino): JSON lines on stdout, written asynchronously in batches
 * ({@link asyncLogDestination}), with `service` as the
 * only base field (no pid or hostname), or with `pretty` readable lines (pino-pretty, in this thread, synchronous so they keep
 * their order with the launcher's own prints): `12:00:00.123 INFO gateway/paywall: message {fields}`.
 *
 * Secrets (docs/operating.md → Logs): fields named like secrets are censored (pino `redact`,
 * `REDACT_PATHS`), and each written line passes through `lineRedactor`: URLs keep scheme, host and
 * port only, and the values of secret environment variables (and `secrets`) become `[redacted]`.
 * An `err` field is serialized with its class (`type`), message, stack and causes.
 *
 * Key rule (no repeated keys in a line; pino repeats a key bound twice): the app binds `module` once
 * (`log.child({ module: 'paywall' })`); a package binds `component` for its own parts
 * (`component: 'watcher'`) and binds a field such as `chain` in one place only, then leaves it out
 * of each line.
 */
export function createLogger(o: CreateLoggerOptions): Logger {
  const secrets = [...new Set([...secretValuesFromEnv(), ...(o.secrets ?? [])].filter((s) => s.length >= 8))];
  const options: LoggerOptions = {
    level: o.level ?? 'info',
    base: { service: o.service },
    // fields named like secrets are censored; then every serialized line loses URL paths,
    // queries and credentials and every secret value (redact.ts)
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    hooks: { streamWrite: lineRedactor(secrets) },
    // an error logged as `err` keeps its class (`type`), message, stack and causes
    serializers: { err: pino.stdSerializers.errWithCause },
  };
  if (o.pretty) return pino(options, prettyDestination(o.destination));
  if (o.destination) return pino(options, o.destination);
  return pino(options, asyncLogDestination(1));
}

/**
 * How the service loggers write (sonic-boom through `pino.destination`): asynchronously, so a line
 * never blocks the event loop on a slow pipe, and batched: lines collect in memory until 4 KiB are
 * buffered (`minLength`, pino's documented setting for asynchronous logging) or 100 ms have passed
 * (`periodicFlush`), then go out in one `write`. At one line per request that is one write per
 * ~25 requests instead of one per request: on `GET /registry` it measured 36 → 30 µs of CPU per
 * request (bench/README.md). A line reaches the output at most ~100 ms late; pino writes what is
 * buffered when the process exits, also on an uncaught exception, so only a SIGKILL (or power loss)
 * loses up to 100 ms of lines.
 */
export const ASYNC_LOG_BATCH = { minLength: 4096, periodicFlush: 100 } as const;

/** The destination {@link createLogger} writes to: file descriptor or path `dest`, asynchronous and batched ({@link ASYNC_LOG_BATCH}). */
export function asyncLogDestination(dest: number | string): ReturnType<typeof pino.destination> {
  return pino.destination({ dest, sync: false, ...ASYNC_LOG_BATCH });
}

/**
 * pino-pretty: one line per entry, local time, `service/module/component:` before the message, the
 * other fields inline; colours when writing to a terminal. `destination` defaults to stdout.
 */
export function prettyDestination(destination?: DestinationStream | NodeJS.WritableStream): DestinationStream {
  return pinoPretty({
    sync: true,
    destination: destination ?? 1,
    colorize: destination ? false : Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,service,module,component',
    messageFormat: (log, messageKey) => {
      const who = [log.service, log.module, log.component].filter((x) => typeof x === 'string' && x !== '').join('/');
      return `${who ? `${who}: ` : ''}${String(log[messageKey] ?? '')}`;
    },
  });
}

/**
 * LOG_PRETTY: `1`/`true` on, `0`/`false` off, unset or empty → `fallback` (`npm start` passes true,
 * the standalone entries false). Any other value is refused by `@acg/env` before this runs.
 */
export function logPrettyFromEnv(env: NodeJS.ProcessEnv, fallback = false): boolean {
  const v = env.LOG_PRETTY?.trim().toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  return fallback;
}
