/**
 * `npm run bench [-- registry|execute|jobs|builder|liquidations|liquidation-plans|wallet-monitor] [--connections=N] [--duration=S] [--calls=N] [--buyers=N] [--batch-calls=N] [--schemes=exact,upto,batch-settlement]`
 *
 * Starts a private dev stack (anvil with chain id 8453, real USDC, Multicall3; a private
 * redis-server) and the gateway on it, runs the benchmarks, prints each one's table and the
 * ratios against a baseline measured in the same run, then stops everything it started.
 * Nothing here asserts on speed: it exits 0 whenever the benchmarks ran.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { asyncLogDestination, createLogger } from '@acg/observability';
import { startTestGateway, type TestGateway } from '../apps/gateway/test/harness.js';
import { resolveRedis, type RedisHandle } from '@acg/devnet';
import {
  benchDurableWrites,
  benchExecute,
  formatDurableWrites,
  formatExecute,
  PAYMENT_SCHEMES,
  type DurableWritesBenchResult,
  type ExecuteBenchResult,
  type PaymentScheme,
} from './execute.js';
import { benchJobs, formatJobs, type JobsBenchResult } from './jobs.js';
import { benchRegistry, formatRegistry, sizeSpread, type RegistryBenchResult } from './registry.js';
import { startRoutedOffers, type RoutedOffers } from './lib/routedOffers.js';
import { fmt, fmtRatio, machine, ratio } from './lib/stats.js';

/** Hang guard (not a speed assertion): the whole run is stopped and cleaned up after this. */
const WATCHDOG_MS = 900_000;
const NAMES = ['registry', 'execute', 'jobs', 'builder', 'liquidations', 'liquidation-plans', 'wallet-monitor'] as const;
/** Benchmarks that start their own stack: run as child processes after the gateway ones. */
const STANDALONE: Partial<Record<Name, string>> = {
  builder: 'builder.ts',
  liquidations: 'liquidations.ts',
  'liquidation-plans': 'liquidationPlans.ts',
  'wallet-monitor': 'walletMonitor.ts',
};
type Name = (typeof NAMES)[number];

function parseArgs(argv: string[]) {
  const names: Name[] = [];
  const flags: Record<string, number> = {};
  let schemes: PaymentScheme[] | undefined;
  const args = [...argv];
  for (let k = 0; k < args.length; k++) {
    const arg = args[k];
    // `--schemes exact,upto` or `--schemes=exact,upto` (paid execute only)
    const sm = /^--schemes(?:=(.*))?$/.exec(arg);
    if (sm) {
      const list = (sm[1] ?? args[++k] ?? '').split(',').filter(Boolean);
      const bad = list.filter((x) => !(PAYMENT_SCHEMES as readonly string[]).includes(x));
      if (list.length === 0 || bad.length > 0) {
        console.error(`--schemes takes a comma-separated list of ${PAYMENT_SCHEMES.join(', ')}; got ${JSON.stringify(sm[1] ?? args[k])}`);
        process.exit(2);
      }
      schemes = list as PaymentScheme[];
      continue;
    }
    const m = /^--([a-z-]+)=(\d+(?:\.\d+)?)$/.exec(arg);
    if (m && ['connections', 'duration', 'warmup', 'calls', 'buyers', 'batch-calls'].includes(m[1])) flags[m[1]] = Number(m[2]);
    else if ((NAMES as readonly string[]).includes(arg)) names.push(arg as Name);
    else {
      console.error(
        `unknown argument ${JSON.stringify(arg)}\nusage: npm run bench -- [registry] [execute] [jobs] [builder] [liquidations] [liquidation-plans] [wallet-monitor] [--connections=10] [--duration=5] [--warmup=1] [--calls=100] [--buyers=4] [--batch-calls=1000] [--schemes=exact,upto,batch-settlement]`,
      );
      process.exit(2);
    }
  }
  return { names: names.length > 0 ? names : [...NAMES], flags, schemes };
}

/** A gateway's logger as deployed: `info` (BENCH_LOG_LEVEL) through the asynchronous destination production uses, to /dev/null. */
function benchLog() {
  return createLogger({ service: 'gateway', level: process.env.BENCH_LOG_LEVEL ?? 'info', destination: asyncLogDestination('/dev/null') });
}

async function main(): Promise<number> {
  const { names, flags, schemes } = parseArgs(process.argv.slice(2));
  const t0 = performance.now();
  console.log(`bench: ${machine()}; ${new Date().toISOString()}`);

  let gw: TestGateway | undefined;
  /** The durable-writes comparison's second gateway (same chain) and its private Redis with `appendfsync everysec`. */
  let everysecRedis: RedisHandle | undefined;
  let everysecGw: TestGateway | undefined;
  /** The `upto` row's routed capability: two providers in this process (./lib/routedOffers.ts). */
  let routed: RoutedOffers | undefined;
  let closing: Promise<void> | undefined;
  const cleanup = () =>
    (closing ??= (async () => {
      await routed?.close();
      await everysecGw?.close();
      await everysecRedis?.stop();
      await gw?.close();
    })().catch((e) => console.error('bench: cleanup error', e)));
  const abort = (why: string, code: number) => {
    console.error(`bench: ${why}; stopping what it started`);
    void cleanup().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  const watchdog = setTimeout(() => abort(`still running after ${WATCHDOG_MS / 1000} s (hang guard)`, 1), WATCHDOG_MS);
  watchdog.unref();

  let registry: RegistryBenchResult | undefined;
  let execute: ExecuteBenchResult | undefined;
  let durable: DurableWritesBenchResult | undefined;
  let jobs: JobsBenchResult | undefined;
  try {
    // As deployed: the limiter stays on (one Redis call per request) with room for one load
    // generator, and every request writes its `info` log line to /dev/null through the destination
    // createLogger gives production (sonic-boom, asynchronous, batched: asyncLogDestination).
    // With `batch-settlement` among the schemes measured, the gateway accepts it as an operator turns it on
    // (PAYMENT_SCHEMES=exact,batch-settlement): its 402 then offers it beside `exact` (docs/decisions.md "batch-settlement").
    const acceptBatch = names.includes('execute') && (schemes ?? PAYMENT_SCHEMES).includes('batch-settlement');
    // With `upto` measured, the gateway gets a routed capability (the only kind, beside quotes, it offers
    // `upto` for): two providers on 127.0.0.1, so it accepts http endpoints on loopback, as in development.
    const routeUpto = names.includes('execute') && (schemes ?? PAYMENT_SCHEMES).includes('upto');
    if (names.some((n) => !STANDALONE[n]))
      gw = await startTestGateway({
        prober: false,
        config: {
          rateLimitPerSecond: 100_000,
          ...(acceptBatch ? { payment: { schemes: ['exact', 'batch-settlement'] } } : {}),
          ...(routeUpto ? { walletMonitor: { webhookPolicy: 'development' } } : {}),
        },
        log: benchLog(),
      });
    if (gw)
      console.log(
        `bench: dev stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s (anvil ${gw.stack.payment.rpcUrl}, private redis, gateway ${gw.url})\n`,
      );

    if (gw && names.includes('registry')) {
      registry = await benchRegistry(gw.url, {
        connections: flags.connections,
        durationSeconds: flags.duration,
        warmupSeconds: flags.warmup,
      });
      console.log(`${formatRegistry(registry)}\n  machine: ${machine()}\n`);
    }
    if (gw && names.includes('execute')) {
      if (routeUpto) routed = await startRoutedOffers(gw);
      execute = await benchExecute(
        gw.url,
        gw.stack,
        {
          calls: flags.calls,
          buyers: flags.buyers,
          schemes,
          batchCalls: flags['batch-calls'],
          connections: flags.connections,
        },
        routed,
      );
      console.log(`${formatExecute(execute)}\n  machine: ${machine()}\n`);
    }
    // the cost of durable writes (docs/durability.md): the same gateway on a Redis with appendfsync everysec, same chain (exact payments)
    if (gw && names.includes('execute') && (schemes ?? PAYMENT_SCHEMES).includes('exact')) {
      everysecRedis = await resolveRedis({ preferPrivate: true, persistence: 'everysec' });
      everysecGw = await startTestGateway({
        stack: gw.stack,
        prober: false,
        config: { rateLimitPerSecond: 100_000, redisUrl: everysecRedis.url, store: { allowNonDurable: true } },
        log: benchLog(),
      });
      durable = await benchDurableWrites(gw.url, everysecGw.url, gw.stack, { calls: flags.calls, buyers: flags.buyers });
      const settingsRead = { always: gw.gateway.store.setting, everysec: everysecGw.gateway.store.setting };
      console.log(`${formatDurableWrites(durable, settingsRead)}\n  machine: ${machine()}\n`);
    }
    if (gw && names.includes('jobs')) {
      jobs = await benchJobs(gw);
      console.log(`${formatJobs(jobs)}\n  machine: ${machine()}\n`);
    }
  } finally {
    await cleanup();
  }
  // the benchmarks with their own stacks (anvil chain 1, relays, lending dev data...), one at a time
  for (const name of names) {
    const file = STANDALONE[name];
    if (!file) continue;
    console.log(`\n== ${name} (bench/${file}) ==`);
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(`./${file}`, import.meta.url))], { stdio: 'inherit' });
      child.on('exit', (c) => resolve(c ?? 1));
    });
    if (code !== 0) console.log(`bench: ${name} exited with ${code}`);
  }
  clearTimeout(watchdog);

  if (registry || execute || jobs) console.log('\nRatios (gateway / baseline measured in this run; throughput > 1 and latency < 1 favour the gateway):');
  if (registry) {
    const { gateway: g, baseline: b } = registry;
    console.log(
      `  GET /registry vs bare node:http:         req/s ${fmtRatio(ratio(g.reqPerSec, b.reqPerSec))}, p50 ${fmtRatio(ratio(g.p50Ms, b.p50Ms))}, p99 ${fmtRatio(ratio(g.p99Ms, b.p99Ms))}, CPU/req ${fmtRatio(ratio(g.cpuMicrosPerRequest, b.cpuMicrosPerRequest))} (${fmt(g.cpuMicrosPerRequest, 0)} vs ${fmt(b.cpuMicrosPerRequest, 0)} µs)`,
    );
    if (registry.documents.length > 1) console.log(`    cached documents by body size: ${sizeSpread(registry.documents)}`);
  }
  for (const x of execute?.schemes ?? []) {
    const { gateway: g, reference: r } = x;
    const label = `${`  paid execute [${x.scheme}] vs @x402/express [${x.scheme}]:`.padEnd(57)} `;
    const ref = `reference ${fmt(r.throughput, 1)} calls/s, p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms, ${fmt(r.serverCpuMsPerCall, 2)} CPU ms/call`;
    console.log(
      g
        ? `${label}paid calls/s ${fmtRatio(ratio(g.throughput, r.throughput))}, p50 ${fmtRatio(ratio(g.p50Ms, r.p50Ms))}, p99 ${fmtRatio(ratio(g.p99Ms, r.p99Ms))}, CPU/call ${fmtRatio(ratio(g.serverCpuMsPerCall, r.serverCpuMsPerCall))} (gateway ${fmt(g.throughput, 1)} calls/s, p99 ${fmt(g.p99Ms, 1)} ms; ${ref})`
        : `${label}gateway: not offered (${ref})`,
    );
  }
  if (durable) {
    const { always: a, everysec: e } = durable;
    console.log(
      `  durable writes, appendfsync always vs everysec: paid calls/s ${fmtRatio(ratio(a.throughput, e.throughput))}, p50 ${fmtRatio(ratio(a.p50Ms, e.p50Ms))}, p99 ${fmtRatio(ratio(a.p99Ms, e.p99Ms))} (the cost of durability, docs/durability.md)`,
    );
  }
  if (jobs) {
    console.log(
      `  job runner per step vs plain BullMQ job:  ms per step ${fmtRatio(ratio(jobs.ours.perStepMs, jobs.baseline.perStepMs))} (lower favours the runner)`,
    );
  }
  if (registry || execute || jobs) console.log(`  machine: ${machine()}`);
  console.log(`bench: done in ${((performance.now() - t0) / 1000).toFixed(1)} s; everything it started is stopped.`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error('bench: failed:', e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
