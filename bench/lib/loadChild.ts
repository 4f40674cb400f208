/**
 * The load generator process (forked by ./load.ts): takes jobs over IPC one at a time, answers
 * each with one message, exits when the parent disconnects.
 */
import autocannon from 'autocannon';
import { devAccount } from '@acg/devnet';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { AutocannonJob, AutocannonSummary, LoadJob, LoadReply, PaidCall, PaidJob, PaidSummary } from './load.js';

async function runAutocannon(job: AutocannonJob): Promise<AutocannonSummary> {
  // autocannon's latency histogram has 1 ms resolution; its 'response' event carries the
  // hrtime duration, so the percentiles are computed from those (2xx only, as autocannon does).
  const latenciesMs: number[] = [];
  // measured here, up to the last response: for a run of a fixed `amount`, autocannon's own
  // `duration` is whole seconds, and it stops only at its next 1 s tick
  const started = performance.now();
  let lastResponse = started;
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        method: 'GET',
        connections: job.connections,
        duration: job.durationSeconds,
        timeout: 10,
        headers: job.headers,
        ...(job.amount ? { amount: job.amount } : {}),
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      lastResponse = performance.now();
      if (statusCode >= 200 && statusCode < 300) latenciesMs.push(ms);
    });
  });
  return {
    latenciesMs,
    requests: r.requests.total,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    durationSeconds: (lastResponse - started) / 1000,
  };
}

/** One official x402 client per buyer, kept across jobs; `phases` holds the round trips of its current call (402, then the paid retry), ms. */
const callers = new Map<number, { address: `0x${string}`; pay: typeof fetch; phases: number[] }>();
function caller(index: number) {
  let c = callers.get(index);
  if (!c) {
    const account = devAccount(index);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account });
    const phases: number[] = [];
    // the fetch under the x402 wrapper: times each HTTP round trip of a call (up to its headers)
    const timed: typeof fetch = async (input, init) => {
      const t = performance.now();
      const res = await fetch(input, init);
      phases.push(performance.now() - t);
      return res;
    };
    c = { address: account.address, pay: wrapFetchWithPayment(timed, client), phases };
    callers.set(index, c);
  }
  return c;
}

async function runPaid(job: PaidJob): Promise<PaidSummary> {
  const call = async (c: ReturnType<typeof caller>): Promise<PaidCall> => {
    const body = JSON.stringify({ capability_id: job.capabilityId, input: { address: c.address, chain: 'base' } });
    const t0 = performance.now();
    c.phases.length = 0;
    try {
      const res = await c.pay(job.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(job.callTimeoutMs),
      });
      const text = await res.text();
      const ms = performance.now() - t0;
      const ok = res.status === 200 && res.headers.get('payment-response') !== null;
      const [challengeMs, paidMs] = c.phases.length === 2 ? c.phases : [undefined, undefined];
      return ok ? { ms, ok, challengeMs, paidMs } : { ms, ok, detail: `HTTP ${res.status} ${text.slice(0, 200)}` };
    } catch (e) {
      return { ms: performance.now() - t0, ok: false, detail: String((e as Error)?.message ?? e).slice(0, 200) };
    }
  };

  const buyers = job.buyerIndexes.map(caller);
  const started = performance.now();
  const calls = (
    await Promise.all(
      buyers.map(async (c) => {
        const out: PaidCall[] = [];
        for (let i = 0; i < job.callsPerBuyer; i++) out.push(await call(c));
        return out;
      }),
    )
  ).flat();
  const wallMs = performance.now() - started;
  return {
    wallMs,
    latenciesMs: calls.filter((c) => c.ok).map((c) => c.ms),
    challengeMs: calls.flatMap((c) => (c.ok && c.challengeMs !== undefined ? [c.challengeMs] : [])),
    paidMs: calls.flatMap((c) => (c.ok && c.paidMs !== undefined ? [c.paidMs] : [])),
    ok: calls.filter((c) => c.ok).length,
    failed: calls.filter((c) => !c.ok).length,
    failures: calls
      .filter((c) => !c.ok)
      .slice(0, 3)
      .map((c) => c.detail ?? 'unknown'),
  };
}

process.on('message', (job: LoadJob) => {
  const work = job.kind === 'autocannon' ? runAutocannon(job) : runPaid(job);
  work.then(
    (result) => process.send?.({ ok: true, result } satisfies LoadReply),
    (e: unknown) => process.send?.({ ok: false, error: String((e as Error)?.stack ?? e).slice(0, 2000) } satisfies LoadReply),
  );
});
process.on('disconnect', () => process.exit(0));
