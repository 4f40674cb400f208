import { HttpRequestError, SocketClosedError, TimeoutError, WebSocketRequestError, http, type Transport } from 'viem';

/** Default bound of one payment-chain JSON-RPC request, milliseconds (PAYMENT_RPC_TIMEOUT_MS). */
export const DEFAULT_PAYMENT_RPC_TIMEOUT_MS = 10_000;

const TRANSPORT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether `e` (or any error in its `cause` chain) says the node could not be reached or did not
 * answer in time: viem `HttpRequestError` (connection refused, "fetch failed", HTTP 5xx/429),
 * `TimeoutError`, a closed socket, or a Node network error code. A revert, a bad signature or an
 * RPC-level error answer (`execution reverted`, -32000...) is not a transport failure.
 */
export function isTransportError(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 10; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof HttpRequestError || cur instanceof TimeoutError || cur instanceof SocketClosedError || cur instanceof WebSocketRequestError) return true;
    const err = cur as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof err.code === 'string' && TRANSPORT_CODES.has(err.code)) return true;
    if (err.name === 'HttpRequestError' || err.name === 'TimeoutError' || err.name === 'AbortError') return true;
    if (typeof err.message === 'string' && /fetch failed|other side closed|socket hang up/i.test(err.message)) return true;
  }
  return false;
}

/** What {@link PaymentChainMonitor.snapshot} reports; times are Unix milliseconds, 0 = never. */
export interface PaymentChainSnapshot {
  /** false while the newest JSON-RPC outcome on the payment chain was a transport failure */
  reachable: boolean;
  lastSuccessAt: number;
  lastFailureAt: number;
}

/**
 * Watches the payment chain's JSON-RPC transport (docs/decisions.md "x402 payments"): every request made
 * through {@link PaymentChainMonitor.transport} (the facilitator's wallet, the paywall's public
 * client) records whether the node answered. The x402 facilitator turns an unreachable node into
 * `isValid: false` (`invalid_exact_evm_signature`, `..._transaction_simulation_failed`), so the
 * paywall asks this monitor whether the node failed while it verified or settled, and
 * {@link PaymentChainMonitor.probe} confirms with one `eth_blockNumber`. Health reads
 * {@link PaymentChainMonitor.reachable} (paid routes are `down` while it is false).
 */
export class PaymentChainMonitor {
  private lastSuccessAt = 0;
  private lastFailureAt = 0;
  /** order of the newest success and failure (two outcomes can share a millisecond) */
  private seq = 0;
  private lastSuccessSeq = 0;
  private lastFailureSeq = 0;
  /** When a transaction was last handed to the node (`eth_sendRawTransaction` / `eth_sendTransaction` sent, answered or not), Unix ms. */
  private lastBroadcastAt = 0;
  private readonly listeners: Array<(reachable: boolean) => void> = [];
  private probing?: Promise<boolean>;
  private readonly probeTransport: ReturnType<Transport>;

  /**
   * @param rpcUrl JSON-RPC URL of the payment chain (PAYMENT_RPC_URL)
   * @param timeoutMs bound of one request, milliseconds (PAYMENT_RPC_TIMEOUT_MS, default 10 000)
   */
  constructor(
    readonly rpcUrl: string,
    readonly timeoutMs: number = DEFAULT_PAYMENT_RPC_TIMEOUT_MS,
  ) {
    this.probeTransport = this.transport({ retryCount: 0, timeoutMs: Math.min(timeoutMs, 3_000) })({});
  }

  /**
   * A viem http transport to the payment chain that reports each request's outcome here.
   * `timeoutMs` defaults to the monitor's; `retryCount` defaults to 1 (a dead node costs at most
   * two attempts of `timeoutMs` each, plus viem's 150 ms backoff).
   */
  transport(o: { retryCount?: number; timeoutMs?: number } = {}): Transport {
    const base = http(this.rpcUrl, { timeout: o.timeoutMs ?? this.timeoutMs, retryCount: o.retryCount ?? 1 });
    return ((params: Parameters<Transport>[0]) => {
      const t = base(params);
      const request = (async (args: unknown, opts?: unknown) => {
        const method = (args as { method?: unknown } | undefined)?.method;
        if (method === 'eth_sendRawTransaction' || method === 'eth_sendTransaction') this.lastBroadcastAt = Date.now();
        try {
          const r = await (t.request as (a: unknown, o?: unknown) => Promise<unknown>)(args, opts);
          this.record(true);
          return r;
        } catch (e) {
          // an RPC error answer (revert, bad params) still proves the node is up
          this.record(!isTransportError(e));
          throw e;
        }
      }) as typeof t.request;
      return { ...t, request };
    }) as Transport;
  }

  /** Registers a listener called when reachability flips (e.g. to drop cached health documents). */
  onChange(fn: (reachable: boolean) => void): void {
    this.listeners.push(fn);
  }

  snapshot(): PaymentChainSnapshot {
    return { reachable: this.lastFailureSeq <= this.lastSuccessSeq, lastSuccessAt: this.lastSuccessAt, lastFailureAt: this.lastFailureAt };
  }

  /** Whether a transport failure was observed at or after `since` (Unix ms). */
  failedSince(since: number): boolean {
    return this.lastFailureAt >= since;
  }

  /**
   * Whether any transaction was handed to the node through this monitor's transports at or after
   * `since` (Unix ms), whether or not the node answered. False proves that a settlement that began
   * at `since` and has ended broadcast nothing, so nothing was charged.
   */
  broadcastSince(since: number): boolean {
    return this.lastBroadcastAt >= since;
  }

  /** One `eth_blockNumber` (bounded by min(timeout, 3 s), no retry); concurrent callers share it. */
  probe(): Promise<boolean> {
    this.probing ??= (this.probeTransport.request({ method: 'eth_blockNumber' }) as Promise<unknown>)
      .then(
        () => true,
        () => false,
      )
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  /**
   * Whether the node answers: the newest observation when it is younger than `maxAgeMs`
   * (default 5 s), else a fresh {@link probe}.
   */
  async reachable(maxAgeMs = 5_000): Promise<boolean> {
    const newest = Math.max(this.lastSuccessAt, this.lastFailureAt);
    if (newest > 0 && Date.now() - newest <= maxAgeMs) return this.snapshot().reachable;
    return this.probe();
  }

  /**
   * Resolves once the chain is seen unreachable after `since` (a transport failure observed and
   * a probe failing), checking every `everyMs`; never resolves otherwise. `stop()` ends it.
   */
  watchLoss(since: number, everyMs = 250): { lost: Promise<void>; stop(): void } {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const lost = new Promise<void>((resolve) => {
      const tick = async () => {
        if (stopped) return;
        if (this.failedSince(since) && !this.snapshot().reachable && !(await this.probe())) return resolve();
        if (!stopped) timer = setTimeout(tick, everyMs);
      };
      timer = setTimeout(tick, everyMs);
    });
    return {
      lost,
      stop() {
        stopped = true;
        if (timer) clearTimeout(timer);
      },
    };
  }

  private record(ok: boolean): void {
    const before = this.snapshot().reachable;
    this.seq++;
    if (ok) [this.lastSuccessAt, this.lastSuccessSeq] = [Date.now(), this.seq];
    else [this.lastFailureAt, this.lastFailureSeq] = [Date.now(), this.seq];
    const after = this.snapshot().reachable;
    if (before !== after) for (const fn of this.listeners) fn(after);
  }
}

/**
 * Whether a verify or settle failure that started at `since` (Unix ms) may be the chain's fault
 * rather than the payment's. The x402 EVM facilitator swallows RPC errors into reasons
 * (`getCode` failing makes the signature "invalid", a failed `eth_call` a failed simulation, a
 * failed broadcast a failed transaction), so the reason alone cannot tell: true when a transport
 * failure was observed since `since`, or when a probe of the node fails now (one `eth_blockNumber`;
 * this also covers a remote facilitator, whose RPC calls this process does not see). Without a
 * monitor: false.
 */
export async function chainFailedDuring(monitor: PaymentChainMonitor | undefined, since: number): Promise<boolean> {
  if (!monitor) return false;
  if (monitor.failedSince(since)) return true;
  return !(await monitor.probe());
}

/**
 * `work`, or undefined as soon as the chain is seen lost after `since` (see
 * {@link PaymentChainMonitor.watchLoss}); `work` keeps running unobserved then (its rejection is
 * swallowed). Without a monitor: `work` itself.
 */
export async function unlessChainLost<T>(monitor: PaymentChainMonitor | undefined, since: number, work: Promise<T>): Promise<T | undefined> {
  if (!monitor) return work;
  const watch = monitor.watchLoss(since);
  try {
    const first = await Promise.race([work, watch.lost.then(() => undefined)]);
    if (first === undefined) work.catch(() => undefined);
    return first;
  } finally {
    watch.stop();
  }
}
