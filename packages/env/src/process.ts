/** The logger shape `guardProcess` needs (pino's `Logger` fits). */
export interface ProcessLog {
  error(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

/**
 * Process-level rules every entry point shares (the gateway, builder and worker `main.ts`, and
 * `npm start`): a promise rejection nobody handled (e.g. a library's unawaited background call
 * failing while a node is down) is logged and the process keeps serving, instead of Node 20's
 * default of exiting, which would take every in-flight request and, under `npm start`, every
 * service down. An uncaught exception leaves the process in an unknown state: it is logged and
 * `onFatal` runs (the entry's orderly stop), then the process exits 1.
 *
 * @param log - Where to log (messages never include more than the first 300 characters of an error).
 * @param onFatal - Orderly shutdown for an uncaught exception; default: exit 1 at once.
 */
export function guardProcess(log: ProcessLog, onFatal: () => unknown = () => process.exit(1)): void {
  process.on('unhandledRejection', (reason) => {
    log.error({ err: describe(reason) }, 'unhandled promise rejection (ignored; the process keeps serving)');
  });
  process.on('uncaughtException', (err) => {
    log.fatal({ err: describe(err) }, 'uncaught exception: stopping');
    void Promise.resolve()
      .then(onFatal)
      .finally(() => process.exit(1));
  });
}

function describe(e: unknown): string {
  return String((e as Error)?.stack ?? (e as Error)?.message ?? e).slice(0, 300);
}
