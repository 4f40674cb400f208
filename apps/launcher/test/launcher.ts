/**
 * Test helpers for the `npm start` launcher: run it as a user does (`npm start` from the repository
 * root, so npm's own `sh -c` and signal forwarding are part of the test), read its output, and list
 * the processes it started (every descendant of the npm process, from `ps`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A running `npm start` with its combined output so far. */
export type Launcher = {
  child: ChildProcess;
  output(): string;
  /** Resolves with how npm ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once `text` appears in the output; rejects if npm exits first or after `timeoutMs`. */
  waitFor(text: string, timeoutMs: number): Promise<void>;
};

/** Starts `npm start` in the repository root with `env` added to this process's environment. */
export function runNpmStart(env: Record<string, string>): Launcher {
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      for (const l of listeners) l();
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    waitFor: (text, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (out.includes(text)) finish();
          else if (child.exitCode !== null || child.signalCode !== null) finish(new Error(`npm start exited before "${text}":\n${out}`));
        };
        const timer = setTimeout(() => finish(new Error(`no "${text}" after ${timeoutMs} ms:\n${out}`)), timeoutMs);
        const finish = (err?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolve();
        };
        listeners.add(check);
        check();
      }),
  };
}

/** One row of `ps`. */
export type ProcRow = { pid: number; ppid: number; state: string; args: string };

/** Every process on the machine (`ps -A`), zombies included (state starting with `Z`). */
export function processTable(): ProcRow[] {
  const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' });
  return text
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), state: m[3], args: m[4] }));
}

/** Every live (non-zombie) descendant of `root`. */
export function descendants(root: number): ProcRow[] {
  const table = processTable();
  const found: ProcRow[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const row of table) {
      if (row.ppid === parent && !found.includes(row)) {
        found.push(row);
        frontier.push(row.pid);
      }
    }
  }
  return found.filter((r) => !r.state.startsWith('Z'));
}

/** The subset of `pids` that still run (zombies count as gone). */
export function stillRunning(pids: number[]): number[] {
  const live = new Set(
    processTable()
      .filter((r) => !r.state.startsWith('Z'))
      .map((r) => r.pid),
  );
  return pids.filter((pid) => live.has(pid));
}

/**
 * For a test's `afterAll`: SIGKILLs whatever its runs left behind, i.e. each pid of `spawned` that still
 * runs (the launchers' descendants) and each launcher's npm process; pids already gone are skipped.
 */
export function killLeftovers(spawned: number[], launchers: Launcher[]): void {
  for (const pid of [...stillRunning(spawned), ...launchers.map((l) => l.child.pid!)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Every key under `prefix` in `client` (SCAN `MATCH <prefix>*`; only on the test's own private Redis). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}
