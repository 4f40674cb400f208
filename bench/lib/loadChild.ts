/**
 * The load generator process (forked by ./load.ts): takes jobs over IPC one at a time, answers
 * each with one message, exits when the parent disconnects.
 */
import autocannon from 'autocannon';
import { devAccount, devPrivateKey } from '@acg/devnet';
import { signTypedDataWith } from '@acg/secp256k1';
import type { PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme, InMemoryClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { createPublicClient, http } from 'viem';
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

/** The deposit a `batch-settlement` caller puts in its channel (USDC base units): 5 USDC, 5,000 calls at 0.001, so no top-up while measuring. */
const CHANNEL_DEPOSIT = 5_000_000n;

/** One caller: an official x402 client for one scheme, and the last 402 it got per URL (`reuseChallenge`). */
type Caller = { address: `0x${string}`; client: x402Client; http: x402HTTPClient; pay: typeof fetch; challenges: Map<string, PaymentRequired> };

/** One official x402 client per (scheme, buyer, lane), kept across jobs (so a `batch-settlement` channel opens once). */
const callers = new Map<string, Caller>();
/** A number per server origin seen, so that two servers never share a channel (same payer, receiver and authorizer). */
const origins = new Map<string, number>();
function caller(job: PaidJob, index: number, lane: number): Caller {
  const scheme = job.scheme ?? 'exact';
  const origin = new URL(job.url).origin;
  if (!origins.has(origin)) origins.set(origin, origins.size + 1);
  const key = `${scheme}/${origin}/${index}/${lane}`;
  let c = callers.get(key);
  if (!c) {
    const account = devAccount(index);
    const client = new x402Client();
    if (scheme === 'exact') registerExactEvmScheme(client, { signer: account });
    else {
      const reader = job.rpcUrl ? createPublicClient({ transport: http(job.rpcUrl) }) : undefined;
      // The buyer's key signs natively (libsecp256k1 through @acg/secp256k1, byte-for-byte viem's signature), so
      // the load process's signing (a voucher per call) is not what limits either side; same signer for both.
      const key = devPrivateKey(index);
      const native = { address: account.address, signTypedData: async (m: Parameters<typeof account.signTypedData>[0]) => signTypedDataWith(key, m as never) };
      const signer = toClientEvmSigner(native, reader as Parameters<typeof toClientEvmSigner>[1]);
      if (scheme === 'upto') client.register('eip155:*', new UptoEvmScheme(signer));
      else
        client.register(
          'eip155:*',
          new BatchSettlementEvmScheme(signer, {
            storage: new InMemoryClientChannelStorage(),
            // one channel per server and lane: the channel id is derived from the config, salt included
            salt: `0x${origins.get(origin)!.toString(16).padStart(32, '0')}${lane.toString(16).padStart(32, '0')}`,
            depositStrategy: () => CHANNEL_DEPOSIT,
            ...(job.rpcUrl ? { rpcUrl: job.rpcUrl } : {}),
          }),
        );
    }
    c = { address: account.address, client, http: new x402HTTPClient(client), pay: wrapFetchWithPayment(fetch, client), challenges: new Map() };
    callers.set(key, c);
  }
  return c;
}

/** Reads a 402's `PaymentRequired` (header, else body) as the official HTTP client does. */
async function paymentRequiredOf(c: Caller, res: Response): Promise<PaymentRequired> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return c.http.getPaymentRequiredResponse((name) => res.headers.get(name), body);
}

/**
 * A paid call that reuses the caller's last 402 for the URL: sign a payload for it (for `batch-settlement`
 * the next cumulative voucher), send it with the request, let the official client process the answer. A
 * 402 answer (the requirements changed, or a corrective 402 of `batch-settlement`) replaces the stored one
 * and the call is retried once.
 */
async function payReusingChallenge(c: Caller, url: string, init: () => RequestInit): Promise<Response> {
  let required = c.challenges.get(url);
  if (!required) {
    const res = await fetch(url, init());
    if (res.status !== 402) return res;
    required = await paymentRequiredOf(c, res);
    c.challenges.set(url, required);
  }
  for (let attempt = 0; ; attempt++) {
    const payload = await c.client.createPaymentPayload(required);
    const req = init();
    const res = await fetch(url, { ...req, headers: { ...(req.headers as Record<string, string>), ...c.http.encodePaymentSignatureHeader(payload) } });
    await c.http.processPaymentResult(payload, (name) => res.headers.get(name), res.status);
    if (res.status !== 402 || attempt > 0) return res;
    required = await paymentRequiredOf(c, res);
    c.challenges.set(url, required);
  }
}

async function runPaid(job: PaidJob): Promise<PaidSummary> {
  const call = async (c: Caller): Promise<PaidCall> => {
    const body = JSON.stringify({ capability_id: job.capabilityId, input: { address: c.address, chain: 'base' }, ...job.body });
    const init = (): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(job.callTimeoutMs),
    });
    const t0 = performance.now();
    try {
      const res = job.reuseChallenge ? await payReusingChallenge(c, job.url, init) : await c.pay(job.url, init());
      const text = await res.text();
      const ms = performance.now() - t0;
      const ok = res.status === 200 && res.headers.get('payment-response') !== null;
      return ok ? { ms, ok } : { ms, ok, detail: `HTTP ${res.status} ${text.slice(0, 200)}` };
    } catch (e) {
      return { ms: performance.now() - t0, ok: false, detail: String((e as Error)?.message ?? e).slice(0, 200) };
    }
  };

  const lanes = job.lanesPerBuyer ?? 1;
  const buyers = job.buyerIndexes.flatMap((index) => Array.from({ length: lanes }, (_, lane) => caller(job, index, lane)));
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
