import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, readFileSync } from 'node:fs';
import path from 'node:path';

/** How a managed child process ended. */
export type ProcessExit = { code: number | null; signal: NodeJS.Signals | null };

/** A child process that cannot outlive this Node process (see {@link spawnManaged}). */
export type ManagedProcess = {
  /** Label used in messages, e.g. `anvil:8453`. */
  name: string;
  /** OS process id. */
  pid: number;
  /** The underlying Node child process. */
  child: ChildProcess;
  /** Resolves (never rejects) when the process has exited. */
  exited: Promise<ProcessExit>;
  /** `true` once the process has exited. */
  hasExited(): boolean;
  /** The last ~16 KB of the process's combined stdout and stderr. */
  outputTail(): string;
  /**
   * Sends SIGTERM, waits for exit, escalates to SIGKILL after `graceMs` (default 3000 ms).
   * Idempotent; resolves once the process is gone.
   */
  stop(graceMs?: number): Promise<void>;
};

const TAIL_BYTES = 16 * 1024;
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
let setprivPath: string | null | undefined;

/**
 * Finds an executable by name on `PATH` plus `extraDirs` (e.g. `/usr/sbin`, which non-root `PATH`s often lack).
 *
 * @param name - Executable file name, e.g. `redis-server`.
 * @param extraDirs - Directories searched after `PATH`.
 * @returns Absolute path of the first executable match, or `null` if none.
 */
export function findExecutable(name: string, extraDirs: string[] = []): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: SIGKILL everything still running.
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Spawns a child process that dies with this Node process.
 *
 * Two layers: a synchronous `process.on('exit')` hook SIGKILLs every live managed child on a normal exit,
 * and on Linux the child is started through util-linux `setpriv --pdeathsig KILL` so the kernel kills it
 * even when Node itself is killed by a signal (vitest worker teardown, Ctrl-C, SIGKILL). Output is always
 * drained (a full pipe would block the child) into a tail buffer, and also forwarded to this process's
 * stderr with a `[name]` prefix when `forward` is true.
 *
 * @param command - Executable path.
 * @param args - Arguments.
 * @param opts.name - Label for messages, e.g. `redis`.
 * @param opts.forward - Forward the child's output to `process.stderr` (default false).
 * @param opts.cwd - Working directory.
 * @param opts.env - Environment (default: this process's).
 * @param opts.ipc - Open a Node IPC channel (`child.send` / `child.on('message')`; the child, a Node
 *   process, uses `process.send`): for messages meant for the parent, apart from the child's logs.
 * @returns A {@link ManagedProcess}.
 * @throws {Error} If the process cannot be spawned (e.g. ENOENT); the error says which command.
 */
export function spawnManaged(
  command: string,
  args: string[],
  opts: { name: string; forward?: boolean; cwd?: string; env?: NodeJS.ProcessEnv; ipc?: boolean },
): ManagedProcess {
  installExitHook();
  if (setprivPath === undefined) {
    setprivPath = process.platform === 'linux' ? findExecutable('setpriv', ['/usr/bin', '/bin']) : null;
  }
  const [file, argv] = setprivPath ? [setprivPath, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];

  const child = spawn(file, argv, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) {
    // spawn failures (ENOENT, EACCES) are reported asynchronously via 'error' but pid is already undefined.
    child.on('error', () => {});
    throw new Error(`${opts.name}: could not start ${command}`);
  }
  live.add(child);

  let tail = '';
  const onData = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    if (opts.forward) {
      const text = chunk.toString('utf8').replace(/\n(?!$)/g, `\n[${opts.name}] `);
      process.stderr.write(`[${opts.name}] ${text}`);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);

  let done = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    const finish = (exit: ProcessExit) => {
      if (done) return;
      done = true;
      live.delete(child);
      resolve(exit);
    };
    child.once('exit', (code, signal) => finish({ code, signal }));
    child.once('error', (err) => {
      tail += `\n${String(err)}`;
      if (child.exitCode !== null || child.signalCode !== null) finish({ code: child.exitCode, signal: child.signalCode });
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 3000): Promise<void> => {
    stopping ??= (async () => {
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!done) child.kill('SIGKILL');
      }, graceMs);
      timer.unref();
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  return {
    name: opts.name,
    pid: child.pid,
    child,
    exited,
    hasExited: () => done,
    outputTail: () => tail,
    stop,
  };
}

/**
 * Last `lines` non-empty lines of a process output tail, for error messages.
 *
 * @param text - Output text.
 * @param lines - How many lines to keep (default 20).
 * @returns The trimmed tail, or `(no output)`.
 */
export function lastLines(text: string, lines = 20): string {
  const kept = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-lines)
    .join('\n');
  return kept === '' ? '(no output)' : kept;
}

/**
 * The current parent process id, read fresh (Node's `process.ppid` is fixed at startup).
 * Linux: field 4 of `/proc/self/stat`; elsewhere `null` (unknown).
 */
function currentParentPid(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // "pid (comm) state ppid ...": comm may contain spaces and parentheses, so split after the last ')'
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Calls `onGone` once when the process that started this one has gone away (it was killed, or it
 * exited and left this process to init or a subreaper), so a launcher whose parent dies does not
 * keep serving as an orphan. Polls every `intervalMs` (default 1000) with an unref'd timer:
 * on Linux it compares `/proc/self/stat`'s parent pid with the one at startup; elsewhere it
 * probes the original parent with signal 0 (ESRCH = gone).
 *
 * @param onGone - Called once, with no arguments.
 * @param intervalMs - Poll interval in milliseconds.
 * @returns A function that stops watching. Does nothing when started with no real parent (ppid ≤ 1).
 */
export function watchParent(onGone: () => void, intervalMs = 1000): () => void {
  const original = process.ppid;
  if (original <= 1) return () => {};
  const timer = setInterval(() => {
    const now = currentParentPid();
    let gone: boolean;
    if (now !== null) {
      gone = now !== original;
    } else {
      try {
        process.kill(original, 0);
        gone = false;
      } catch (err) {
        gone = (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    }
    if (gone) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
