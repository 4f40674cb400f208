import { accessSync, chmodSync, constants as fsConstants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DEV_ACCOUNT_COUNT, DEV_MNEMONIC } from './accounts.js';
import { freePort, isPortFree, sleep } from './ports.js';
import { lastLines, spawnManaged, type ManagedProcess } from './processes.js';

/** A running local anvil node started by {@link startAnvil}. */
export type AnvilInstance = {
  /** HTTP JSON-RPC URL, e.g. `http://127.0.0.1:40123`. */
  rpcUrl: string;
  /** WebSocket JSON-RPC URL on the same port, e.g. `ws://127.0.0.1:40123`. */
  wsUrl: string;
  /** The chain id the node reports (`eth_chainId`). */
  chainId: number;
  /** TCP port on 127.0.0.1. */
  port: number;
  /** OS process id of the anvil process. */
  pid: number;
  /** Kills the node (SIGTERM, then SIGKILL after 3 s) and resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
};

/** Options of {@link startAnvil}. */
export type StartAnvilOptions = {
  /** Chain id (`--chain-id`), e.g. 8453 for the Base-like payment chain, 1, 42161. */
  chainId: number;
  /** TCP port; default: a free port chosen by the OS. */
  port?: number;
  /** Interval mining in seconds (`--block-time`); default: automine (one block per transaction). */
  blockTime?: number;
  /** `true` (default): run with `--quiet` and keep output only for error messages; `false`: forward anvil's log to stderr. */
  quiet?: boolean;
  /** Extra anvil flags appended as-is, e.g. `['--hardfork', 'cancun']`. */
  extraArgs?: string[];
};

const READY_ATTEMPTS = 300;
const READY_INTERVAL_MS = 50;

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/**
 * Locates the anvil executable shipped by npm (`@foundry-rs/anvil-<os>-<arch>`), independent of the cwd.
 * Makes it executable (0o755) when the install lost the mode bit. Falls back to `@foundry-rs/anvil`'s
 * `bin.mjs` launcher (run with this Node) when the platform package is missing.
 *
 * @returns `{ command, args }` to spawn: the binary with no prefix args, or `node bin.mjs`.
 * @throws {Error} If neither package is installed, or the binary cannot be made executable.
 */
export function resolveAnvilCommand(): { command: string; args: string[] } {
  const require = createRequire(import.meta.url);
  const pkg = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (pkg) {
    try {
      const dir = path.dirname(require.resolve(`${pkg}/package.json`));
      const binary = path.join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
      if (existsSync(binary)) {
        ensureExecutable(binary);
        return { command: binary, args: [] };
      }
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'MODULE_NOT_FOUND')) throw err;
    }
  }
  try {
    const launcher = path.join(path.dirname(require.resolve('@foundry-rs/anvil/package.json')), 'bin.mjs');
    if (existsSync(launcher)) return { command: process.execPath, args: [launcher] };
  } catch {
    // fall through
  }
  throw new Error(`anvil not found: install @foundry-rs/anvil (and its platform package ${pkg ?? `for ${process.platform}-${process.arch}`}) with npm`);
}

function ensureExecutable(file: string): void {
  if (process.platform === 'win32') return;
  try {
    accessSync(file, fsConstants.X_OK);
  } catch {
    try {
      chmodSync(file, 0o755);
    } catch (err) {
      throw new Error(`anvil binary ${file} is not executable and chmod 755 failed: ${String(err)}`);
    }
  }
}

/**
 * Starts a local anvil node on 127.0.0.1 with the standard dev mnemonic and 10 funded accounts
 * (10,000 ETH each), and waits until it answers `eth_chainId`.
 *
 * The node is killed when this process exits (see `spawnManaged`), so tests leave no orphans even when
 * they forget `stop()`.
 *
 * @param opts - See {@link StartAnvilOptions}. `chainId` must be a positive safe integer.
 * @returns An {@link AnvilInstance}.
 * @throws {Error} If the binary cannot be found, anvil exits during startup (message carries the tail of
 *   its output), does not answer within ~15 s, or reports another chain id. With no `port` given, a port
 *   clash is retried up to 3 times on fresh ports.
 *
 * @example
 * const anvil = await startAnvil({ chainId: 8453 })
 * // anvil.rpcUrl === 'http://127.0.0.1:<port>'
 * await anvil.stop()
 */
export async function startAnvil(opts: StartAnvilOptions): Promise<AnvilInstance> {
  if (!Number.isSafeInteger(opts.chainId) || opts.chainId <= 0) {
    throw new Error(`startAnvil: chainId must be a positive integer, got ${String(opts.chainId)}`);
  }
  if (opts.blockTime !== undefined && !(opts.blockTime > 0)) {
    throw new Error(`startAnvil: blockTime must be > 0 seconds, got ${String(opts.blockTime)}`);
  }
  const tries = opts.port === undefined ? 3 : 1;
  let lastError: unknown;
  for (let attempt = 0; attempt < tries; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await startOnPort(opts, port);
    } catch (err) {
      lastError = err;
      if (!(err instanceof AnvilPortInUseError)) throw err;
    }
  }
  throw lastError;
}

class AnvilPortInUseError extends Error {}

async function startOnPort(opts: StartAnvilOptions, port: number): Promise<AnvilInstance> {
  const quiet = opts.quiet ?? true;
  if (!(await isPortFree(port))) {
    throw new AnvilPortInUseError(`anvil:${opts.chainId}: port ${port} on 127.0.0.1 is already in use`);
  }
  const { command, args: prefix } = resolveAnvilCommand();
  const args = [
    ...prefix,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    String(opts.chainId),
    '--mnemonic',
    DEV_MNEMONIC,
    '--accounts',
    String(DEV_ACCOUNT_COUNT),
    ...(opts.blockTime !== undefined ? ['--block-time', String(opts.blockTime)] : []),
    ...(quiet ? ['--quiet'] : []),
    ...(opts.extraArgs ?? []),
  ];
  const name = `anvil:${opts.chainId}`;
  const proc = spawnManaged(command, args, {
    name,
    forward: !quiet,
    env: { ...process.env, TARGET_TOOL: 'anvil' },
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  try {
    const chainId = await waitForChainId(proc, rpcUrl, port);
    if (chainId !== opts.chainId) {
      throw new Error(`${name}: node on port ${port} reports chain id ${chainId}, expected ${opts.chainId}`);
    }
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    rpcUrl,
    wsUrl: `ws://127.0.0.1:${port}`,
    chainId: opts.chainId,
    port,
    pid: proc.pid,
    stop: () => proc.stop(),
  };
}

/**
 * Asks a JSON-RPC node for `eth_chainId` once, waiting at most 1 s.
 *
 * @param rpcUrl - HTTP JSON-RPC URL, e.g. `http://127.0.0.1:8545`.
 * @returns The chain id, or `undefined` when nothing answers with one (refused, timed out, HTTP error, no `result`);
 *   never throws.
 */
export async function probeChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number(BigInt(body.result)) : undefined;
  } catch {
    return undefined; // not listening (yet), or not JSON-RPC
  }
}

async function waitForChainId(proc: ManagedProcess, rpcUrl: string, port: number): Promise<number> {
  for (let attempt = 0; attempt < READY_ATTEMPTS; attempt++) {
    if (proc.hasExited()) {
      const { code, signal } = await proc.exited;
      const tail = proc.outputTail();
      const message = `${proc.name}: anvil exited during startup (code ${code}, signal ${signal}) on port ${port}:\n${lastLines(tail)}`;
      if (/address already in use/i.test(tail)) throw new AnvilPortInUseError(message);
      throw new Error(message);
    }
    const chainId = await probeChainId(rpcUrl);
    // Another process could own the port; only trust the answer if our anvil is still alive.
    if (chainId !== undefined && !proc.hasExited()) return chainId;
    await sleep(READY_INTERVAL_MS);
  }
  throw new Error(
    `${proc.name}: anvil did not answer eth_chainId at ${rpcUrl} after ${(READY_ATTEMPTS * READY_INTERVAL_MS) / 1000} s:\n${lastLines(proc.outputTail())}`,
  );
}
