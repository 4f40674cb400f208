import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRedisServer, freePort, lastLines, pingRedis, redisNotInstalledMessage, sleep, spawnManaged, type ManagedProcess } from '@acg/devnet';
import { Redis } from 'ioredis';

/**
 * A private `redis-server` of the money invariant suite that can lose its last writes for real
 * (docs/money-invariants.md `LoseLastWrites`): {@link checkpoint} writes an RDB snapshot (`SAVE`)
 * and keeps a copy; {@link restartFromCheckpoint} kills the server (SIGKILL, as a machine crash),
 * throws its append-only files away and starts it again on the same port from that copy, so every
 * write acknowledged after the checkpoint is gone. The clients of the gateway reconnect by
 * themselves (ioredis). Configured like the devnet's private Redis: AOF `appendfsync always`, no
 * eviction. Never the shared Redis on 6379: this is a server the test spawned in its own temp dir.
 */
export class RestartableRedis {
  private proc: ManagedProcess | undefined;
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'acg-inv-redis-'));
  private readonly snapshot = path.join(this.dir, 'checkpoint.rdb');
  private readonly data = path.join(this.dir, 'data');
  private constructor(
    private readonly binary: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port of 127.0.0.1. */
  static async start(): Promise<RestartableRedis> {
    const binary = findRedisServer();
    if (!binary) throw new Error(redisNotInstalledMessage());
    const r = new RestartableRedis(binary, await freePort());
    await r.spawn(true);
    return r;
  }

  private async spawn(appendOnly: boolean): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.data, '--save', '', '--maxmemory-policy', 'noeviction'];
    // loading an RDB needs the AOF off at start (with it on and no AOF, Redis starts empty); it is switched on right after
    args.push('--appendonly', appendOnly ? 'yes' : 'no', '--appendfsync', 'always', '--daemonize', 'no', '--logfile', '');
    mkdirSync(this.data, { recursive: true });
    this.proc = spawnManaged(this.binary, args, { name: `redis:${this.port}`, cwd: this.data });
    for (let i = 0; i < 200; i++) {
      if (this.proc.hasExited()) throw new Error(`redis-server on ${this.port} exited:\n${lastLines(this.proc.outputTail())}`);
      if (await pingRedis('127.0.0.1', this.port, 500)) break;
      await sleep(25);
    }
    if (!appendOnly) {
      await this.admin(async (c) => {
        await c.config('SET', 'appendonly', 'yes');
        // the rewrite that turns the AOF on: done before the server counts as back
        for (let i = 0; i < 400 && /aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(await c.info('persistence')); i++) await sleep(25);
      });
    }
  }

  private async admin<T>(fn: (c: Redis) => Promise<T>): Promise<T> {
    const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      c.disconnect();
    }
  }

  /** A point to come back to: an RDB snapshot of everything acknowledged so far. */
  async checkpoint(): Promise<void> {
    await this.admin((c) => c.save());
    copyFileSync(path.join(this.data, 'dump.rdb'), this.snapshot);
  }

  /** The server dies and comes back from the last {@link checkpoint}: every write since is lost. */
  async restartFromCheckpoint(): Promise<void> {
    if (!existsSync(this.snapshot)) throw new Error('restartFromCheckpoint: no checkpoint');
    await this.proc?.stop(0);
    rmSync(this.data, { recursive: true, force: true });
    mkdirSync(this.data, { recursive: true });
    copyFileSync(this.snapshot, path.join(this.data, 'dump.rdb'));
    await this.spawn(false);
  }

  async stop(): Promise<void> {
    await this.proc?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
