/**
 * Paid `POST /api/v1/execute` through the gateway vs the reference x402 server **on the same payment
 * scheme**, for each scheme of `--schemes` (`exact`, `upto`, `batch-settlement`): `@x402/express`
 * `paymentMiddleware` + `x402ResourceServer` with that scheme's official EVM server scheme and the
 * in-process facilitator with its official facilitator scheme (`@acg/devnet/x402Reference`, the one the
 * SDK's scheme tests pay too), on an express 5 app whose handler does the same work (native + USDC balance
 * at one block, viem multicall). Both sides run on the same anvil chain with the same price (for `upto`:
 * the same ceiling and the same settled amount), asset, network and payTo. The load comes from the
 * official x402 clients of the scheme in a separate process (./lib/loadChild.ts), with the same client
 * code for both sides.
 *
 * - `exact` and `batch-settlement`: the gateway's own fixed-price capability `intelligence.wallet_balances`.
 * - `upto`: the gateway offers it only where a call's cost is known afterwards (docs/decisions.md "Payment
 *   schemes"), so the row pays a routed capability (./lib/routedOffers.ts): two providers offer
 *   `intelligence.bench_wallet_balances` at 0.001 and 0.002 USDC; the buyer authorizes the 0.002 ceiling, the
 *   cheapest offer answers and 0.001 is settled. The reference authorizes the same ceiling and settles the
 *   same 0.001.
 *
 * Whether the gateway offers a scheme is read from its own 402 (`accepts[].scheme`); a scheme it does not
 * offer is measured on the reference only and reported as "gateway: not offered".
 *
 * The two sides never run at the same time: both are warmed up, then measured in the order
 * gateway, reference, reference, gateway (half the calls each), on one chain with one facilitator
 * account, so its nonces stay consistent and neither side's settlements compete with the other's.
 * The server process is shared, so the JIT warm-up of shared code (viem, @x402/core) helps
 * whichever side runs second; the interleaving cancels that and other drift.
 */
import { walletBalances } from '@acg/capabilities';
import { devAccount, usdcBalance, type DevStack } from '@acg/devnet';
import {
  REFERENCE_SCHEMES as PAYMENT_SCHEMES,
  startX402Reference,
  type ReferenceAnswer,
  type ReferenceScheme as PaymentScheme,
  type X402Reference,
} from '@acg/devnet/x402Reference';
import { x402HTTPClient } from '@x402/core/client';
import { createPermit2ApprovalTx } from '@x402/evm/upto/client';
import { x402Client } from '@x402/fetch';
import { createWalletClient, http, publicActions } from 'viem';
import { LoadGenerator, type PaidJob, type PaidSummary } from './lib/load.js';
import { ROUTED_CEILING_UNITS, ROUTED_ROUTING, ROUTED_USED_UNITS, walletBalancesWork, type RoutedOffers } from './lib/routedOffers.js';
import { definedOnly, fmt, fmtRatio, percentile, ratio, table } from './lib/stats.js';

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
  /** The capability paid for (`upto`: the routed one, when the bench has it). */
  capabilityId: string;
  /** What one call authorizes and settles, for the table's header. */
  pricing: string;
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

/**
 * The reference's paid handler: the work of `intelligence.wallet_balances` (input schema, multicall read,
 * output schema) for `capabilityId`; `charge` (`upto`: what the call used) is settled.
 */
function walletBalancesHandler(stack: DevStack, capabilityId: string, charge?: bigint) {
  const work = walletBalancesWork(stack);
  return async (req: { body?: unknown }): Promise<ReferenceAnswer> => {
    const body = req.body as { capability_id?: unknown; input?: unknown } | undefined;
    const input = walletBalances.input.safeParse(body?.input);
    if (body?.capability_id !== capabilityId || !input.success) return { status: 400, body: { error: 'bad input' } };
    try {
      const result = walletBalances.output.parse(await work(input.data));
      return { body: { capability_id: capabilityId, status: 'SUCCEEDED', result }, charge };
    } catch {
      return { status: 503, body: { error: 'chain_unavailable' } };
    }
  };
}

/** What a paid call of `scheme` pays for in this bench: the capability, extra body fields, the price or ceiling and the amount settled. */
interface Paid {
  capabilityId: string;
  /** Request body fields beside `capability_id` and `input` (the routed call's `routing`). */
  body?: Record<string, unknown>;
  /** `exact`, `batch-settlement`: the price; `upto`: the ceiling the buyer authorizes. */
  amount: bigint;
  /** What one call settles (`upto`: the answering offer's price). */
  settled: bigint;
}

function paidOf(scheme: PaymentScheme, routed: RoutedOffers | undefined): Paid {
  if (scheme === 'upto' && routed)
    return { capabilityId: routed.capabilityId, body: { routing: ROUTED_ROUTING }, amount: ROUTED_CEILING_UNITS, settled: ROUTED_USED_UNITS };
  // without the routed capability `upto` pays the fixed-price one (the gateway does not offer it there)
  return { capabilityId: CAPABILITY, amount: scheme === 'upto' ? 2n * PRICE_UNITS : PRICE_UNITS, settled: PRICE_UNITS };
}

/** The reference server for `scheme` (`@acg/devnet/x402Reference`): the same route, capability, price or ceiling, and settled amount as the gateway's side. */
function startReference(stack: DevStack, scheme: PaymentScheme, paid: Paid): Promise<X402Reference> {
  return startX402Reference({
    payment: stack.payment,
    schemes: [scheme],
    routes: ['POST /api/v1/execute'],
    price: paid.amount,
    ceiling: paid.amount,
    description: paid.capabilityId,
    maxTimeoutSeconds: scheme === 'batch-settlement' ? 3600 : 300,
    handler: walletBalancesHandler(stack, paid.capabilityId, scheme === 'upto' ? paid.settled : undefined),
  });
}

/**
 * Each buyer's one-time ERC-20 `approve(Permit2, max)` of USDC (the official helper's transaction,
 * `createPermit2ApprovalTx`), which the `upto` scheme needs before its first payment; waits for the
 * receipts. Idempotent.
 */
async function approvePermit2(stack: DevStack, buyerIndexes: readonly number[]): Promise<void> {
  const { rpcUrl, chain, usdc } = stack.payment;
  await Promise.all(
    buyerIndexes.map(async (i) => {
      const wallet = createWalletClient({ account: devAccount(i), chain, transport: http(rpcUrl) }).extend(publicActions);
      await wallet.waitForTransactionReceipt({ hash: await wallet.sendTransaction(createPermit2ApprovalTx(usdc)) });
    }),
  );
}

/**
 * The schemes the server at `url` offers for an unpaid paid call (`accepts[].scheme` of its 402, read as
 * the official client reads it). Empty when it does not answer 402. `extra`: body fields beside
 * `capability_id` and `input` (e.g. `routing`).
 */
export async function offeredSchemes(url: string, capabilityId: string, payer: `0x${string}`, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ capability_id: capabilityId, input: { address: payer, chain: 'base' }, ...extra }),
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
  paid: Paid;
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
    capabilityId: plan.paid.capabilityId,
    ...(plan.paid.body ? { body: plan.paid.body } : {}),
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
  side.settled += (after - before) / plan.paid.settled;
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
function planOf(scheme: PaymentScheme, s: Required<ExecuteBenchOptions>, routed?: RoutedOffers): PaidPlan {
  const paid = paidOf(scheme, routed);
  if (scheme !== 'batch-settlement') {
    return {
      scheme,
      paid,
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
    paid,
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
 * in the order gateway, reference, reference, gateway (half each). `routed`: the routed capability the
 * `upto` row pays (./lib/routedOffers.ts); without it that row pays the fixed-price capability, which the
 * gateway does not offer `upto` for, so only the reference is measured.
 */
export async function benchExecute(gatewayUrl: string, stack: DevStack, opts: ExecuteBenchOptions = {}, routed?: RoutedOffers): Promise<ExecuteBenchResult> {
  const settings = executeSettings(stack, opts);
  const schemes: SchemeBenchResult[] = [];
  for (const scheme of settings.schemes) {
    const plan = planOf(scheme, settings, routed);
    const { paid } = plan;
    const gatewayOffers = await offeredSchemes(`${gatewayUrl}/api/v1/execute`, paid.capabilityId, stack.payment.buyers[0].address, paid.body);
    if (scheme === 'upto')
      await approvePermit2(
        stack,
        Array.from({ length: plan.buyers }, (_, i) => 2 + i),
      );
    const reference = await startReference(stack, scheme, paid);
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
        // the official channel manager claims every channel's last voucher in batches, then settles to payTo
        const claimed = await reference.channels.claimAndSettle();
        const settledCalls = ((await usdcBalance(rpcUrl, treasury.address, usdc)) - before) / paid.settled;
        const vouchers = claimed.claims.reduce((n, c) => n + c.vouchers, 0);
        referenceClaims = { vouchers, transactions: claimed.claims.length + (claimed.settle ? 1 : 0), settledCalls };
        m.b.settledOnChain += settledCalls;
      }
      const usdcOf = (units: bigint) => `${fmt(Number(units) / 1e6, 3)} USDC`;
      schemes.push({
        scheme,
        capabilityId: paid.capabilityId,
        pricing: scheme === 'upto' ? `ceiling ${usdcOf(paid.amount)}, settles ${usdcOf(paid.settled)}` : usdcOf(paid.amount),
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
    upto:
      r.capabilityId === CAPABILITY
        ? 'one call = 402 challenge + Permit2 signature for the ceiling + paid retry; settles the amount used'
        : 'one call = 402 challenge + Permit2 signature for the route ceiling + paid retry; the gateway routes to the cheapest of 2 provider offers (0.001, 0.002; providers in the bench process), settles its price',
    'batch-settlement': 'one call = one request carrying the next cumulative voucher (channel opened by a deposit in the warm-up); claims batched on chain',
  };
  const rows = r.gateway
    ? [
        row(r.gateway),
        row(r.reference),
        [...ratioCells('ratio gateway/reference', r.gateway, r.reference), '', fmtRatio(ratio(r.gateway.serverCpuMsPerCall, r.reference.serverCpuMsPerCall))],
      ]
    : [['gateway: not offered', '', '', '', '', '', ''], row(r.reference)];
  const lines = [
    `[${r.scheme}] POST /api/v1/execute (${r.capabilityId}, ${r.pricing}), ${r.concurrency} concurrent callers, ${perSide} measured paid calls per side`,
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
    "* payments that reached the treasury in USDC during that side's runs (warm-up included), in calls of what one",
    '  call settles (0.001); batch-settlement: the reference after claiming its vouchers (the gateway: what its claims',
    '  moved during its runs).',
    '** CPU of the bench process (server + the in-process facilitator; upto: the gateway side also has its two',
    '   providers, which run in this process; not anvil, Redis or the clients) per successful measured call.',
    '',
    'Note: happy path only. The reference middleware verifies, runs the handler, then settles: a payment sent',
    'twice concurrently runs its handler twice (one settlement then reverts, gas paid for nothing). The gateway',
    'reserves (from, nonce) in Redis and settles before executing, so a duplicate never runs twice; that extra',
    'work (Redis round trips, the stored execution) is included in its numbers above.',
  ];
  return lines.join('\n');
}
