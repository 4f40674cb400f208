/**
 * `npm start`'s example provider (apps/example-provider) as a child process: spawned, never
 * imported (apps import no other app), with a Node IPC channel over which it reports its steps
 * (`listening`, `registered`, `onboarding_retry`, `onboarding_failed`; see its `src/main.ts`).
 */
import { spawnManaged, type ManagedProcess } from '@acg/devnet';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A message from the example provider (its `src/main.ts` documents the shapes). */
export type ExampleProviderMessage =
  | { event: 'listening'; url: string; address: string; capabilities: string[] }
  | { event: 'registered'; provider_id: string; created: boolean; capabilities: { id: string; status: string }[] }
  | { event: 'onboarding_retry' | 'onboarding_failed'; status?: number; detail: string; attempt: number };

/** The running example provider. */
export interface ExampleProvider {
  process: ManagedProcess;
  /** Its endpoint, e.g. `http://127.0.0.1:8090`. */
  url: string;
  /** Its wallet (payout address, result signer). */
  address: string;
  /** Resolves with the first onboarding outcome (registered, or a failed attempt), or undefined after `timeoutMs` or when the process exits. */
  firstOutcome(timeoutMs: number): Promise<Exclude<ExampleProviderMessage, { event: 'listening' }> | undefined>;
  /** Calls `listener` with every later message. */
  onMessage(listener: (m: ExampleProviderMessage) => void): void;
  stop(): Promise<void>;
}

/** Options of {@link spawnExampleProvider}: the variables its `main.ts` reads. */
export interface SpawnExampleProviderOptions {
  gatewayUrl: string;
  privateKey: string;
  port: number;
  host?: string;
  rpcUrls: { base?: string; ethereum?: string; arbitrum?: string };
  logLevel: string;
  /** Readable one-line logs (pino-pretty) like the launcher's own (`LOG_PRETTY`); false: JSON lines. */
  pretty?: boolean;
  /** Catalog name (`EXAMPLE_PROVIDER_NAME`); unset: the provider's default, `Example Provider`. */
  name?: string;
  /** Capability ids to join instead of creating contracts (`EXAMPLE_PROVIDER_JOIN`). */
  join?: string[];
  /** Price of every offer, decimal USDC (`EXAMPLE_PROVIDER_PRICE_USDC`). */
  priceUsdc?: string;
  /** Extra ms before each answer (`EXAMPLE_PROVIDER_DELAY_MS`). */
  delayMs?: number;
  /** Prefix of its forwarded output (default `example-provider`). */
  label?: string;
  /** ms to wait for `listening` (default 30000). */
  startTimeoutMs?: number;
}

/**
 * Spawns the example provider with `node` (`dist/example-provider.js` next to a built
 * `dist/start.js`, else `node --import tsx apps/example-provider/src/main.ts` from the repository
 * root), its output forwarded to stderr as `[<label>] ...`, and waits until it listens. The same
 * app runs a second time as another provider with `name`, `join`, `priceUsdc` and `delayMs`.
 *
 * @throws {Error} when it exits or says nothing within `startTimeoutMs`; the error carries its last output lines.
 */
export async function spawnExampleProvider(opts: SpawnExampleProviderOptions): Promise<ExampleProvider> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const built = path.join(here, 'example-provider.js');
  const root = path.resolve(here, '../../..');
  const [args, cwd] = existsSync(built) ? [[built], here] : [['--import', 'tsx', path.join(root, 'apps/example-provider/src/main.ts')], root];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GATEWAY_URL: opts.gatewayUrl,
    EXAMPLE_PROVIDER_PORT: String(opts.port),
    EXAMPLE_PROVIDER_PRIVATE_KEY: opts.privateKey,
    LOG_LEVEL: opts.logLevel,
    LOG_PRETTY: opts.pretty ? '1' : '0',
  };
  if (opts.host) env.EXAMPLE_PROVIDER_HOST = opts.host;
  // the launcher's own choices for this instance, never inherited from the user's environment
  const own = {
    EXAMPLE_PROVIDER_NAME: opts.name,
    EXAMPLE_PROVIDER_JOIN: opts.join?.join(','),
    EXAMPLE_PROVIDER_PRICE_USDC: opts.priceUsdc,
    EXAMPLE_PROVIDER_DELAY_MS: opts.delayMs === undefined ? undefined : String(opts.delayMs),
  };
  for (const [name, value] of Object.entries(own)) {
    if (value !== undefined) env[name] = value;
    else if (name !== 'EXAMPLE_PROVIDER_NAME') delete env[name];
  }
  for (const [chain, url] of Object.entries(opts.rpcUrls)) {
    const name = `EXAMPLE_PROVIDER_RPC_${chain.toUpperCase()}`;
    if (url) env[name] = url;
    else delete env[name];
  }
  const child = spawnManaged(process.execPath, args, { name: opts.label ?? 'example-provider', forward: true, cwd, env, ipc: true });

  const seen: ExampleProviderMessage[] = [];
  const listeners = new Set<(m: ExampleProviderMessage) => void>();
  child.child.on('message', (m: ExampleProviderMessage) => {
    seen.push(m);
    for (const l of listeners) l(m);
  });
  const next = <T extends ExampleProviderMessage>(match: (m: ExampleProviderMessage) => m is T, timeoutMs: number) =>
    new Promise<T | undefined>((resolve) => {
      const found = seen.find(match);
      if (found) return resolve(found);
      const finish = (m: T | undefined) => {
        clearTimeout(timer);
        listeners.delete(listener);
        resolve(m);
      };
      const listener = (m: ExampleProviderMessage) => {
        if (match(m)) finish(m);
      };
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      listeners.add(listener);
      void child.exited.then(() => finish(undefined));
    });

  const listening = await next((m): m is Extract<ExampleProviderMessage, { event: 'listening' }> => m.event === 'listening', opts.startTimeoutMs ?? 30_000);
  if (!listening) {
    await child.stop();
    const tail = child.outputTail().trim().split('\n').slice(-5).join('\n');
    throw new Error(`the example provider did not start${tail ? `:\n${tail}` : ''}`);
  }
  return {
    process: child,
    url: listening.url,
    address: listening.address,
    firstOutcome: (timeoutMs) => next((m): m is Exclude<ExampleProviderMessage, { event: 'listening' }> => m.event !== 'listening', timeoutMs),
    onMessage: (listener) => listeners.add(listener),
    stop: () => child.stop(),
  };
}
