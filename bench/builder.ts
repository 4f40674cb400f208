/**
 * `npx tsx bench/builder.ts [--connections=16] [--duration=5] [--warmup=1] [--bundles=200]`
 *
 * eth_sendBundle intake latency (p50/p99) and throughput of the builder's `POST /rpc`, against a
 * baseline measured in the same run: a bare jayson 5 server on node:http that only reads and
 * parses the JSON body and answers `result: null`. SPEC 4's figures (about 420 ms p50, 1200 ms p99)
 * are printed beside them as the reference.
 *
 * Setup (all started here, all stopped at the end): the Ethereum dev chain (anvil, chain id 1), a
 * private redis-server, four local relays and the builder with its bidder off (intake only). Bodies
 * are signed ahead of time (distinct one-transaction bundles, Flashbots signature), so the load
 * generator — a forked child process running autocannon — does no crypto. The builder's path per
 * request: token bucket (one Redis Lua call) → body → X-Bundle-Signature recovery → tx decode and
 * sender recovery → head check → pool MULTI. The rate limit is raised for the bench (one IP sends
 * everything); its Redis call still runs. Nothing here asserts on speed.
 */
import { fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { devAccount, resolveRedis, startEthereumDevChain, type AnvilInstance, type RedisHandle } from '@acg/devnet';
import autocannon from 'autocannon';
import jayson from 'jayson';
import { createPublicClient, http, keccak256, parseGwei, stringToHex } from 'viem';
import { builderConfigFromEnv, startBuilder, startDevRelays, type DevRelays, type RunningBuilder } from '../apps/builder/src/index.js';
import { fmt, fmtRatio, machine, percentile, ratio, table } from './lib/stats.js';

/** SPEC 4 reference figures for bundle submission, milliseconds. */
const SPEC_P50_MS = 420;
const SPEC_P99_MS = 1200;

interface Job {
  url: string;
  bodies: { body: string; signature: string }[];
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
}

// ---- load-generator child -------------------------------------------------------------------
async function runJob(job: Job): Promise<Summary> {
  const latenciesMs: number[] = [];
  let next = 0;
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
              const b = job.bodies[next++ % job.bodies.length];
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
  return { latenciesMs, requests: r.requests.total, ok: r['2xx'], non2xx: r.non2xx, errors: r.errors + r.timeouts, durationSeconds: r.duration };
}

if (process.argv.includes('--child')) {
  process.on('message', (job: Job) => {
    runJob(job).then(
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
  const out: Record<string, number> = { connections: 16, duration: 5, warmup: 1, bundles: 200 };
  for (const a of process.argv.slice(2)) {
    const m = /^--([a-z]+)=(\d+(?:\.\d+)?)$/.exec(a);
    if (m && m[1] in out) out[m[1]] = Number(m[2]);
    else {
      console.error(`unknown argument ${a}\nusage: npx tsx bench/builder.ts [--connections=16] [--duration=5] [--warmup=1] [--bundles=200]`);
      process.exit(2);
    }
  }
  return out;
}

function loadGenerator() {
  const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return {
    run: (job: Job) =>
      new Promise<Summary>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('load generator timed out')), (job.durationSeconds + 30) * 1000);
        child.once('message', (m: { ok: boolean; s?: Summary; error?: string }) => {
          clearTimeout(timer);
          if (m.ok) resolve(m.s!);
          else reject(new Error(m.error));
        });
        child.send(job);
      }),
    close: () => {
      if (child.connected) child.disconnect();
      child.kill('SIGKILL');
    },
  };
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

    // distinct signed one-transaction bundles, signed by 4 searchers, targeting a block ahead
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    const target = `0x${((await client.getBlockNumber()) + 50n).toString(16)}`;
    const bodies: Job['bodies'] = [];
    for (let i = 0; i < f.bundles; i++) {
      const sender = devAccount(2 + (i % 8));
      const raw = await sender.signTransaction({
        type: 'eip1559',
        chainId: 1,
        nonce: Math.floor(i / 8),
        to: devAccount(1).address,
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: parseGwei('50'),
        maxPriorityFeePerGas: parseGwei('2'),
      });
      const body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendBundle', params: [{ txs: [raw], blockNumber: target }] });
      const searcher = devAccount(i % 4);
      bodies.push({ body, signature: `${searcher.address}:${await searcher.signMessage({ message: keccak256(stringToHex(body)) })}` });
    }
    // every body is accepted (result null) before anything is timed
    for (const b of bodies.slice(0, 8)) {
      const res = (await (
        await fetch(builder.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bundle-signature': b.signature }, body: b.body })
      ).json()) as { result?: unknown; error?: unknown };
      if (res.result !== null || res.error) throw new Error(`the builder did not accept a bench bundle: ${JSON.stringify(res)}`);
    }
    console.log(
      `bench: stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s (anvil ${eth.rpcUrl}, private redis, 4 relays, builder ${builder.rpcUrl}); ${bodies.length} signed bundles\n`,
    );

    const job = (url: string, durationSeconds: number): Job => ({ url, bodies, connections: f.connections, durationSeconds });
    if (f.warmup > 0) {
      await gen.run(job(builder.rpcUrl, f.warmup));
      await gen.run(job(base.url, f.warmup));
    }
    const b = side(await gen.run(job(builder.rpcUrl, f.duration)));
    const r = side(await gen.run(job(base.url, f.duration)));
    const health = await (await import('@acg/bundles')).readBuilderHealth(builder.redis, builder.keys);

    console.log(
      `eth_sendBundle intake, ${f.connections} connections, ${f.duration} s each (HTTP 200 JSON-RPC responses; latency = request sent → response received)`,
    );
    console.log(
      table(
        ['', 'p50 ms', 'p99 ms', 'req/s', 'ok', 'failed'],
        [
          ['builder POST /rpc', fmt(b.p50, 2), fmt(b.p99, 2), fmt(b.reqPerSec, 0), String(b.ok), String(b.failures)],
          ['baseline: bare jayson (JSON parse only)', fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.reqPerSec, 0), String(r.ok), String(r.failures)],
          ['SPEC 4 reference', fmt(SPEC_P50_MS, 0), fmt(SPEC_P99_MS, 0), 'n/a', '', ''],
        ],
      ),
    );
    console.log(`\nbundles counted by the builder (bids_received): ${health?.bids_received ?? 0}`);
    console.log('Ratios:');
    console.log(
      `  builder / bare jayson: req/s ${fmtRatio(ratio(b.reqPerSec, r.reqPerSec))}, p50 ${fmtRatio(ratio(b.p50, r.p50))}, p99 ${fmtRatio(ratio(b.p99, r.p99))}`,
    );
    console.log(
      `  builder / SPEC figure: p50 ${fmtRatio(ratio(b.p50, SPEC_P50_MS))}, p99 ${fmtRatio(ratio(b.p99, SPEC_P99_MS))} (below 1: faster than the SPEC's typical latency)`,
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
