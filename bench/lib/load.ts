/**
 * The load generator runs in a separate Node process (./loadChild.ts, forked with this process's
 * loader flags, so tsx applies there too). The servers under test stay in this process; the
 * client's work (HTTP parsing, EIP-712 signing) never competes with them on one event loop. The
 * child stays up for a whole benchmark and takes one job at a time, so its own JIT and sockets are
 * as warm for the second side as for the first.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type AutocannonJob = {
  kind: 'autocannon';
  url: string;
  connections: number;
  durationSeconds: number;
  headers?: Record<string, string> /** a fixed number of requests instead of a duration (every answer is awaited) */;
  amount?: number;
};

export type PaidJob = {
  kind: 'paid';
  /** URL of the paid endpoint (POST, JSON body `{capability_id, input: {address, chain: "base"}, ...body}`). */
  url: string;
  capabilityId: string;
  /** Request body fields beside `capability_id` and `input` (e.g. a routed call's `routing`). */
  body?: Record<string, unknown>;
  /**
   * The x402 scheme the client pays with (`PaymentRequirements.scheme`): only this scheme's official
   * client is registered, so the client picks that entry of the 402's `accepts` (default `exact`).
   */
  scheme?: 'exact' | 'upto' | 'batch-settlement';
  /** Dev account indexes of the buyers. */
  buyerIndexes: number[];
  /**
   * Concurrent callers per buyer (default 1). For `batch-settlement` each is its own channel (the client's
   * `salt`), since one channel's cumulative vouchers are sequential.
   */
  lanesPerBuyer?: number;
  /** Sequential paid calls per caller (buyer x lane) in this job. */
  callsPerBuyer: number;
  /** Bound on one paid call (both HTTP round trips), ms. */
  callTimeoutMs: number;
  /**
   * `false` (default): every call is `@x402/fetch` `wrapFetchWithPayment`, 402 challenge then paid retry.
   * `true`: each caller keeps the last 402 it got for the URL and pays every later call directly with it
   * (one HTTP round trip; a corrective 402 replaces it and the call is retried once), as a channel client does.
   */
  reuseChallenge?: boolean;
  /** JSON-RPC URL of the payment chain (the `batch-settlement` client reads its channel's on-chain state). */
  rpcUrl?: string;
};

export type LoadJob = AutocannonJob | PaidJob;

export interface AutocannonSummary {
  /** Latency of every 2xx response (hrtime, sub-millisecond), ms. */
  latenciesMs: number[];
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** seconds from the start of the run to its last response (measured by the load process) */
  durationSeconds: number;
}

export interface PaidCall {
  ms: number;
  ok: boolean;
  detail?: string;
}

export interface PaidSummary {
  /** Wall time of the job (all buyers), ms. */
  wallMs: number;
  /** Latency of each successful call (402 round trip + signing + paid retry), ms. */
  latenciesMs: number[];
  ok: number;
  failed: number;
  /** Up to 3 failure descriptions (status and start of body, or the error). */
  failures: string[];
}

export type LoadReply = { ok: true; result: AutocannonSummary | PaidSummary } | { ok: false; error: string };

const CHILD = fileURLToPath(new URL('./loadChild.ts', import.meta.url));

/** A forked load-generator process that runs one job at a time. */
export class LoadGenerator {
  private exited = false;
  private onExit?: () => void;

  private constructor(private readonly child: ChildProcess) {
    child.once('exit', () => {
      this.exited = true;
      this.onExit?.();
    });
  }

  static start(): LoadGenerator {
    return new LoadGenerator(fork(CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  /** Sends `job`, resolves with its summary; kills the generator if it takes longer than `timeoutMs`. */
  run(job: AutocannonJob, timeoutMs: number): Promise<AutocannonSummary>;
  run(job: PaidJob, timeoutMs: number): Promise<PaidSummary>;
  run(job: LoadJob, timeoutMs: number): Promise<AutocannonSummary | PaidSummary> {
    if (this.exited) return Promise.reject(new Error('the load generator has exited'));
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | undefined, value?: AutocannonSummary | PaidSummary) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        this.onExit = undefined;
        if (err) reject(err);
        else resolve(value!);
      };
      const onMessage = (m: LoadReply) => (m.ok ? finish(undefined, m.result) : finish(new Error(`load generator failed: ${m.error}`)));
      const timer = setTimeout(() => {
        this.close();
        finish(new Error(`load generator (${job.kind}) did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      this.child.on('message', onMessage);
      // A reply already on the IPC channel is delivered around 'exit': give it a moment.
      this.onExit = () => setTimeout(() => finish(new Error('the load generator exited before answering')), 200);
      this.child.send(job);
    });
  }

  /** Stops the generator process (the one this object forked). Idempotent. */
  close(): void {
    if (this.exited) return;
    if (this.child.connected) this.child.disconnect();
    this.child.kill('SIGKILL');
  }
}
