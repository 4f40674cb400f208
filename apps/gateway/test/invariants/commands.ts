import { newExecutionId } from '@acg/execution';
import { requestHash } from '@acg/payments';
import { authorizationUsed } from '@acg/treasury';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { runPayoutPass } from '@acg/provider-ledger';
import type fc from 'fast-check';
import { pino } from 'pino';
import type { LocalAccount } from 'viem';
import { EXECUTE_ROUTE, paidExecutionOutcome, resolveExecution } from '../../src/paidRoute/execution.js';
import { paywallWithSettle, providerLedgerAt, treasurySender, type TestGateway } from '../harness.js';
import { asReadOnChain, bearerToken, challenge, officialPayload, paymentHeader, post } from '../x402.js';
import { checkRedis, type MoneyTruth, type Scope } from './conservation.js';
import { paymentKeys } from '@acg/payments/commands';
import type { SequenceChannels } from './sequenceChannels.js';
import type { FaultKit } from './faults.js';
import { sweep } from './sweep.js';

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

/** One paid call the callers made: a built-in, the single-offer provider, the routed contract, a quoted call, or a built-in paid by a `batch-settlement` voucher. */
export interface CallRecord {
  payer: number;
  kind: 'builtin' | 'provider' | 'routed' | 'quoted' | 'voucher';
  body: { capability_id: string; input: Record<string, unknown>; routing?: Record<string, unknown>; quote_id?: string };
  header: string;
  idempotencyKey?: string;
  status: number;
  executionId?: string;
}

/** What the callers know. */
export interface Model {
  calls: CallRecord[];
  disputes: { id: string; payer: number; open: boolean }[];
  /** quotes that paid an execution (a quote is used once) */
  usedQuotes: { quoteId: string; payer: number; body: CallRecord['body']; header: string }[];
  /** what the callers knew at the private Redis's last checkpoint ({@link LoseLastWrites} goes back to it) */
  saved?: { calls: CallRecord[]; disputes: Model['disputes']; usedQuotes: Model['usedQuotes'] };
}

/** An offer of the sequence's routed contract: its provider, its price (base units), how it answers next, and whether it received an execution. */
export interface RoutedOffer {
  providerId: string;
  price: bigint;
  mode: { current: ProviderMode };
  received(executionId: string): boolean;
}

/** The sequence's contract with two offers (docs/marketplace.md): the dear creator and the cheap joiner. */
export interface RoutedContract {
  capabilityId: string;
  cheap: RoutedOffer;
  dear: RoutedOffer;
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
  routed: RoutedContract;
  /** the restartable Redis, the worker's repair from the chain (faults.ts) */
  faults: FaultKit;
  /** the payers' official `batch-settlement` and `upto` clients and the worker's channel pass (channelCommands.ts) */
  channels: SequenceChannels;
}

export type MoneyCommand = fc.AsyncCommand<Model, Real>;

const BUILTIN = 'intelligence.wallet_balances';
const executeUrl = (r: Real) => `${r.t.url}/api/v1/execute`;

export function bodyOf(r: Real, kind: 'builtin' | 'provider', payer: number, n: number): CallRecord['body'] {
  return kind === 'builtin'
    ? { capability_id: BUILTIN, input: { address: r.payers[payer].address, chain: 'base' } }
    : { capability_id: r.scope.capabilityId, input: { text: `call ${n}` } };
}

/** Signs a payment for `body` as `payer` (402 challenge, then the official x402 client). */
async function pay(r: Real, url: string, body: unknown, payer: number): Promise<string> {
  return paymentHeader(await officialPayload(r.payers[payer] as never, await challenge(url, body)));
}

/**
 * Like {@link pay} for an execute of `body`, or `undefined` when the gateway refuses it before any
 * payment because its only offer is suspended (503 `offer_suspended`, docs/trust-v1.md): a failed
 * paid execution can suspend a new provider's offer, and from then on nothing reaches it.
 */
export async function payUnlessSuspended(r: Real, body: CallRecord['body'], payer: number, what: string): Promise<string | undefined> {
  const unpaid = await post(executeUrl(r), body);
  if (unpaid.status === 503 && unpaid.body?.reason === 'offer_suspended') {
    const { trust } = r.t.gateway.services.providers;
    const suspended = await trust.suspension(r.scope.providerId, r.scope.capabilityId);
    expectThat(body.capability_id === r.scope.capabilityId && suspended !== null, `${what}: 503 offer_suspended for an offer that is not suspended`);
    return undefined;
  }
  expectThat(unpaid.status === 402, `${what}: unpaid answer ${unpaid.status} ${JSON.stringify(unpaid.body).slice(0, 200)}`);
  return paymentHeader(await officialPayload(r.payers[payer] as never, decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!)));
}

export async function afterEach(r: Real, what: string): Promise<void> {
  const v = await checkRedis(r.truth, r.scope);
  if (v.length) throw new Error(`after ${what}: ${v.join('; ')}`);
}

export function expectThat(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

export const FAILING: Record<ProviderMode, number[]> = { ok: [200], http_500: [502], timeout: [504], bad_signature: [502], invalid_output: [502] };

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
    const header = await payUnlessSuspended(r, body, this.payer, String(this));
    if (header === undefined) return afterEach(r, String(this));
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
    const header = await payUnlessSuspended(r, body, this.payer, String(this));
    if (header === undefined) return afterEach(r, String(this));
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
    const header = await payUnlessSuspended(r, c.body, c.payer, String(this));
    if (header === undefined) return afterEach(r, String(this));
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
    const header = await payUnlessSuspended(r, c.body, other, String(this));
    if (header === undefined) return afterEach(r, String(this));
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
  // a voucher is never public (it is not on chain until claimed, and then only in a batch)
  check = (m: Readonly<Model>) => m.calls.some((c) => c.status === 200 && c.kind !== 'voucher');
  async run(m: Model, r: Real) {
    const paid = m.calls.filter((c) => c.status === 200 && c.kind !== 'voucher');
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
  check = (m: Readonly<Model>) => m.calls.some((c) => c.kind !== 'builtin' && c.kind !== 'voucher' && c.status === 200);
  async run(m: Model, r: Real) {
    const mine = m.calls.filter((c) => c.kind !== 'builtin' && c.kind !== 'voucher' && c.status === 200);
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
    // the request handler would refuse a suspended offer before payment: nothing to crash
    const header = await payUnlessSuspended(r, body, this.payer, String(this));
    if (header === undefined) return afterEach(r, String(this));
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

/** The offers of the routed contract that are suspended now (docs/trust-v1.md "Suspension"). */
async function suspendedOffers(r: Real): Promise<Set<OfferName>> {
  const { trust } = r.t.gateway.services.providers;
  const out = new Set<OfferName>();
  for (const name of OFFERS) if (await trust.suspension(r.routed[name].providerId, r.routed.capabilityId)) out.add(name);
  return out;
}

/** Which offer of the routed contract. */
export type OfferName = 'cheap' | 'dear';
const OFFERS: readonly OfferName[] = ['cheap', 'dear'];

const offerNamed = (r: Real, providerId: unknown): OfferName | undefined => OFFERS.find((n) => r.routed[n].providerId === providerId);

/**
 * Asserts the answer of a paid routed or quoted call: a success names an offer that was not
 * suspended, and carries a refund of exactly what the payment was above that offer's price (none
 * when equal); a failure is refunded in full. No suspended offer received the execution.
 */
function checkRoutedAnswer(what: string, r: Real, res: { status: number; body: any }, paid: bigint, suspended: Set<OfferName>): void {
  const executionId = res.body?.execution_id as string | undefined;
  for (const name of suspended)
    expectThat(!executionId || !r.routed[name].received(executionId), `${what}: the suspended ${name} offer received execution ${executionId}`);
  if (res.status === 200) {
    const answering = offerNamed(r, res.body?.provider?.provider_id);
    expectThat(answering !== undefined && !suspended.has(answering), `${what}: answered by ${res.body?.provider?.provider_id} (suspended: ${[...suspended]})`);
    const above = paid - r.routed[answering!].price;
    const refunded = res.body?.refund?.amount === undefined ? 0n : BigInt(res.body.refund.amount);
    expectThat(refunded === above, `${what}: paid ${paid}, answered by the ${answering} offer at ${r.routed[answering!].price}, refund ${refunded}`);
  } else {
    expectThat([502, 504].includes(res.status), `${what}: status ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    expectThat(res.body?.refund?.amount === res.body?.payment?.amount, `${what}: failure without a full refund: ${JSON.stringify(res.body)}`);
  }
}

/** Sets how each offer answers the next call; every other call sees `ok`. */
function answerAs(r: Real, modes: Record<OfferName, ProviderMode>): () => void {
  for (const name of OFFERS) r.routed[name].mode.current = modes[name];
  return () => {
    for (const name of OFFERS) r.routed[name].mode.current = 'ok';
  };
}

/**
 * A paid call of the routed contract with `prefer: "cheapest"` (docs/marketplace.md "Routing"):
 * the 402 asks for the highest price of the offers that are not suspended; the cheap offer answers
 * first and the dear one takes over within the same payment when it fails; the payer gets back what
 * the payment was above the answering price. Every offer suspended: 503 before any payment.
 */
export class RoutedCall implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly cheap: ProviderMode,
    readonly dear: ProviderMode,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = { capability_id: r.routed.capabilityId, input: { text: `routed ${m.calls.length}` }, routing: { prefer: 'cheapest' } };
    const suspended = await suspendedOffers(r);
    const unpaid = await post(executeUrl(r), body);
    if (suspended.size === OFFERS.length) {
      expectThat(unpaid.status === 503 && unpaid.body?.reason === 'offer_suspended', `${this}: every offer suspended, answered ${unpaid.status}`);
      return afterEach(r, String(this));
    }
    expectThat(unpaid.status === 402, `${this}: unpaid answer ${unpaid.status} ${JSON.stringify(unpaid.body).slice(0, 200)}`);
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const asked = BigInt(pr.accepts[0]!.amount);
    let highest = 0n; // bigint: no Math.max
    for (const n of OFFERS) if (!suspended.has(n) && r.routed[n].price > highest) highest = r.routed[n].price;
    expectThat(asked === highest, `${this}: the 402 asked ${asked}, the highest routable price is ${highest}`);
    const header = paymentHeader(await officialPayload(r.payers[this.payer] as never, pr));
    const reset = answerAs(r, { cheap: this.cheap, dear: this.dear });
    const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header }).finally(reset);
    checkRoutedAnswer(String(this), r, res, asked, suspended);
    if (res.status === 200 && !suspended.has('cheap') && this.cheap === 'ok')
      expectThat(res.body.provider.provider_id === r.routed.cheap.providerId, `${this}: the cheapest offer was live and answering, yet not chosen`);
    m.calls.push({ payer: this.payer, kind: 'routed', body, header, status: res.status, executionId: res.body?.execution_id });
    await afterEach(r, String(this));
  }
  toString() {
    return `RoutedCall(payer ${this.payer}, cheap ${this.cheap}, dear ${this.dear})`;
  }
}

/**
 * A quote of the routed contract (`POST /api/v1/quotes`, `prefer: "cheapest"`), then the execute
 * that names it: the 402 asks for exactly the quoted price, the call runs on the quoted offer alone
 * and is refunded in full if that offer fails. A quote of a suspended offer is never given.
 */
export class QuotedCall implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly mode: ProviderMode,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const ask = { capability_id: r.routed.capabilityId, input: { text: `quoted ${m.calls.length}` } };
    const suspended = await suspendedOffers(r);
    const q = await post(`${r.t.url}/api/v1/quotes`, { ...ask, routing: { prefer: 'cheapest' } });
    if (suspended.size === OFFERS.length) {
      expectThat(q.status === 503, `${this}: every offer suspended, the quote answered ${q.status}`);
      return afterEach(r, String(this));
    }
    expectThat(q.status === 201, `${this}: quote ${q.status} ${JSON.stringify(q.body).slice(0, 200)}`);
    const quoted = offerNamed(r, q.body.provider_id);
    expectThat(quoted !== undefined && !suspended.has(quoted), `${this}: quoted ${q.body.provider_id} (suspended: ${[...suspended]})`);
    const price = BigInt(q.body.price_base_units);
    expectThat(price === r.routed[quoted!].price, `${this}: quoted ${price} for an offer priced ${r.routed[quoted!].price}`);
    const body = { ...ask, quote_id: q.body.quote_id as string };
    const pr = await challenge(executeUrl(r), body);
    expectThat(BigInt(pr.accepts[0]!.amount) === price, `${this}: the 402 asked ${pr.accepts[0]!.amount}, the quote says ${price}`);
    const header = paymentHeader(await officialPayload(r.payers[this.payer] as never, pr));
    const reset = answerAs(r, { cheap: quoted === 'cheap' ? this.mode : 'ok', dear: quoted === 'dear' ? this.mode : 'ok' });
    const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header }).finally(reset);
    checkRoutedAnswer(String(this), r, res, price, suspended);
    // a quote runs on the quoted offer alone: no other offer takes over
    if (res.status === 200) expectThat(res.body.provider.provider_id === q.body.provider_id, `${this}: quoted ${q.body.provider_id}, answered by another`);
    m.calls.push({ payer: this.payer, kind: 'quoted', body, header, status: res.status, executionId: res.body?.execution_id });
    m.usedQuotes.push({ quoteId: body.quote_id, payer: this.payer, body, header });
    await afterEach(r, String(this));
  }
  toString() {
    return `QuotedCall(payer ${this.payer}, ${this.mode})`;
  }
}

/**
 * Issue 36 item 2: a used `quote_id` sent with a fresh payment is refused with 409 `quote_used`
 * before settlement: the fresh authorization is never used on chain (no settlement, no refund).
 */
export class QuoteReuse implements MoneyCommand {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.usedQuotes.length > 0;
  async run(m: Model, r: Real) {
    const used = m.usedQuotes[this.index % m.usedQuotes.length]!;
    // the requirements the quote's payment accepted, signed again with a fresh nonce
    const first = decodePaymentSignatureHeader(used.header);
    const pr = { x402Version: 2, resource: first.resource, accepts: [first.accepted] } as Parameters<typeof officialPayload>[1];
    const fresh = await officialPayload(r.payers[used.payer] as never, pr);
    const res = await post(executeUrl(r), used.body, { 'PAYMENT-SIGNATURE': paymentHeader(fresh) });
    expectThat(
      res.status === 409 && res.body?.reason === 'quote_used',
      `${this}: a used quote with a fresh payment answered ${res.status} ${res.body?.reason}`,
    );
    const { from, nonce } = (fresh.payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;
    const settled = await authorizationUsed(r.t.gateway.services.paymentClient, r.t.stack.payment.usdc, from, nonce);
    expectThat(!settled, `${this}: the fresh payment was settled on chain before the quote was refused`);
    await afterEach(r, String(this));
  }
  toString() {
    return `QuoteReuse(#${this.index})`;
  }
}

/**
 * Bad luck for an offer: failed paid executions are recorded for it (as `providerCapability`'s run
 * does) until its trust score suspends it (docs/trust-v1.md "Suspension"). From then on no paid
 * call, routed or quoted, reaches it (checked by {@link RoutedCall} and {@link QuotedCall}).
 */
export class SuspendOffer implements MoneyCommand {
  constructor(readonly offer: OfferName) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const { trust } = r.t.gateway.services.providers;
    // listed now, with the offer's declared timeout: a new offer's score, as routing reads it
    const subject = {
      provider_id: r.routed[this.offer].providerId,
      capability_id: r.routed.capabilityId,
      listed_at: new Date().toISOString(),
      timeout_ms: 1000,
    };
    for (let i = 0; i < 200 && !(await trust.suspension(subject.provider_id, subject.capability_id)); i++)
      await trust.record(subject, { source: 'execution', outcome: 'failed', latency_ms: 5 });
    expectThat((await trust.suspension(subject.provider_id, subject.capability_id)) !== null, `${this}: the offer is not suspended`);
    await afterEach(r, String(this));
  }
  toString() {
    return `SuspendOffer(${this.offer})`;
  }
}

/** The prober's rounds on an offer that answers again: consecutive passing probes lift its suspension once its score is back at the threshold, never before the third (docs/trust-v1.md). */
export class ProbeRecovery implements MoneyCommand {
  constructor(readonly offer: OfferName) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const { trust } = r.t.gateway.services.providers;
    const offer = r.routed[this.offer];
    offer.mode.current = 'ok';
    const suspended = async () => (await trust.suspension(offer.providerId, r.routed.capabilityId)) !== null;
    const wasSuspended = await suspended();
    // a probe weighs less than a paid call: the suspension lifts after 3 consecutive passing probes
    // once the score is back at the threshold, never sooner (bounded: the window holds 200 outcomes)
    let probes = 0;
    while (probes < 200 && (probes < 3 || (await suspended()))) {
      await r.t.gateway.prober.probeProvider(offer.providerId);
      probes++;
      if (wasSuspended && probes < 3) expectThat(await suspended(), `${this}: lifted after ${probes} probe(s)`);
    }
    expectThat(!(await suspended()), `${this}: still suspended after ${probes} passing probes`);
    await afterEach(r, String(this));
  }
  toString() {
    return `ProbeRecovery(${this.offer})`;
  }
}

/**
 * Commands aimed at the holes of issue 23 items 1, 2, 3 and 7 (non-finite input, another payer's
 * Idempotency-Key, a stranger's resend of a public payment, a crash after a provider ran, a deposit
 * whose answer failed). Each failed on the tree before those fixes (docs/money-invariants.md gives
 * the shrunk counterexamples); all are on by default now.
 */
export const HOLE_COMMANDS = [
  'IdempotencyReuseOtherPayer',
  'StrangerReplay',
  'NonFiniteInput',
  'CrashAfterProviderRun',
  'DepositViewFails',
  'QuoteReuse',
] as const;
/** Hole commands enabled by default (those whose fix is merged: all of them, `QuoteReuse` since issue 36 item 2 was fixed). */
export const ENABLED_HOLE_COMMANDS: readonly (typeof HOLE_COMMANDS)[number][] = [...HOLE_COMMANDS];
