/**
 * Paid `POST /api/v1/execute` (capability `intelligence.wallet_balances`) through the gateway vs the
 * reference x402 server **on the same payment scheme**, for each scheme of `--schemes` (`exact`, `upto`,
 * `batch-settlement`): `@x402/express` `paymentMiddleware` + `x402ResourceServer` with that scheme's
 * official EVM server scheme and an in-process facilitator with its official facilitator scheme
 * (./lib/x402Reference.ts), on an express 5 app whose handler does the same work (native + USDC balance
 * at one block, viem multicall). Both sides run on the same anvil chain with the same price, asset,
 * network and payTo. The load comes from the official x402 clients of the scheme in a separate process
 * (./lib/loadChild.ts), with the same client code for both sides.
 *
 * Whether the gateway offers a scheme is read from its own 402 (`accepts[].scheme`); a scheme it does not
 * offer yet is measured on the reference only and reported as "gateway: not offered yet".
 *
 * The two sides never run at the same time: both are warmed up, then measured in the order
 * gateway, reference, reference, gateway (half the calls each), on one chain with one facilitator
 * account, so its nonces stay consistent and neither side's settlements compete with the other's.
 * The server process is shared, so the JIT warm-up of shared code (viem, @x402/core) helps
 * whichever side runs second; the interleaving cancels that and other drift.
 */
import { devAccount, usdcBalance, type DevStack } from '@acg/devnet';
import { walletBalances } from '@acg/capabilities';
import { x402HTTPClient } from '@x402/core/client';
import { x402Client } from '@x402/fetch';
import { createPublicClient, http, type PublicClient } from 'viem';
import { LoadGenerator, type PaidJob, type PaidSummary } from './lib/load.js';
import { definedOnly, fmt, fmtRatio, percentile, ratio, table } from './lib/stats.js';
import { approvePermit2, PAYMENT_SCHEMES, startX402Reference, type PaymentScheme, type X402Reference } from './lib/x402Reference.js';

export { PAYMENT_SCHEMES, type PaymentScheme };

const CAPABILITY = 'intelligence.wallet_balances';
/** 0.001 USD in USDC base units (6 decimals): the capability's catalog price. */
const PRICE_UNITS = 1000n;

export interface ExecuteBenchOptions {
  /** Concurrent callers, one buyer account each (at most 8: dev accounts 2 to 9). */
  buyers?: number;
  /** Measured paid calls per side for `exact` and `upto` (split evenly over the buyers). */
  calls?: number;
  /** Unmeasured paid calls per caller before the measured phase. */
  warmupPerBuyer?: number;
  /** Bound on one paid call (both HTTP round trips), ms. */
  callTimeoutMs?: number;
  /** The schemes to measure, in this order (default all three). */
  schemes?: PaymentScheme[];
  /** `batch-settlement`: measured paid calls per side (default 1,000). */
  batchCalls?: number;
  /** `batch-settlement`: concurrent callers, each on its own channel, spread over the buyers (default 16). */
  connections?: number;
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
  /** Payments that reached the treasury on-chain during this side's runs (warm-up included), in calls at the price. */
  settledOnChain: bigint;
  /**
   * CPU time of this process (the server under test and the facilitator, which both sides share)
   * per successful measured call, ms: user + system over the measured runs. anvil, Redis and the
   * load generator are other processes and not counted.
   */
  serverCpuMsPerCall: number;
}

/** One scheme's comparison. */
export interface SchemeBenchResult {
  scheme: PaymentScheme;
  /** The gateway's side; undefined when its 402 does not offer the scheme (then only the reference ran). */
  gateway?: ExecuteSide;
  reference: ExecuteSide;
  /** The schemes the gateway's 402 offered for the capability (`accepts[].scheme`). */
  gatewayOffers: string[];
  /** Measured paid calls per side. */
  callsPerSide: number;
  /** Concurrent callers (buyers x lanes). */
  concurrency: number;
  warmupCalls: number;
  /** `batch-settlement`: the reference's claims after its runs (vouchers claimed, transactions: claims + settle). */
  referenceClaims?: { vouchers: number; transactions: number; settledCalls: bigint };
}

export interface ExecuteBenchResult {
  schemes: SchemeBenchResult[];
  settings: Required<ExecuteBenchOptions>;
}

/** The paid handler both sides run: the gateway's own `intelligence.wallet_balances` handler (input schema, multicall read, output schema). */
function walletBalancesHandler(stack: DevStack) {
  const { rpcUrl, chain } = stack.payment;
  const client = createPublicClient({ chain, transport: http(rpcUrl, { timeout: 10_000, retryCount: 1 }), batch: { multicall: false } });
  const deps = { chainClient: () => client as unknown as PublicClient };
  return async (req: { body?: unknown }, res: { status(n: number): { json(b: unknown): void }; json(b: unknown): void }) => {
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
    // upto: the call used the catalog price (the reference settles it, below the authorized ceiling)
    return PRICE_UNITS;
  };
}

/** The reference server for `scheme`: see ./lib/x402Reference.ts. */
function startReference(stack: DevStack, scheme: PaymentScheme): Promise<X402Reference> {
  return startX402Reference({
    stack,
    scheme,
    route: 'POST /api/v1/execute',
    priceUnits: PRICE_UNITS,
    ceilingUnits: 2n * PRICE_UNITS,
    description: CAPABILITY,
    handler: walletBalancesHandler(stack),
  });
}

/**
 * The schemes the server at `url` offers for an unpaid paid call (`accepts[].scheme` of its 402, read as
 * the official client reads it). Empty when it does not answer 402.
 */
export async function offeredSchemes(url: string, capabilityId: string, payer: `0x${string}`): Promise<string[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ capability_id: capabilityId, input: { address: payer, chain: 'base' } }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status !== 402) return [];
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((name) => res.headers.get(name), body);
  return [...new Set(required.accepts.map((a) => a.scheme))];
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

/** How the load client pays in one comparison: scheme, callers and their mode (same for both sides). */
interface PaidPlan {
  scheme: PaymentScheme;
  buyers: number;
  lanesPerBuyer: number;
  reuseChallenge: boolean;
  /** Measured calls per caller. */
  callsPerCaller: number;
  warmupPerCaller: number;
  callTimeoutMs: number;
}

/** Runs `callsPerCaller` paid calls per caller against `side`, counting the payments that reached the treasury. */
async function paidRun(load: LoadGenerator, stack: DevStack, side: Side, plan: PaidPlan, callsPerCaller: number, warmup: boolean): Promise<void> {
  if (callsPerCaller <= 0) return;
  const { rpcUrl, usdc, treasury } = stack.payment;
  const before = await usdcBalance(rpcUrl, treasury.address, usdc);
  const job: PaidJob = {
    kind: 'paid',
    url: side.url,
    capabilityId: CAPABILITY,
    scheme: plan.scheme,
    buyerIndexes: Array.from({ length: plan.buyers }, (_, i) => 2 + i),
    lanesPerBuyer: plan.lanesPerBuyer,
    callsPerBuyer: callsPerCaller,
    callTimeoutMs: plan.callTimeoutMs,
    reuseChallenge: plan.reuseChallenge,
    rpcUrl,
  };
  const cpu = process.cpuUsage();
  // Every call is bounded; this bounds the whole run.
  const summary = await load.run(job, callsPerCaller * plan.callTimeoutMs + 30_000);
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
    settledOnChain: side.settled,
    serverCpuMsPerCall: ok > 0 ? side.cpuMicros / 1000 / ok : Number.NaN,
  };
}

/** The settings with their defaults, checked against the dev stack's buyers. */
function executeSettings(stack: DevStack, opts: ExecuteBenchOptions): Required<ExecuteBenchOptions> {
  const settings = {
    buyers: 4,
    calls: 100,
    warmupPerBuyer: 5,
    callTimeoutMs: 30_000,
    schemes: [...PAYMENT_SCHEMES],
    batchCalls: 1000,
    connections: 16,
    ...definedOnly(opts),
  };
  if (!(settings.buyers >= 1 && settings.buyers <= stack.payment.buyers.length)) throw new Error(`buyers must be 1..${stack.payment.buyers.length}`);
  for (let i = 0; i < settings.buyers; i++) {
    if (devAccount(2 + i).address !== stack.payment.buyers[i].address) throw new Error('buyer accounts do not match the dev stack');
  }
  for (const s of settings.schemes) if (!PAYMENT_SCHEMES.includes(s)) throw new Error(`unknown scheme ${s}; known: ${PAYMENT_SCHEMES.join(', ')}`);
  return settings;
}

/**
 * The load plan of `scheme`. `exact` and `upto`: one caller per buyer, every call a 402 challenge then
 * the paid retry (`@x402/fetch`), each payment its own on-chain settlement. `batch-settlement`:
 * `connections` callers over the buyers, each on its own channel (opened by its first call's deposit,
 * in the warm-up), each later call one request carrying the next voucher.
 */
function planOf(scheme: PaymentScheme, s: Required<ExecuteBenchOptions>): PaidPlan {
  if (scheme !== 'batch-settlement') {
    return {
      scheme,
      buyers: s.buyers,
      lanesPerBuyer: 1,
      reuseChallenge: false,
      callsPerCaller: Math.ceil(s.calls / s.buyers),
      warmupPerCaller: s.warmupPerBuyer,
      callTimeoutMs: s.callTimeoutMs,
    };
  }
  const lanesPerBuyer = Math.max(1, Math.ceil(s.connections / s.buyers));
  const callers = lanesPerBuyer * s.buyers;
  return {
    scheme,
    buyers: s.buyers,
    lanesPerBuyer,
    reuseChallenge: true,
    callsPerCaller: Math.ceil(s.batchCalls / callers),
    warmupPerCaller: s.warmupPerBuyer,
    callTimeoutMs: s.callTimeoutMs,
  };
}

const sideOf = (s: { name: string; url: string }): Side => ({ name: s.name, url: `${s.url}/api/v1/execute`, runs: [], warmup: [], settled: 0n, cpuMicros: 0 });

/**
 * Measures two sides (`a`, `b`: a name and the server's base URL; `a` may be absent) with paid calls:
 * warm-up on both, then the measured calls in the order A, B, B, A (half each), so warm-up and drift
 * favour neither side. Without `a`, B runs its two halves alone.
 */
async function measurePair(
  stack: DevStack,
  plan: PaidPlan,
  a: { name: string; url: string } | undefined,
  b: { name: string; url: string },
): Promise<{ a?: ExecuteSide; b: ExecuteSide; callsPerSide: number }> {
  const perCaller = plan.callsPerCaller;
  const first = Math.ceil(perCaller / 2);
  const second = perCaller - first;
  const load = LoadGenerator.start();
  try {
    const sa = a && sideOf(a);
    const sb = sideOf(b);
    if (sa) await paidRun(load, stack, sa, plan, plan.warmupPerCaller, true);
    await paidRun(load, stack, sb, plan, plan.warmupPerCaller, true);
    if (sa) await paidRun(load, stack, sa, plan, first, false);
    await paidRun(load, stack, sb, plan, first, false);
    await paidRun(load, stack, sb, plan, second, false);
    if (sa) await paidRun(load, stack, sa, plan, second, false);
    return { a: sa && summarize(sa), b: summarize(sb), callsPerSide: perCaller * plan.buyers * plan.lanesPerBuyer };
  } finally {
    load.close();
  }
}

/**
 * Runs the paid-execute benchmark for each scheme of `opts.schemes`: the gateway (when its 402 offers the
 * scheme) against the reference server on the same scheme, warm-up on both sides, then the measured calls
 * in the order gateway, reference, reference, gateway (half each).
 */
export async function benchExecute(gatewayUrl: string, stack: DevStack, opts: ExecuteBenchOptions = {}): Promise<ExecuteBenchResult> {
  const settings = executeSettings(stack, opts);
  const gatewayOffers = await offeredSchemes(`${gatewayUrl}/api/v1/execute`, CAPABILITY, stack.payment.buyers[0].address);
  const schemes: SchemeBenchResult[] = [];
  for (const scheme of settings.schemes) {
    const plan = planOf(scheme, settings);
    if (scheme === 'upto')
      await approvePermit2(
        stack,
        Array.from({ length: plan.buyers }, (_, i) => 2 + i),
      );
    const reference = await startReference(stack, scheme);
    try {
      const offered = gatewayOffers.includes(scheme);
      const m = await measurePair(stack, plan, offered ? { name: 'gateway', url: gatewayUrl } : undefined, {
        name: `@x402/express reference`,
        url: reference.url,
      });
      let referenceClaims: SchemeBenchResult['referenceClaims'];
      if (scheme === 'batch-settlement') {
        const { rpcUrl, usdc, treasury } = stack.payment;
        const before = await usdcBalance(rpcUrl, treasury.address, usdc);
        const claimed = await reference.claimAndSettle();
        const settledCalls = ((await usdcBalance(rpcUrl, treasury.address, usdc)) - before) / PRICE_UNITS;
        referenceClaims = { vouchers: claimed.vouchers, transactions: claimed.transactions.length, settledCalls };
        m.b.settledOnChain += settledCalls;
      }
      schemes.push({
        scheme,
        gateway: m.a,
        reference: m.b,
        gatewayOffers,
        callsPerSide: m.callsPerSide,
        concurrency: plan.buyers * plan.lanesPerBuyer,
        warmupCalls: plan.warmupPerCaller * plan.buyers * plan.lanesPerBuyer,
        referenceClaims,
      });
    } finally {
      await reference.close();
    }
  }
  return { schemes, settings };
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
  const m = await measurePair(
    stack,
    planOf('exact', settings),
    { name: 'appendfsync always', url: alwaysUrl },
    { name: 'appendfsync everysec', url: everysecUrl },
  );
  return { always: m.a!, everysec: m.b, settings, callsPerSide: m.callsPerSide };
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

/** One scheme's comparison as a table with the ratios gateway/reference. */
function formatScheme(r: SchemeBenchResult, s: Required<ExecuteBenchOptions>): string {
  const perSide = r.callsPerSide;
  const row = (x: ExecuteSide) => [...sideCells(x, perSide), String(x.settledOnChain), fmt(x.serverCpuMsPerCall, 2)];
  const how: Record<PaymentScheme, string> = {
    exact: 'one call = 402 challenge + EIP-3009 signature + paid retry (verify, settle on anvil, multicall read)',
    upto: `one call = 402 challenge + Permit2 signature for the ceiling (${fmt(Number(2n * PRICE_UNITS) / 1e6, 3)} USDC) + paid retry; settles the 0.001 used`,
    'batch-settlement': 'one call = one request carrying the next cumulative voucher (channel opened by a deposit in the warm-up); claims batched on chain',
  };
  const rows = r.gateway
    ? [
        row(r.gateway),
        row(r.reference),
        [...ratioCells('ratio gateway/reference', r.gateway, r.reference), '', fmtRatio(ratio(r.gateway.serverCpuMsPerCall, r.reference.serverCpuMsPerCall))],
      ]
    : [['gateway: not offered yet', '', '', '', '', '', ''], row(r.reference)];
  const lines = [
    `[${r.scheme}] POST /api/v1/execute (${CAPABILITY}, 0.001 USDC), ${r.concurrency} concurrent callers, ${perSide} measured paid calls per side`,
    `  (order G R R G) after ${r.warmupCalls} warm-up calls each; ${how[r.scheme]}`,
    `  gateway's 402 offers: ${r.gatewayOffers.join(', ') || 'nothing (no 402)'}`,
    '',
    table(['', 'paid calls/s', 'p50 ms', 'p99 ms', 'ok', 'settled on-chain*', 'server CPU ms/call**'], rows),
  ];
  if (r.referenceClaims)
    lines.push(
      `  reference claims after its runs: ${r.referenceClaims.vouchers} vouchers (one per channel, cumulative) in ${r.referenceClaims.transactions} transactions (claims + settle); ${r.referenceClaims.settledCalls} calls' worth reached the treasury`,
    );
  if (r.scheme === 'batch-settlement' && r.gateway)
    lines.push(`  target (reported, not asserted): >= 1,000 paid calls/s with p99 <= 20 ms and >= 1.5x the reference (${s.batchCalls} calls per side)`);
  lines.push(...failureLines(r.gateway ? [r.gateway, r.reference] : [r.reference]));
  return lines.join('\n');
}

/** The result as compact tables, one per scheme, with the ratios gateway/reference, plus the caveat. */
export function formatExecute(r: ExecuteBenchResult): string {
  const lines = [
    'Paid execute vs @x402/express on the same scheme, paid with the official @x402/evm client of that scheme',
    '',
    ...r.schemes.flatMap((x) => [formatScheme(x, r.settings), '']),
    "* payments that reached the treasury in USDC during that side's runs (warm-up included), in calls of 0.001;",
    '  batch-settlement: the reference after claiming its vouchers (the gateway: what its claims moved during its runs).',
    '** CPU of the bench process (server + the in-process facilitator; not anvil, Redis or the clients)',
    '   per successful measured call.',
    '',
    'Note: happy path only. The reference middleware verifies, runs the handler, then settles: a payment sent',
    'twice concurrently runs its handler twice (one settlement then reverts, gas paid for nothing). The gateway',
    'reserves (from, nonce) in Redis and settles before executing, so a duplicate never runs twice; that extra',
    'work (Redis round trips, the stored execution) is included in its numbers above.',
  ];
  return lines.join('\n');
}
