import { newExecutionId, succeededExecutionAnswer } from '@acg/execution';
import { authorizationUsed, recoverOrphanedPayments, requestHash } from '@acg/payments';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { runPayoutPass } from '@acg/provider-ledger';
import fc from 'fast-check';
import { pino } from 'pino';
import type { LocalAccount } from 'viem';
import { EXECUTE_ROUTE, paidExecutionOutcome, resolveExecution } from '../../src/paidRoute/execution.js';
import { paywallWithSettle, providerLedgerAt, treasurySender, type TestGateway } from '../harness.js';
import { asReadOnChain, bearerToken, challenge, officialPayload, paymentHeader, post } from '../x402.js';
import { checkRedis, type MoneyTruth, type Scope } from './conservation.js';
import { paymentKeys } from '@acg/payments/commands';

/**
 * The commands of the money invariant suite (fast-check `fc.commands`; docs/money-invariants.md).
 * Each command acts on the real gateway through its public API (or, for a process kill, through
 * the gateway's own Paywall as the request handler would), asserts what the caller must see, and
 * then checks the Redis-only invariants ({@link checkRedis}). The model only remembers what the
 * callers were told (execution ids, payment headers, dispute ids) so later commands can replay,
 * reuse or dispute them; it never supplies an amount to a check.
 */

/** How the test provider answers the next call. */
export type ProviderMode = 'ok' | 'http_500' | 'timeout' | 'bad_signature' | 'invalid_output';

/** One paid call the callers made. */
export interface CallRecord {
  payer: number;
  kind: 'builtin' | 'provider';
  body: { capability_id: string; input: Record<string, unknown> };
  header: string;
  idempotencyKey?: string;
  status: number;
  executionId?: string;
}

/** What the callers know. */
export interface Model {
  calls: CallRecord[];
  disputes: { id: string; payer: number; open: boolean }[];
}

/** The system under test, for one sequence. */
export interface Real {
  t: TestGateway;
  truth: MoneyTruth;
  scope: Scope;
  payers: LocalAccount[];
  /** the provider's next answer (read by the test provider server) */
  mode: { current: ProviderMode };
  adminToken: string;
}

export type MoneyCommand = fc.AsyncCommand<Model, Real>;

const BUILTIN = 'intelligence.wallet_balances';
const executeUrl = (r: Real) => `${r.t.url}/api/v1/execute`;

function bodyOf(r: Real, kind: 'builtin' | 'provider', payer: number, n: number): CallRecord['body'] {
  return kind === 'builtin'
    ? { capability_id: BUILTIN, input: { address: r.payers[payer].address, chain: 'base' } }
    : { capability_id: r.scope.capabilityId, input: { text: `call ${n}` } };
}

/** Signs a payment for `body` as `payer` (402 challenge, then the official x402 client). */
async function pay(r: Real, url: string, body: unknown, payer: number): Promise<string> {
  return paymentHeader(await officialPayload(r.payers[payer] as never, await challenge(url, body)));
}

async function afterEach(r: Real, what: string): Promise<void> {
  const v = await checkRedis(r.truth, r.scope);
  if (v.length) throw new Error(`after ${what}: ${v.join('; ')}`);
}

function expectThat(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

const FAILING: Record<ProviderMode, number[]> = { ok: [200], http_500: [502], timeout: [504], bad_signature: [502], invalid_output: [502] };

/** A paid call of a built-in or the sequence's provider capability, with the provider answering as `mode`; optionally with a fresh Idempotency-Key. */
export class PaidCall implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly kind: 'builtin' | 'provider',
    readonly mode: ProviderMode,
    readonly withKey: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = bodyOf(r, this.kind, this.payer, m.calls.length);
    const header = await pay(r, executeUrl(r), body, this.payer);
    const idempotencyKey = this.withKey ? `idem-${m.calls.length}-${Date.now()}` : undefined;
    r.mode.current = this.mode;
    const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header, ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) });
    const expected = this.kind === 'builtin' ? [200] : FAILING[this.mode];
    expectThat(expected.includes(res.status), `${this}: status ${res.status}, expected ${expected}: ${JSON.stringify(res.body).slice(0, 300)}`);
    if (res.status !== 200)
      expectThat(res.body?.refund?.amount === res.body?.payment?.amount, `${this}: failure without a full refund: ${JSON.stringify(res.body)}`);
    m.calls.push({ payer: this.payer, kind: this.kind, body, header, idempotencyKey, status: res.status, executionId: res.body?.execution_id });
    await afterEach(r, String(this));
  }
  toString() {
    return `PaidCall(payer ${this.payer}, ${this.kind}, ${this.mode}${this.withKey ? ', Idempotency-Key' : ''})`;
  }
}

/** The same payment sent twice at once: one execution, both answers name it (or one is told it is in progress). */
export class ConcurrentDuplicate implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly kind: 'builtin' | 'provider',
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = bodyOf(r, this.kind, this.payer, m.calls.length);
    const header = await pay(r, executeUrl(r), body, this.payer);
    r.mode.current = 'ok';
    const both = await Promise.all([0, 1].map(() => post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header })));
    const ok = both.filter((x) => x.status === 200);
    expectThat(ok.length >= 1 && both.every((x) => x.status === 200 || x.status === 409), `${this}: statuses ${both.map((x) => x.status)}`);
    expectThat(new Set(ok.map((x) => x.body.execution_id)).size === 1, `${this}: two executions for one payment`);
    m.calls.push({ payer: this.payer, kind: this.kind, body, header, status: 200, executionId: ok[0].body.execution_id });
    await afterEach(r, String(this));
  }
  toString() {
    return `ConcurrentDuplicate(payer ${this.payer}, ${this.kind})`;
  }
}

/** The payer sends an earlier payment again (same header, same body): the stored answer of the same execution, nothing charged again. */
export class ReplayPayment implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.calls.some((c) => c.status !== 0);
  async run(m: Model, r: Real) {
    // a crashed request not yet swept has no answer to replay (a replay would wait for it)
    const answered = m.calls.filter((c) => c.status !== 0);
    const c = answered[this.index % answered.length];
    const res = await post(executeUrl(r), c.body, { 'PAYMENT-SIGNATURE': c.header });
    const id = res.body?.execution_id;
    expectThat(id === undefined || c.executionId === undefined || id === c.executionId, `${this}: replay named ${id}, first answer ${c.executionId}`);
    expectThat(c.status === 200 || res.body?.result === undefined, `${this}: the replay of a ${c.status} delivered a result`);
    await afterEach(r, String(this));
  }
  toString() {
    return `ReplayPayment(#${this.index})`;
  }
}

/** The same payer reuses an earlier Idempotency-Key with the same body and a new payment: the first execution (or 409), never a second one. */
export class IdempotencyReuseSamePayer implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.calls.some((c) => c.idempotencyKey);
  async run(m: Model, r: Real) {
    const keyed = m.calls.filter((c) => c.idempotencyKey);
    const c = keyed[this.index % keyed.length];
    const header = await pay(r, executeUrl(r), c.body, c.payer);
    r.mode.current = 'ok';
    const res = await post(executeUrl(r), c.body, { 'PAYMENT-SIGNATURE': header, 'Idempotency-Key': c.idempotencyKey! });
    expectThat(res.status === 409 || res.body?.execution_id === c.executionId, `${this}: ${res.status} ${res.body?.execution_id}, first ${c.executionId}`);
    await afterEach(r, String(this));
  }
  toString() {
    return `IdempotencyReuseSamePayer(#${this.index})`;
  }
}

/** Issue 23 item 2: another payer reuses the key with its own payment: its own execution or a 409, never the first payer's answer. */
export class IdempotencyReuseOtherPayer implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.calls.some((c) => c.idempotencyKey && c.executionId);
  async run(m: Model, r: Real) {
    const keyed = m.calls.filter((c) => c.idempotencyKey && c.executionId);
    const c = keyed[this.index % keyed.length];
    const other = 1 - c.payer;
    const header = await pay(r, executeUrl(r), c.body, other);
    r.mode.current = 'ok';
    const res = await post(executeUrl(r), c.body, { 'PAYMENT-SIGNATURE': header, 'Idempotency-Key': c.idempotencyKey! });
    expectThat(res.body?.execution_id !== c.executionId, `${this}: payer ${other} got payer ${c.payer}'s execution ${c.executionId} (status ${res.status})`);
    await afterEach(r, String(this));
  }
  toString() {
    return `IdempotencyReuseOtherPayer(#${this.index})`;
  }
}

/** Issue 23 item 3: someone else resends a settled (public) payment: a receipt at most, never the paid result. */
export class StrangerReplay implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.calls.some((c) => c.status === 200);
  async run(m: Model, r: Real) {
    const paid = m.calls.filter((c) => c.status === 200);
    const c = paid[this.index % paid.length];
    // what anyone can rebuild from the settled transfer: no payment-identifier (the payer's proof)
    const onChain = paymentHeader(asReadOnChain(decodePaymentSignatureHeader(c.header)));
    const res = await post(executeUrl(r), c.body, { 'PAYMENT-SIGNATURE': onChain });
    expectThat(res.body?.result === undefined, `${this}: a resent public payment returned the paid result of ${c.executionId} (status ${res.status})`);
    await afterEach(r, String(this));
  }
  toString() {
    return `StrangerReplay(#${this.index})`;
  }
}

/** The payer disputes an earlier provider execution (bearer token). */
export class OpenDispute implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.calls.some((c) => c.kind === 'provider' && c.status === 200);
  async run(m: Model, r: Real) {
    const mine = m.calls.filter((c) => c.kind === 'provider' && c.status === 200);
    const c = mine[this.index % mine.length];
    const token = await bearerToken(r.t.url, r.payers[c.payer]);
    const res = await post(`${r.t.url}/api/v1/executions/${c.executionId}/dispute`, { reason: 'invariant suite' }, { authorization: `Bearer ${token}` });
    expectThat([201, 404, 409].includes(res.status), `${this}: status ${res.status}`);
    if (res.status === 201) m.disputes.push({ id: res.body.dispute_id, payer: c.payer, open: true });
    await afterEach(r, String(this));
  }
  toString() {
    return `OpenDispute(#${this.index})`;
  }
}

/** The admin resolves an open dispute: `refund` (full price back on-chain, share and fee cancelled) or `release`. */
export class ResolveDispute implements MoneyCommand {
  constructor(
    readonly index: number,
    readonly outcome: 'refund' | 'release',
  ) {}
  check = (m: Readonly<Model>) => m.disputes.some((d) => d.open);
  async run(m: Model, r: Real) {
    const open = m.disputes.filter((d) => d.open);
    const d = open[this.index % open.length];
    const res = await post(`${r.t.url}/api/v1/disputes/${d.id}/resolve`, { outcome: this.outcome }, { authorization: `Bearer ${r.adminToken}` });
    expectThat(res.status === 200, `${this}: status ${res.status} ${JSON.stringify(res.body)}`);
    d.open = false;
    await afterEach(r, String(this));
  }
  toString() {
    return `ResolveDispute(#${this.index}, ${this.outcome})`;
  }
}

/** The worker's payout pass, a dispute window later: matures undisputed shares and pays every available balance from the treasury. */
export class PayoutPass implements MoneyCommand {
  check = () => true;
  async run(_m: Model, r: Real) {
    const { services } = r.t.gateway;
    const { config } = r.t;
    const later = () => Date.now() + (config.providers.disputeWindowSeconds + 1) * 1000;
    const ledger = providerLedgerAt(r.t, later);
    const report = await runPayoutPass({
      ledger,
      redis: services.redis,
      keys: services.keys,
      sender: treasurySender(r.t),
      minimum: 1n,
      disputeAutoResolveSeconds: config.providers.disputeAutoResolveSeconds,
      log: pino({ level: 'silent' }),
      now: later,
    });
    expectThat(
      report.sent.every((s) => s.amount > 0n),
      `${this}: an empty payout`,
    );
    await afterEach(r, String(this));
  }
  toString() {
    return 'PayoutPass';
  }
}

/** An x402 deposit into the payer's metered account. */
export class Deposit implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly cents: number,
  ) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const url = `${r.t.url}/v1/account/deposit`;
    const body = { amount_usdc: (this.cents / 100).toFixed(2) };
    const res = await post(url, body, { 'PAYMENT-SIGNATURE': await pay(r, url, body, this.payer) });
    expectThat(res.status === 200, `${this}: status ${res.status} ${JSON.stringify(res.body)}`);
    await afterEach(r, String(this));
  }
  toString() {
    return `Deposit(payer ${this.payer}, ${(this.cents / 100).toFixed(2)} USDC)`;
  }
}

/** A bearer-paid liquidation search: debited from the metered account (0.02 USD), or 402 when the balance is short. */
export class BearerSearch implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const account = r.payers[this.payer].address;
    const before = (await r.truth.account(account)).balance;
    const token = await bearerToken(r.t.url, r.payers[this.payer]);
    const res = await fetch(`${r.t.url}/v1/liquidation-search?chain=ethereum`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    const after = (await r.truth.account(account)).balance;
    if (before >= 20_000n) expectThat(res.status === 200 && after === before - 20_000n, `${this}: status ${res.status}, balance ${before} → ${after}`);
    else expectThat(res.status === 402 && after === before, `${this}: status ${res.status} with balance ${before} → ${after}`);
    await afterEach(r, String(this));
  }
  toString() {
    return `BearerSearch(payer ${this.payer})`;
  }
}

/** The paid request a crash command hands to the gateway's own Paywall, as `POST /api/v1/execute` would. */
function paidRequest(r: Real, body: CallRecord['body'], header: string) {
  const operationId = newExecutionId();
  return {
    resourceUrl: executeUrl(r),
    description: `Execute ${body.capability_id}`,
    price: 0n,
    route: EXECUTE_ROUTE,
    requestHash: requestHash('POST', EXECUTE_ROUTE, body),
    operationId,
    getHeader: (name: string) => (name === 'payment-signature' ? header : undefined),
  };
}

async function waitUntil(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await done()) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${what}: not reached`);
}

/**
 * A process kill at an injected point: the gateway dies while the settlement is on its way (the
 * transfer is mined but the reservation never hears of it: `after: 'broadcast'`, a Paywall whose
 * facilitator settles and then never returns), after settlement before the operation runs
 * (`after: 'settle'`), or after the operation ran and was recorded, provider credit included, but
 * before the answer was stored (`after: 'run'`). Nothing completes the request; the crash sweep
 * ({@link Sweep}, and the end of every sequence) must then make the money add up.
 */
export class Crash implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly kind: 'builtin' | 'provider',
    readonly after: 'broadcast' | 'settle' | 'run',
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const { services } = r.t.gateway;
    const body = bodyOf(r, this.kind, this.payer, m.calls.length);
    const header = await pay(r, executeUrl(r), body, this.payer);
    const resolved = resolveExecution(services, body.capability_id, body.input);
    if (!resolved.ok) throw new Error(`${this}: ${resolved.status}`);
    const req = { ...paidRequest(r, body, header), price: resolved.definition.price.base_units };
    r.mode.current = 'ok';
    const hang = () => new Promise<never>(() => undefined);
    const paywall =
      this.after === 'broadcast'
        ? paywallWithSettle(
            r.t,
            async (inner, payload, requirements) => {
              await inner.settle(payload, requirements);
              return hang();
            },
            { paymentFlow: 'upfront' },
          )
        : services.paywall;
    void paywall.handle(req, async (payment) => {
      if (this.after === 'run') await paidExecutionOutcome(services, resolved, payment);
      return hang();
    });
    if (this.after === 'broadcast') {
      const { payload } = decodePaymentSignatureHeader(header);
      const { from, nonce } = (payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;
      await waitUntil(String(this), () => authorizationUsed(services.paymentClient, r.t.stack.payment.usdc, from, nonce));
    } else if (this.after === 'run') await waitUntil(String(this), async () => (await services.executions.get(req.operationId)) !== undefined);
    else
      await waitUntil(String(this), async () => {
        const keys = await services.redis.zrange(paymentKeys.authorizationsInFlight(services.keys), '0', '-1');
        for (const k of keys)
          if ((await services.redis.hget(k, 'operation_id')) === req.operationId) return (await services.redis.hget(k, 'state')) === 'settled';
        return false;
      });
    m.calls.push({ payer: this.payer, kind: this.kind, body, header, status: 0, executionId: req.operationId });
    await afterEach(r, String(this));
  }
  toString() {
    return `Crash(payer ${this.payer}, ${this.kind}, after ${this.after})`;
  }
}

/** The worker's crash-recovery sweep (`recoverOrphanedPayments`), treating every in-flight reservation as orphaned. */
export class Sweep implements MoneyCommand {
  check = () => true;
  async run(m: Model, r: Real) {
    const round = await sweep(r.t);
    // the sweep answered every crashed request: with its result when the execution had finished
    // (its SUCCEEDED record stored), else with a stored 502 naming its refund
    for (const c of m.calls) if (c.status === 0) c.status = c.executionId && round.completed.includes(c.executionId) ? 200 : 502;
    await afterEach(r, String(this));
  }
  toString() {
    return 'Sweep';
  }
}

/** One crash-recovery round of `t`'s gateway with no age threshold (every in-flight reservation is orphaned). */
export async function sweep(t: TestGateway) {
  const { services } = t.gateway;
  return recoverOrphanedPayments({
    redis: services.redis,
    reversals: services.creditReversal,
    finishedAnswer: (op) => succeededExecutionAnswer(services.executions, op),
    keys: services.keys,
    publicClient: services.paymentClient,
    refunds: services.refunds,
    log: services.log,
    olderThanMs: 0,
  });
}

/** Issue 23 item 1: a non-finite number (`1e400`) in a provider capability's input: refused (400) before any payment. */
export class NonFiniteInput implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const raw = `{"capability_id":"${r.scope.capabilityId}","input":{"text":"n","n":1e400}}`;
    const send = (headers: Record<string, string> = {}) =>
      fetch(executeUrl(r), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw }).then(async (x) => ({
        status: x.status,
        headers: x.headers,
        body: (await x.json().catch(() => undefined)) as any,
      }));
    const unpaid = await send();
    if (unpaid.status === 402) {
      // the hole: it is priced; pay it and let the invariants judge what the money did
      const { decodePaymentRequiredHeader } = await import('@x402/core/http');
      const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
      const header = paymentHeader(await officialPayload(r.payers[this.payer] as never, pr));
      r.mode.current = 'ok';
      const paid = await send({ 'PAYMENT-SIGNATURE': header });
      m.calls.push({ payer: this.payer, kind: 'provider', body: JSON.parse(raw), header, status: paid.status, executionId: paid.body?.execution_id });
    }
    await afterEach(r, String(this));
    expectThat(unpaid.status === 400, `${this}: the unpaid request answered ${unpaid.status}, not 400`);
  }
  toString() {
    return `NonFiniteInput(payer ${this.payer})`;
  }
}

/** Issue 23 item 7: a deposit is credited, then reading the account view fails (injected once): the caller must keep either the credit or the refund, not both. */
export class DepositViewFails implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const url = `${r.t.url}/v1/account/deposit`;
    const body = { amount_usdc: '0.03' };
    const header = await pay(r, url, body, this.payer);
    const ledger = r.t.gateway.services.ledger;
    const view = ledger.view;
    ledger.view = async () => {
      ledger.view = view;
      throw new Error('injected: account view failed');
    };
    try {
      await post(url, body, { 'PAYMENT-SIGNATURE': header });
    } finally {
      ledger.view = view;
    }
    await afterEach(r, String(this));
  }
  toString() {
    return `DepositViewFails(payer ${this.payer})`;
  }
}

/**
 * Commands aimed at the holes of issue 23 items 1, 2, 3 and 7 (non-finite input, another payer's
 * Idempotency-Key, a stranger's resend of a public payment, a crash after a provider ran, a deposit
 * whose answer failed). Each failed on the tree before those fixes (docs/money-invariants.md gives
 * the shrunk counterexamples); all are on by default now.
 */
export const HOLE_COMMANDS = ['IdempotencyReuseOtherPayer', 'StrangerReplay', 'NonFiniteInput', 'CrashAfterProviderRun', 'DepositViewFails'] as const;
/** Hole commands enabled by default (those whose fix is merged: all of them). */
export const ENABLED_HOLE_COMMANDS: readonly (typeof HOLE_COMMANDS)[number][] = [...HOLE_COMMANDS];

/** The command arbitraries of one sequence: payers 0 and 1; the hole commands of {@link HOLE_COMMANDS} only when enabled. */
export function moneyCommands(enabled: ReadonlySet<string>): fc.Arbitrary<MoneyCommand>[] {
  const payer = fc.integer({ min: 0, max: 1 });
  const kind = fc.constantFrom<'builtin' | 'provider'>('builtin', 'provider', 'provider');
  const mode = fc.constantFrom<ProviderMode>('ok', 'ok', 'ok', 'http_500', 'timeout', 'bad_signature', 'invalid_output');
  const index = fc.nat({ max: 50 });
  const on = (name: (typeof HOLE_COMMANDS)[number]) => enabled.has(name) || ENABLED_HOLE_COMMANDS.includes(name);
  const paidCall = fc.tuple(payer, kind, mode, fc.boolean()).map(([p, k, md, key]): MoneyCommand => new PaidCall(p, k, k === 'builtin' ? 'ok' : md, key));
  const openDispute = index.map((i): MoneyCommand => new OpenDispute(i));
  const resolveDispute = fc.tuple(index, fc.constantFrom<'refund' | 'release'>('refund', 'release')).map(([i, o]): MoneyCommand => new ResolveDispute(i, o));
  const arbs: fc.Arbitrary<MoneyCommand>[] = [
    // paid calls are what everything else acts on: three times as likely as any other command
    paidCall,
    paidCall,
    paidCall,
    fc.tuple(payer, kind).map(([p, k]) => new ConcurrentDuplicate(p, k)),
    index.map((i) => new ReplayPayment(i)),
    index.map((i) => new IdempotencyReuseSamePayer(i)),
    // disputes need a succeeded provider call first: twice as likely, so resolutions happen
    openDispute,
    openDispute,
    resolveDispute,
    resolveDispute,
    fc.constant(new PayoutPass()),
    fc.tuple(payer, fc.integer({ min: 1, max: 10 })).map(([p, c]) => new Deposit(p, c)),
    payer.map((p) => new BearerSearch(p)),
    fc.tuple(payer, kind, fc.constantFrom<'broadcast' | 'settle'>('broadcast', 'settle')).map(([p, k, a]) => new Crash(p, k, a)),
    fc.constant(new Sweep()),
  ];
  if (on('IdempotencyReuseOtherPayer')) arbs.push(index.map((i) => new IdempotencyReuseOtherPayer(i)));
  if (on('StrangerReplay')) arbs.push(index.map((i) => new StrangerReplay(i)));
  if (on('NonFiniteInput')) arbs.push(payer.map((p) => new NonFiniteInput(p)));
  if (on('CrashAfterProviderRun')) arbs.push(payer.map((p) => new Crash(p, 'provider', 'run')));
  if (on('DepositViewFails')) arbs.push(payer.map((p) => new DepositViewFails(p)));
  return arbs;
}
