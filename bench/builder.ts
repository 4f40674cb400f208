/**
 * `npx tsx bench/builder.ts [--connections=16] [--duration=5] [--warmup=1] [--bundles=20000]`
 *
 * eth_sendBundle intake latency (p50/p99) and throughput of the builder's `POST /rpc`, against two
 * baselines measured in the same run:
 * - a bare jayson 5 server on node:http that only reads and parses the JSON body and answers
 *   `result: null` (the HTTP + JSON floor);
 * - the crypto limit: the same two secp256k1 recoveries per bundle as the builder does (the
 *   X-Bundle-Signature signer and the tx sender), with the same implementation, in a loop on one
 *   thread with no HTTP, Redis or parsing. Printed for the native binding the builder uses and for
 *   pure-JS @noble/curves (viem's), the fallback.
 * docs/spec-notes.md 4's figures (about 420 ms p50, 1200 ms p99) are printed beside them as the reference.
 *
 * Setup (all started here, all stopped at the end): the Ethereum dev chain (anvil, chain id 1), a
 * private redis-server, four local relays and the builder with its bidder off (intake only). Bodies
 * are signed ahead of time, so the load generator — a forked child process running autocannon —
 * does no crypto. Every body is a distinct one-transaction bundle whose transaction was never sent
 * before (`--bundles` of them, enough that none is sent twice in a run: the output says if any
 * was), so every request costs both recoveries; the builder's cache of known tx senders never hits.
 * A second builder row sends distinct bodies that reuse 200 transactions (a searcher resending its
 * transactions in bundles for the next blocks): the header signature is still recovered for each,
 * the sender comes from the cache. The builder's path per request: token bucket (one Redis Lua call)
 * → body → X-Bundle-Signature recovery → tx decode and sender recovery → head check → pool MULTI.
 * The rate limit is raised for the bench (one IP sends everything); its Redis call still runs.
 * Nothing here asserts on speed.
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { resolveRedis, startEthereumDevChain, type AnvilInstance, type RedisHandle } from '@acg/devnet';
import autocannon from 'autocannon';
import jayson from 'jayson';
import { clearTxSenderCache } from '@acg/bundles';
import { recoverAddress, secp256k1Backend, type Secp256k1Backend } from '@acg/secp256k1';
import { createPublicClient, hashMessage, hexToBytes, http, keccak256, parseGwei, serializeTransaction, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { builderConfigFromEnv, startBuilder, startDevRelays, type DevRelays, type RunningBuilder } from '../apps/builder/src/index.js';
import { fmt, fmtRatio, machine, percentile, ratio, table } from './lib/stats.js';

/** docs/spec-notes.md 4 reference figures for bundle submission, milliseconds. */
const SPEC_P50_MS = 420;
const SPEC_P99_MS = 1200;

/** A signed request: the exact body bytes and its X-Bundle-Signature header. */
interface Body {
  body: string;
  signature: string;
}
/** Load-generator messages: store a named set of bodies once, then run jobs over it. */
type ChildMessage = { kind: 'bodies'; set: string; bodies: Body[] } | ({ kind: 'run' } & Job);
interface Job {
  url: string;
  /** Name of a body set sent before; bodies are taken in order, continuing where the last job over this set stopped. */
  set: string;
  connections: number;
  durationSeconds: number;
}
interface Summary {
  latenciesMs: number[];
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  durationSeconds: number;
  /** Requests that reused a body already sent in this run (the set ran out). */
  reused: number;
}

// ---- load-generator child -------------------------------------------------------------------
const sets = new Map<string, { bodies: Body[]; next: number }>();
async function runJob(job: Job): Promise<Summary> {
  const latenciesMs: number[] = [];
  const set = sets.get(job.set);
  if (!set) throw new Error(`no body set ${job.set}`);
  let reused = 0;
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: job.durationSeconds,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => {
              if (set.next >= set.bodies.length) reused++;
              const b = set.bodies[set.next++ % set.bodies.length];
              return { ...req, body: b.body, headers: { 'content-type': 'application/json', 'x-bundle-signature': b.signature } };
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('response', (_c, status, _bytes, ms) => {
      if (status >= 200 && status < 300) latenciesMs.push(ms);
    });
  });
  return { latenciesMs, requests: r.requests.total, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors + r.timeouts, durationSeconds: r.duration, reused };
}

if (process.argv.includes('--child')) {
  process.on('message', (m: ChildMessage) => {
    if (m.kind === 'bodies') {
      sets.set(m.set, { bodies: m.bodies, next: 0 });
      process.send!({ ok: true });
      return;
    }
    runJob(m).then(
      (s) => process.send!({ ok: true, s }),
      (e: unknown) => process.send!({ ok: false, error: String(e) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
} else {
  void main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error('bench: failed:', e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}

// ---- parent ---------------------------------------------------------------------------------
function flags(): Record<string, number> {
  const out: Record<string, number> = { connections: 16, duration: 5, warmup: 1, bundles: 20_000 };
  for (const a of process.argv.slice(2)) {
    const m = /^--([a-z]+)=(\d+(?:\.\d+)?)$/.exec(a);
    if (m && m[1] in out) out[m[1]] = Number(m[2]);
    else {
      console.error(`unknown argument ${a}\nusage: npx tsx bench/builder.ts [--connections=16] [--duration=5] [--warmup=1] [--bundles=20000]`);
      process.exit(2);
    }
  }
  return out;
}

function loadGenerator() {
  const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = <T>(m: ChildMessage, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('load generator timed out')), timeoutMs);
      child.once('message', (a: { ok: boolean; s?: T; error?: string }) => {
        clearTimeout(timer);
        if (a.ok) resolve(a.s as T);
        else reject(new Error(a.error));
      });
      child.send(m);
    });
  return {
    load: (set: string, bodies: Body[]) => ask<void>({ kind: 'bodies', set, bodies }, 60_000),
    run: (job: Job) => ask<Summary>({ kind: 'run', ...job }, (job.durationSeconds + 30) * 1000),
    close: () => {
      if (child.connected) child.disconnect();
      child.kill('SIGKILL');
    },
  };
}

// ---- signing ahead of time (native secp256k1: 20,000 bundles in a few seconds) -------------------
const nativeSign = (
  createRequire(import.meta.url)('secp256k1/bindings') as {
    ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  }
).ecdsaSign;
const hex = (b: Uint8Array): Hex => `0x${Buffer.from(b).toString('hex')}`;

/** One signature as the crypto-only baseline replays it: the 32-byte digest and (r, s, recovery bit). */
interface Recovery {
  digest: Uint8Array;
  r: bigint;
  s: bigint;
  bit: number;
}
interface SignedTx {
  raw: Hex;
  recovery: Recovery;
}
function sign(digest: Uint8Array, key: Uint8Array): Recovery & { sig: Uint8Array } {
  const { signature, recid } = nativeSign(digest, key);
  return { digest, sig: signature, r: BigInt(hex(signature.subarray(0, 32))), s: BigInt(hex(signature.subarray(32))), bit: recid };
}
function signTx(key: Uint8Array, nonce: number, to: Address): SignedTx {
  const tx = {
    type: 'eip1559',
    chainId: 1,
    nonce,
    to,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: parseGwei('50'),
    maxPriorityFeePerGas: parseGwei('2'),
  } as const;
  const rec = sign(keccak256(serializeTransaction(tx), 'bytes'), key);
  return { raw: serializeTransaction(tx, { r: hex(rec.sig.subarray(0, 32)), s: hex(rec.sig.subarray(32)), yParity: rec.bit }), recovery: rec };
}
function signBody(body: string, key: Uint8Array, address: Address): { body: Body; recovery: Recovery } {
  const rec = sign(hexToBytes(hashMessage(keccak256(stringToHex(body)))), key);
  return { body: { body, signature: `${address}:0x${Buffer.from(rec.sig).toString('hex')}${(27 + rec.bit).toString(16)}` }, recovery: rec };
}

/** Bundles per second of `recoveries` (two per bundle) replayed on this thread with `backend`, over at least `minMs`. */
function cryptoOnly(bundles: readonly { header: Recovery; tx: Recovery }[], backend: Secp256k1Backend, minMs: number): { perSecond: number; bundles: number } {
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    for (const b of bundles) {
      recoverAddress(b.header.digest, b.header.r, b.header.s, b.header.bit, backend);
      recoverAddress(b.tx.digest, b.tx.r, b.tx.s, b.tx.bit, backend);
      done++;
      if ((done & 63) === 0 && performance.now() - t0 >= minMs) break;
    }
  }
  return { perSecond: done / ((performance.now() - t0) / 1000), bundles: done };
}

/** The baseline: a bare jayson server on node:http that reads and parses the body and answers null. */
async function startBaseline(): Promise<{ url: string; server: Server }> {
  const rpc = new jayson.Server({ eth_sendBundle: (_params: unknown, cb: (e: null, r: null) => void) => cb(null, null) } as never);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
        return;
      }
      rpc.call(body as never, (err, response) => {
        const text = JSON.stringify(err ?? response);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
        res.end(text);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`, server };
}

interface Side {
  p50: number;
  p99: number;
  reqPerSec: number;
  ok: number;
  failures: number;
}
const side = (s: Summary): Side => ({
  p50: percentile(s.latenciesMs, 50),
  p99: percentile(s.latenciesMs, 99),
  reqPerSec: s.ok / s.durationSeconds,
  ok: s.ok,
  failures: s.non2xx + s.errors,
});

async function main(): Promise<number> {
  const f = flags();
  const t0 = performance.now();
  console.log(`bench builder: ${machine()}; ${new Date().toISOString()}`);
  let eth: AnvilInstance | undefined;
  let redis: RedisHandle | undefined;
  let relays: DevRelays | undefined;
  let builder: RunningBuilder | undefined;
  let baseline: { server: Server } | undefined;
  const gen = loadGenerator();
  const watchdog = setTimeout(() => {
    console.error('bench: hang guard hit; stopping');
    process.exit(1);
  }, 240_000);
  watchdog.unref();
  try {
    [eth, redis, relays] = await Promise.all([startEthereumDevChain(), resolveRedis({ preferPrivate: true }), startDevRelays()]);
    const config = builderConfigFromEnv(
      {},
      {
        port: 0,
        redisUrl: redis.url,
        keyPrefix: `acg:bench:${process.pid}:${Date.now()}:`,
        ethereumRpcUrl: eth.rpcUrl,
        relays: relays.relays.map((r) => ({ name: r.name, url: r.url })),
        devMining: true,
        slotMs: 0,
        headPollMs: 0,
        logLevel: 'silent',
        blsSecretKey: `0x${'22'.repeat(32)}`,
        rateLimit: { ratePerSecond: 1e9, burst: 1e9 },
      },
    );
    builder = await startBuilder(config, { bidder: false });
    const base = await startBaseline();
    baseline = base;

    // distinct signed one-transaction bundles from 64 senders, signed by 4 searchers, targeting a block ahead
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    const target = `0x${((await client.getBlockNumber()) + 50n).toString(16)}`;
    const tSign = performance.now();
    const key = (i: number) => hexToBytes(keccak256(stringToHex(`acg bench key ${i}`)));
    const senders = Array.from({ length: 64 }, (_, i) => key(i));
    const searchers = Array.from({ length: 4 }, (_, i) => ({ key: key(1000 + i), address: privateKeyToAddress(hex(key(1000 + i))) }));
    const to = privateKeyToAddress(hex(key(2000)));
    const bodyFor = (id: number, raw: Hex) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_sendBundle', params: [{ txs: [raw], blockNumber: target }] });
    const fresh: Body[] = [];
    const replay: { header: Recovery; tx: Recovery }[] = [];
    for (let i = 0; i < f.bundles; i++) {
      const tx = signTx(senders[i % senders.length], Math.floor(i / senders.length), to);
      const searcher = searchers[i % searchers.length];
      const signed = signBody(bodyFor(i, tx.raw), searcher.key, searcher.address);
      fresh.push(signed.body);
      if (replay.length < 2000) replay.push({ header: signed.recovery, tx: tx.recovery });
    }
    // distinct bodies (new ids) carrying the first 200 transactions again
    const resent: Body[] = [];
    const resentTxs = fresh.slice(0, 200).map((b) => (JSON.parse(b.body) as { params: [{ txs: [Hex] }] }).params[0].txs[0]);
    for (let i = 0; i < f.bundles; i++) {
      const searcher = searchers[i % searchers.length];
      resent.push(signBody(bodyFor(1_000_000 + i, resentTxs[i % resentTxs.length]), searcher.key, searcher.address).body);
    }
    const signSeconds = (performance.now() - tSign) / 1000;
    // a few extra bodies check that the builder accepts what the bench sends (result null), before anything is timed
    for (let i = 0; i < 8; i++) {
      const tx = signTx(senders[i], 1_000_000 + i, to);
      const b = signBody(bodyFor(2_000_000 + i, tx.raw), searchers[0].key, searchers[0].address).body;
      const res = (await (
        await fetch(builder.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bundle-signature': b.signature }, body: b.body })
      ).json()) as { result?: unknown; error?: unknown };
      if (res.result !== null || res.error) throw new Error(`the builder did not accept a bench bundle: ${JSON.stringify(res)}`);
    }
    clearTxSenderCache();
    await gen.load('fresh', fresh);
    await gen.load('resent', resent);
    console.log(
      `bench: stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s (anvil ${eth.rpcUrl}, private redis, 4 relays, builder ${builder.rpcUrl}); ${fresh.length} + ${resent.length} signed bundles (${signSeconds.toFixed(1)} s to sign)\n`,
    );

    const job = (url: string, set: string, durationSeconds: number): Job => ({ url, set, connections: f.connections, durationSeconds });
    if (f.warmup > 0) {
      await gen.run(job(builder.rpcUrl, 'fresh', f.warmup));
      await gen.run(job(base.url, 'resent', f.warmup));
    }
    const bFresh = await gen.run(job(builder.rpcUrl, 'fresh', f.duration));
    const rBare = await gen.run(job(base.url, 'resent', f.duration));
    const bResent = await gen.run(job(builder.rpcUrl, 'resent', f.duration));
    const b = side(bFresh);
    const br = side(bResent);
    const r = side(rBare);
    const health = await (await import('@acg/bundles')).readBuilderHealth(builder.redis, builder.keys);
    // the crypto limit: the same two recoveries per bundle, on this thread, no HTTP (after the load, on a quiet process)
    const backend = secp256k1Backend();
    const cryptoNative = cryptoOnly(replay, backend, 2000);
    const cryptoJs = cryptoOnly(replay.slice(0, 200), 'noble', 1500);

    console.log(
      `eth_sendBundle intake, ${f.connections} connections, ${f.duration} s each (HTTP 200 JSON-RPC responses; latency = request sent → response received)`,
    );
    console.log(
      table(
        ['', 'p50 ms', 'p99 ms', 'bundles/s', 'ok', 'failed'],
        [
          ['builder POST /rpc, every tx new (2 recoveries)', fmt(b.p50, 2), fmt(b.p99, 2), fmt(b.reqPerSec, 0), String(b.ok), String(b.failures)],
          ['builder POST /rpc, txs resent (sender cached)', fmt(br.p50, 2), fmt(br.p99, 2), fmt(br.reqPerSec, 0), String(br.ok), String(br.failures)],
          ['baseline: bare jayson (JSON parse only)', fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.reqPerSec, 0), String(r.ok), String(r.failures)],
          [`crypto only: 2 recoveries/bundle, ${backend}, 1 thread`, '', '', fmt(cryptoNative.perSecond, 0), String(cryptoNative.bundles), ''],
          ['crypto only: 2 recoveries/bundle, noble (pure JS)', '', '', fmt(cryptoJs.perSecond, 0), String(cryptoJs.bundles), ''],
          ['docs/spec-notes.md 4 reference', fmt(SPEC_P50_MS, 0), fmt(SPEC_P99_MS, 0), 'n/a', '', ''],
        ],
      ),
    );
    const reused = bFresh.reused;
    console.log(
      `\nbundles counted by the builder (bids_received): ${health?.bids_received ?? 0}; secp256k1 backend: ${backend}; ` +
        (reused > 0 ? `${reused} requests of the "every tx new" run reused a body (raise --bundles)` : 'no body of the "every tx new" run was sent twice'),
    );
    console.log('Ratios:');
    console.log(
      `  builder (every tx new) / crypto limit (${backend}): bundles/s ${fmtRatio(ratio(b.reqPerSec, cryptoNative.perSecond))} (1.00x would mean intake costs nothing but the two recoveries)`,
    );
    console.log(
      `  builder / bare jayson: req/s ${fmtRatio(ratio(b.reqPerSec, r.reqPerSec))}, p50 ${fmtRatio(ratio(b.p50, r.p50))}, p99 ${fmtRatio(ratio(b.p99, r.p99))}`,
    );
    console.log(
      `  builder / spec figure: p50 ${fmtRatio(ratio(b.p50, SPEC_P50_MS))}, p99 ${fmtRatio(ratio(b.p99, SPEC_P99_MS))} (below 1: faster than the spec's typical latency)`,
    );
    console.log(
      `  load average (1, 5, 15 min) at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}`,
    );
    console.log(`  machine: ${machine()}`);
  } finally {
    gen.close();
    await builder?.close().catch(() => undefined);
    await new Promise<void>((r) => (baseline ? baseline.server.close(() => r()) : r()));
    await Promise.allSettled([relays?.close(), eth?.stop(), redis?.stop()]);
    clearTimeout(watchdog);
  }
  console.log(`bench: done in ${((performance.now() - t0) / 1000).toFixed(1)} s; everything it started is stopped.`);
  return 0;
}
