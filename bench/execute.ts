/**
 * Paid `POST /api/v1/execute` (capability `intelligence.wallet_balances`) through the gateway vs
 * the reference x402 server: `@x402/express` `paymentMiddleware` + `x402ResourceServer` with the
 * exact EVM server scheme, on an express 5 app whose handler does the same work (native + USDC
 * balance at one block, viem multicall). Both sides use the same in-process facilitator
 * (`createInProcessFacilitator`, dev account 0, viem nonceManager) on the same anvil chain, and
 * the same price, asset, network and payTo. Every paid call carries a fresh EIP-3009
 * authorization made by the official client (`@x402/fetch` `wrapFetchWithPayment`), from several
 * buyers concurrently, in a separate load-generator process.
 *
 * The two sides never run at the same time: both are warmed up, then measured in the order
 * gateway, reference, reference, gateway (half the calls each), on one chain with one facilitator
 * account, so its nonces stay consistent and neither side's settlements compete with the other's.
 * The server process is shared, so the JIT warm-up of shared code (viem, @x402/core) helps
 * whichever side runs second; the interleaving cancels that and other drift.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devAccount, devPrivateKey, usdcBalance, type DevStack } from '@acg/devnet';
import { paymentChain } from '@acg/gateway';
import { createInProcessFacilitator } from '@acg/payments';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { registerExactEvmScheme } from '@x402/evm/exact/server';
import express from 'express';
import { createPublicClient, http, type PublicClient } from 'viem';
import { walletBalances } from '@acg/capabilities';
import { LoadGenerator, type PaidSummary } from './lib/load.js';
import { definedOnly, fmt, fmtRatio, percentile, ratio, table } from './lib/stats.js';

const CAPABILITY = 'intelligence.wallet_balances';
/** 0.001 USD in USDC base units (6 decimals): the capability's catalog price. */
const PRICE_UNITS = 1000n;

export interface ExecuteBenchOptions {
  /** Concurrent callers, one buyer account each (at most 8: dev accounts 2 to 9). */
  buyers?: number;
  /** Measured paid calls per side (split evenly over the buyers). */
  calls?: number;
  /** Unmeasured paid calls per buyer before the measured phase. */
  warmupPerBuyer?: number;
  /** Bound on one paid call (both HTTP round trips), ms. */
  callTimeoutMs?: number;
}

export interface ExecuteSide {
  name: string;
  /** Measured calls that succeeded (200 with PAYMENT-RESPONSE) and failed. */
  ok: number;
  failed: number;
  warmupOk: number;
  warmupFailed: number;
  /** Up to 3 failure descriptions. */
  failures: string[];
  /** Successful measured paid calls per second of measured wall time. */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** p50 of the 402 round trip alone, and of the paid retry alone (client side), ms: where a call's time goes. */
  challengeP50Ms: number;
  paidP50Ms: number;
  /** Payments that reached the treasury on-chain during this side's run (warm-up included). */
  settledOnChain: bigint;
  /**
   * CPU time of this process (the server under test and the facilitator, which both sides share)
   * per successful measured call, ms: user + system over the measured runs. anvil, Redis and the
   * load generator are other processes and not counted.
   */
  serverCpuMsPerCall: number;
}

export interface ExecuteBenchResult {
  gateway: ExecuteSide;
  reference: ExecuteSide;
  settings: Required<ExecuteBenchOptions>;
  /** Measured paid calls per side (calls rounded up to a multiple of buyers). */
  callsPerSide: number;
}

/**
 * The reference server: express 5 + `@x402/express` `paymentMiddleware` guarding
 * `POST /api/v1/execute` at the same price, and a handler that reads the same two balances.
 */
export async function startReference(stack: DevStack): Promise<{ url: string; server: Server }> {
  const { rpcUrl, treasury, network } = stack.payment;
  const chain = paymentChain(rpcUrl);
  const facilitator = createInProcessFacilitator({ rpcUrl, chain, signer: devPrivateKey(0), networks: [network] });
  const resourceServer = new x402ResourceServer(facilitator);
  registerExactEvmScheme(resourceServer, { networks: [network] });
  const client = createPublicClient({ chain, transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }), batch: { multicall: false } });

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  app.use(
    paymentMiddleware(
      {
        'POST /api/v1/execute': {
          accepts: { scheme: 'exact', price: '$0.001', network, payTo: treasury.address, maxTimeoutSeconds: 300 },
          description: 'intelligence.wallet_balances',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  // the very same handler code the gateway runs (input schema, multicall read, output schema)
  const deps = { chainClient: () => client as unknown as PublicClient };
  app.post('/api/v1/execute', async (req, res) => {
    const body = req.body as { capability_id?: unknown; input?: unknown } | undefined;
    const input = walletBalances.input.safeParse(body?.input);
    if (body?.capability_id !== CAPABILITY || !input.success) {
      res.status(400).json({ error: 'bad input' });
      return;
    }
    try {
      const result = walletBalances.output.parse(await walletBalances.run(input.data, deps));
      res.json({ capability_id: CAPABILITY, status: 'SUCCEEDED', result });
    } catch {
      res.status(503).json({ error: 'chain_unavailable' });
    }
  });

  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** One side under test: its URL and what its runs accumulated. */
interface Side {
  name: string;
  url: string;
  runs: PaidSummary[];
  warmup: PaidSummary[];
  settled: bigint;
  /** Process CPU microseconds (user + system) spent during the measured runs. */
  cpuMicros: number;
}

/** Runs `callsPerBuyer` paid calls per buyer against `side`, counting the payments that reached the treasury. */
async function paidRun(
  load: LoadGenerator,
  stack: DevStack,
  side: Side,
  s: Required<ExecuteBenchOptions>,
  callsPerBuyer: number,
  warmup: boolean,
): Promise<void> {
  if (callsPerBuyer <= 0) return;
  const { rpcUrl, usdc, treasury } = stack.payment;
  const before = await usdcBalance(rpcUrl, treasury.address, usdc);
  const cpu = process.cpuUsage();
  const summary = await load.run(
    {
      kind: 'paid',
      url: side.url,
      capabilityId: CAPABILITY,
      buyerIndexes: Array.from({ length: s.buyers }, (_, i) => 2 + i),
      callsPerBuyer,
      callTimeoutMs: s.callTimeoutMs,
    },
    // Every call is bounded; this bounds the whole run.
    callsPerBuyer * s.callTimeoutMs + 30_000,
  );
  const used = process.cpuUsage(cpu);
  if (!warmup) side.cpuMicros += used.user + used.system;
  const after = await usdcBalance(rpcUrl, treasury.address, usdc);
  side.settled += (after - before) / PRICE_UNITS;
  (warmup ? side.warmup : side.runs).push(summary);
}

function summarize(side: Side): ExecuteSide {
  const ok = side.runs.reduce((a, r) => a + r.ok, 0);
  const wallMs = side.runs.reduce((a, r) => a + r.wallMs, 0);
  const latencies = side.runs.flatMap((r) => r.latenciesMs);
  const all = [...side.warmup, ...side.runs];
  return {
    name: side.name,
    ok,
    failed: side.runs.reduce((a, r) => a + r.failed, 0),
    warmupOk: side.warmup.reduce((a, r) => a + r.ok, 0),
    warmupFailed: side.warmup.reduce((a, r) => a + r.failed, 0),
    failures: all.flatMap((r) => r.failures).slice(0, 3),
    throughput: ok / (wallMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    challengeP50Ms: percentile(
      side.runs.flatMap((r) => r.challengeMs),
      50,
    ),
    paidP50Ms: percentile(
      side.runs.flatMap((r) => r.paidMs),
      50,
    ),
    settledOnChain: side.settled,
    serverCpuMsPerCall: ok > 0 ? side.cpuMicros / 1000 / ok : Number.NaN,
  };
}

/** The settings with their defaults, checked against the dev stack's buyers. */
function executeSettings(stack: DevStack, opts: ExecuteBenchOptions): Required<ExecuteBenchOptions> {
  const settings = { buyers: 4, calls: 100, warmupPerBuyer: 5, callTimeoutMs: 30_000, ...definedOnly(opts) };
  if (!(settings.buyers >= 1 && settings.buyers <= stack.payment.buyers.length)) throw new Error(`buyers must be 1..${stack.payment.buyers.length}`);
  for (let i = 0; i < settings.buyers; i++) {
    if (devAccount(2 + i).address !== stack.payment.buyers[i].address) throw new Error('buyer accounts do not match the dev stack');
  }
  return settings;
}

/**
 * Measures two sides (`a`, `b`: a name and the server's base URL) with paid calls: warm-up on both,
 * then the measured calls in the order A, B, B, A (half each), so warm-up and drift favour neither side.
 */
async function measurePair(
  stack: DevStack,
  settings: Required<ExecuteBenchOptions>,
  a: { name: string; url: string },
  b: { name: string; url: string },
): Promise<{ a: ExecuteSide; b: ExecuteSide; callsPerSide: number }> {
  const perBuyer = Math.ceil(settings.calls / settings.buyers);
  const first = Math.ceil(perBuyer / 2);
  const second = perBuyer - first;
  const load = LoadGenerator.start();
  try {
    const side = (s: { name: string; url: string }): Side => ({
      name: s.name,
      url: `${s.url}/api/v1/execute`,
      runs: [],
      warmup: [],
      settled: 0n,
      cpuMicros: 0,
    });
    const [sa, sb] = [side(a), side(b)];
    await paidRun(load, stack, sa, settings, settings.warmupPerBuyer, true);
    await paidRun(load, stack, sb, settings, settings.warmupPerBuyer, true);
    await paidRun(load, stack, sa, settings, first, false);
    await paidRun(load, stack, sb, settings, first, false);
    await paidRun(load, stack, sb, settings, second, false);
    await paidRun(load, stack, sa, settings, second, false);
    return { a: summarize(sa), b: summarize(sb), callsPerSide: perBuyer * settings.buyers };
  } finally {
    load.close();
  }
}

/**
 * Runs the paid-execute benchmark: warm-up on both sides, then the measured calls in the order
 * gateway, reference, reference, gateway (half each), so warm-up and drift favour neither side.
 */
export async function benchExecute(gatewayUrl: string, stack: DevStack, opts: ExecuteBenchOptions = {}): Promise<ExecuteBenchResult> {
  const settings = executeSettings(stack, opts);
  const reference = await startReference(stack);
  try {
    const m = await measurePair(stack, settings, { name: 'gateway', url: gatewayUrl }, { name: '@x402/express reference', url: reference.url });
    return { gateway: m.a, reference: m.b, settings, callsPerSide: m.callsPerSide };
  } finally {
    await new Promise<void>((resolve) => {
      reference.server.close(() => resolve());
      reference.server.closeAllConnections();
    });
  }
}

/** Two gateways on one chain, each on its own private Redis, by AOF setting (docs/durability.md). */
export interface DurableWritesBenchResult {
  /** `appendonly yes`, `appendfsync always`: every write on disk before Redis answers it (production). */
  always: ExecuteSide;
  /** `appendonly yes`, `appendfsync everysec`: fsync once a second (a machine crash loses about a second of writes). */
  everysec: ExecuteSide;
  settings: Required<ExecuteBenchOptions>;
  callsPerSide: number;
}

/**
 * The cost of durable writes: the same paid calls against a gateway whose Redis runs `appendfsync
 * always` and one whose Redis runs `appendfsync everysec` (two private redis-servers, one chain),
 * measured in the order always, everysec, everysec, always.
 */
export async function benchDurableWrites(
  alwaysUrl: string,
  everysecUrl: string,
  stack: DevStack,
  opts: ExecuteBenchOptions = {},
): Promise<DurableWritesBenchResult> {
  const settings = executeSettings(stack, opts);
  const m = await measurePair(stack, settings, { name: 'appendfsync always', url: alwaysUrl }, { name: 'appendfsync everysec', url: everysecUrl });
  return { always: m.a, everysec: m.b, settings, callsPerSide: m.callsPerSide };
}

/** The durable-writes comparison as a table with the ratio always/everysec. */
export function formatDurableWrites(r: DurableWritesBenchResult, settingsRead: { always: string; everysec: string }): string {
  const perSide = r.callsPerSide;
  const row = (x: ExecuteSide, setting: string) => [...sideCells(x, perSide), setting];
  const lines = [
    `The cost of durable writes: the same paid execute against two gateways on one chain, each on its own private`,
    `  redis-server (order A E E A, ${perSide} measured paid calls per side after ${r.settings.warmupPerBuyer * r.settings.buyers} warm-up calls each)`,
    '',
    table(
      ['', 'paid calls/s', 'p50 ms', 'p99 ms', 'ok', 'setting the gateway read at start'],
      [row(r.always, settingsRead.always), row(r.everysec, settingsRead.everysec), [...ratioCells('ratio always/everysec', r.always, r.everysec), '']],
    ),
    ...failureLines([r.always, r.everysec]),
  ];
  return lines.join('\n');
}

/** A side's first table cells: name, paid calls/s, p50 and p99 ms, ok of the calls per side. */
function sideCells(x: ExecuteSide, perSide: number): string[] {
  return [x.name, fmt(x.throughput, 1), fmt(x.p50Ms, 0), fmt(x.p99Ms, 0), `${x.ok}/${perSide}`];
}

/** A ratio row's first cells: `label`, then a/b of paid calls/s, p50 and p99, and an empty `ok` cell. */
function ratioCells(label: string, a: ExecuteSide, b: ExecuteSide): string[] {
  return [label, fmtRatio(ratio(a.throughput, b.throughput)), fmtRatio(ratio(a.p50Ms, b.p50Ms)), fmtRatio(ratio(a.p99Ms, b.p99Ms)), ''];
}

/** One line per side that had failed calls, with up to 3 of them. */
function failureLines(sides: readonly ExecuteSide[]): string[] {
  return sides.filter((x) => x.failed + x.warmupFailed > 0).map((x) => `${x.name}: ${x.failed + x.warmupFailed} failed calls, e.g. ${x.failures.join(' | ')}`);
}

/** The result as a compact table with the ratios gateway/reference, plus the caveat. */
export function formatExecute(r: ExecuteBenchResult): string {
  const s = r.settings;
  const perSide = r.callsPerSide;
  const row = (x: ExecuteSide) => [
    ...sideCells(x, perSide),
    fmt(x.challengeP50Ms, 0),
    fmt(x.paidP50Ms, 0),
    String(x.settledOnChain),
    fmt(x.serverCpuMsPerCall, 1),
  ];
  const lines = [
    `POST /api/v1/execute (${CAPABILITY}, 0.001 USDC), paid with @x402/fetch: ${s.buyers} buyers concurrently,`,
    `  ${perSide} measured paid calls per side (2 halves, order G R R G) after ${s.warmupPerBuyer * s.buyers} warm-up calls each;`,
    '  one call = 402 challenge + EIP-3009 signature + paid retry (verify, settle on anvil, multicall read)',
    '',
    table(
      ['', 'paid calls/s', 'p50 ms', 'p99 ms', 'ok', '402 p50 ms', 'paid retry p50 ms', 'settled on-chain*', 'server CPU ms/call**'],
      [
        row(r.gateway),
        row(r.reference),
        [
          ...ratioCells('ratio gateway/reference', r.gateway, r.reference),
          fmtRatio(ratio(r.gateway.challengeP50Ms, r.reference.challengeP50Ms)),
          fmtRatio(ratio(r.gateway.paidP50Ms, r.reference.paidP50Ms)),
          '',
          fmtRatio(ratio(r.gateway.serverCpuMsPerCall, r.reference.serverCpuMsPerCall)),
        ],
      ],
    ),
    "* payments that reached the treasury in USDC during that side's runs, warm-up included.",
    '** CPU of the bench process (server + the shared in-process facilitator; not anvil, Redis or the clients)',
    '   per successful measured call.',
    '',
    'Note: happy path only. The reference middleware verifies, runs the handler, then settles: a payment sent',
    'twice concurrently runs its handler twice (one settlement then reverts, gas paid for nothing). The gateway',
    'reserves (from, nonce) in Redis and settles before executing, so a duplicate never runs twice; that extra',
    'work (Redis round trips, the stored execution) is included in its numbers above.',
    ...failureLines([r.gateway, r.reference]),
  ];
  return lines.join('\n');
}
