import { devPrivateKey } from '@acg/devnet';
import { authorizationUsed } from '@acg/treasury';
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import { privateKeyToAccount } from 'viem/accounts';
import { createWalletClient, http } from 'viem';
import { officialPayload, paymentHeader, post } from '../x402.js';
import { afterEach, bodyOf, expectThat, FAILING, payUnlessSuspended, type CallRecord, type Model, type MoneyCommand, type Real } from './commands.js';
import { CONTRACT_EVENTS } from './channelTruth.js';
import { checkConservation } from './conservation.js';
import { anvil, headBlock, refundsMined, SUITE_DEPTH } from './faults.js';

/**
 * The fault commands of the money invariant suite (issue 33 item 7; docs/money-invariants.md
 * "Faults"): the payment chain reorganised, the private Redis restarted without its last writes,
 * a pending settlement dropped from the node's pool, and a clock off by up to the allowed skew and
 * beyond. Each produces its fault for real on anvil or the private Redis, then lets the worker act
 * as it would ({@link afterFault}: the crash sweep, the finality tracker, the chain reconciliation,
 * the refunds mined) and checks every equation, from the chain, right there.
 */

const facilitator = () => privateKeyToAccount(devPrivateKey(0)).address;

/**
 * What follows a fault: the worker's repair (`FaultKit.repair`: the crash sweep, the finality
 * tracker and the chain reconciliation until nothing is left to do; every crashed request of the
 * model is then answered, as {@link Sweep} records), then every invariant against the chain and
 * Redis ({@link checkConservation}).
 */
export async function afterFault(m: Model, r: Real, what: string): Promise<void> {
  const { completed, rounds, counts } = await r.faults.repair(r.scope, r.truth);
  if (process.env.MONEY_INVARIANTS_LOG)
    console.log(`${what}: repair ${JSON.stringify({ rounds: rounds.map((x) => ({ ...x, finalBlock: String(x.finalBlock) })), counts })}`);
  for (const c of m.calls) if (c.status === 0) c.status = c.executionId && completed.includes(c.executionId) ? 200 : 502;
  const v = await checkConservation(r.truth, r.scope);
  if (v.length) throw new Error(`after ${what}: ${v.join('; ')}`);
}

/** The model as it was at the Redis checkpoint (deep copies: a crashed call's status and a dispute's resolution go back too). */
export function saveModel(m: Model): NonNullable<Model['saved']> {
  return { calls: m.calls.map((c) => ({ ...c })), disputes: m.disputes.map((d) => ({ ...d })), usedQuotes: m.usedQuotes.map((q) => ({ ...q })) };
}

/**
 * `Reorg(depth)`: the last `depth` blocks of the payment chain are replaced by empty ones
 * (`anvil_reorg`; never below the sequence's first block, never a final block: at most
 * `SUITE_DEPTH`, the suite's finality depth), taking the settlements, refunds and
 * payouts they held off the chain. `watched`: the worker's finality tracker saw those blocks first
 * (it keeps a settlement's signed transaction to broadcast it again); otherwise it learns of them
 * only after the reorg (a settlement's authorization is resubmitted by the treasury).
 */
export class Reorg implements MoneyCommand {
  constructor(
    readonly depth: number,
    readonly watched: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    // the refund worker's transfers in flight are recorded first: one reorged out before its receipt was
    // read is a transfer dropped from the pool to its sender, which waits 60 s before it looks again (not
    // modelled, docs/money-invariants.md; it made a seed-7 run flaky)
    await refundsMined(r.truth);
    const head = await headBlock(r.t);
    // never below the sequence's first block, never as deep as a final block (SUITE_DEPTH); channel
    // transactions (deposits, claims, settlements, refunds) are reorged like any other
    const span = head - r.scope.fromBlock + 1n;
    if (span >= 1n) {
      const depth = Math.min(this.depth, SUITE_DEPTH, Number(span));
      if (this.watched) await r.faults.finality.check();
      const channelLogs = await channelEvents(r, head - BigInt(depth) + 1n, head);
      if (process.env.MONEY_INVARIANTS_LOG && channelLogs.length) console.log(`${this}: reorging out channel events ${channelLogs.join(', ')}`);
      await anvil(r.t, 'anvil_reorg', [depth, []]);
      // the worker as it runs on its own: the finality rounds put deposits back (or mark a channel unpaid),
      // then its periodic channel pass (not a full claim) claims again what a reorg took back and settles
      const first = await r.faults.repair(r.scope, r.truth);
      if (process.env.MONEY_INVARIANTS_LOG)
        console.log(`${this}: put back ${JSON.stringify(first.rounds.flatMap((x) => [...x.resent, ...x.moved, ...x.unpaid]))}`);
      // a facilitator transaction the treasury replaced (an `exact` settlement resubmitted) leaves a gap in
      // the facilitator's nonces, and its re-broadcast deposits and `upto` settlements wait behind it until
      // its next transaction (its ChainSender signs at the chain's pending nonce): that next one, now
      if (await fillFacilitatorNonceGap(r)) await r.faults.repair(r.scope, r.truth);
      const pass = await r.channels.worker().pass();
      if (process.env.MONEY_INVARIANTS_LOG) console.log(`${this}: channel pass ${JSON.stringify(pass, (_, x) => (typeof x === 'bigint' ? String(x) : x))}`);
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return `Reorg(${this.depth}${this.watched ? ', watched' : ''})`;
  }
}

/**
 * The facilitator's next transaction, as its `ChainSender` would send it (at the chain's pending nonce),
 * when transactions of the facilitator wait in the node's pool behind a nonce gap (`queued`): a zero-value
 * transfer to itself standing for its next settlement. True when one was sent.
 */
async function fillFacilitatorNonceGap(r: Real): Promise<boolean> {
  const from = facilitator();
  const pool = (await anvil(r.t, 'txpool_content')) as { queued?: Record<string, Record<string, unknown>> };
  const queued = Object.entries(pool.queued ?? {}).find(([a]) => a.toLowerCase() === from.toLowerCase())?.[1] ?? {};
  if (Object.keys(queued).length === 0) return false;
  const pay = r.t.stack.payment;
  const wallet = createWalletClient({ account: privateKeyToAccount(devPrivateKey(0)), chain: pay.chain, transport: http(pay.rpcUrl) });
  const nonce = await r.truth.client.getTransactionCount({ address: from, blockTag: 'latest' });
  const hash = await wallet.sendTransaction({ to: from, value: 0n, nonce });
  await r.truth.client.waitForTransactionReceipt({ hash });
  if (process.env.MONEY_INVARIANTS_LOG)
    console.log(`${r.scope.fromBlock}: the facilitator's nonce gap at ${nonce} filled (${Object.keys(queued).length} queued)`);
  return true;
}

/** The names of the x402BatchSettlement contract's events in `[from, to]` (for the log). */
async function channelEvents(r: Real, from: bigint, to: bigint): Promise<string[]> {
  if (to < from) return [];
  const logs = await r.truth.client.getLogs({ address: r.t.stack.payment.batchSettlement, events: CONTRACT_EVENTS, fromBlock: from, toBlock: to });
  return logs.map((l) => `${l.eventName}@${l.blockNumber}`);
}

/**
 * `LoseLastWrites`: the private Redis dies and comes back from its checkpoint (taken after every
 * command), without every write acknowledged since: the last command's, and what the gateway's
 * refund worker wrote after its answer (a refund's record and signed transaction, while the
 * transfer itself is on chain). Paid calls lose their reservation, execution record and provider
 * credit, refunds and payouts their record, disputes their state. The chain keeps what happened. The model forgets what the callers
 * were told since (nothing they hold refers to a record any more).
 */
export class LoseLastWrites implements MoneyCommand {
  check = (m: Readonly<Model>) => m.saved !== undefined;
  async run(m: Model, r: Real) {
    await r.faults.loseLastWrites();
    const saved = m.saved!;
    m.calls = saved.calls.map((c) => ({ ...c }));
    m.disputes = saved.disputes.map((d) => ({ ...d }));
    m.usedQuotes = saved.usedQuotes.map((q) => ({ ...q }));
    await afterFault(m, r, String(this));
  }
  toString() {
    return 'LoseLastWrites';
  }
}

/**
 * `DropTransaction(payer, kind)`: a paid call's settlement is broadcast while the node mines
 * nothing (automine off), and the node drops it from its pool (`anvil_dropTransaction`) before
 * mining resumes. The facilitator must notice and send it again: the call answers as if nothing
 * happened, charged once.
 */
export class DropTransaction implements MoneyCommand {
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
    const from = facilitator();
    const nonce = async (tag: 'latest' | 'pending') => Number(BigInt((await anvil(r.t, 'eth_getTransactionCount', [from, tag])) as string));
    let call: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    let dropped: string | undefined;
    await anvil(r.t, 'evm_setAutomine', [false]);
    try {
      const latest = await nonce('latest');
      call = post(`${r.t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
      for (let i = 0; i < 400 && (await nonce('pending')) <= latest; i++) await new Promise((res) => setTimeout(res, 25));
      const pool = (await anvil(r.t, 'txpool_content')) as { pending: Record<string, Record<string, { hash: string }>> };
      const mine = Object.entries(pool.pending).find(([a]) => a.toLowerCase() === from.toLowerCase())?.[1] ?? {};
      dropped = Object.values(mine)[0]?.hash;
      if (dropped) await anvil(r.t, 'anvil_dropTransaction', [dropped]);
    } finally {
      await anvil(r.t, 'evm_setAutomine', [true]);
      await anvil(r.t, 'evm_mine'); // whatever else waited in the pool meanwhile
    }
    const res = await call!;
    expectThat(dropped !== undefined, `${this}: no settlement reached the pool (answer ${res.status})`);
    expectThat(FAILING.ok.includes(res.status), `${this}: status ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    const receipt = (await anvil(r.t, 'eth_getTransactionReceipt', [res.body.payment.tx_hash])) as { status: string } | null;
    expectThat(receipt?.status === '0x1', `${this}: the settlement ${res.body.payment.tx_hash} is not on chain`);
    m.calls.push({ payer: this.payer, kind: this.kind, body, header, status: res.status, executionId: res.body?.execution_id });
    await afterFault(m, r, String(this));
  }
  toString() {
    return `DropTransaction(payer ${this.payer}, ${this.kind})`;
  }
}

/** The clock skew within which a payment must still be taken (seconds): well inside what the gateway allows (docs/decisions.md). */
const ALLOWED_SKEW_SECONDS = 60;

/**
 * `ClockSkew(payer, whose, seconds)`: a paid built-in call with the payer's clock (it signs the
 * authorization window) or the gateway's clock (it judges it) off by `seconds`. Within
 * {@link ALLOWED_SKEW_SECONDS} the call is taken and charged once; beyond, it may be refused, but
 * what is refused is refused before any money moves: the authorization is unused on chain and the
 * payer's balance unchanged.
 */
export class ClockSkew implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly whose: 'payer' | 'gateway',
    readonly seconds: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = bodyOf(r, 'builtin', this.payer, m.calls.length);
    const unpaid = await post(`${r.t.url}/api/v1/execute`, body);
    expectThat(unpaid.status === 402, `${this}: unpaid answer ${unpaid.status}`);
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const skewed = <T>(on: boolean, fn: () => Promise<T>): Promise<T> => {
      if (!on) return fn();
      const real = Date.now;
      Date.now = () => real() + this.seconds * 1000;
      return fn().finally(() => {
        Date.now = real;
      });
    };
    const header = paymentHeader(await skewed(this.whose === 'payer', () => officialPayload(r.payers[this.payer] as never, pr)));
    const account = r.payers[this.payer].address;
    const before = await r.truth.balanceOf(account);
    const res = await skewed(this.whose === 'gateway', () => post(`${r.t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header }));
    const { from, nonce } = (decodePaymentSignatureHeader(header).payload as { authorization: { from: `0x${string}`; nonce: `0x${string}` } }).authorization;
    const used = await authorizationUsed(r.t.gateway.services.paymentClient, r.t.stack.payment.usdc, from, nonce);
    const after = await r.truth.balanceOf(account);
    if (Math.abs(this.seconds) <= ALLOWED_SKEW_SECONDS)
      expectThat(res.status === 200, `${this}: refused within the allowed skew: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    if (res.status === 200) {
      expectThat(used && before - after === BigInt(pr.accepts[0]!.amount), `${this}: answered 200, authorization used ${used}, charged ${before - after}`);
      m.calls.push({ payer: this.payer, kind: 'builtin', body, header, status: 200, executionId: res.body?.execution_id } satisfies CallRecord);
    } else {
      expectThat([400, 402].includes(res.status), `${this}: status ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      expectThat(
        !used && after === before,
        `${this}: refused (${res.status} ${res.body?.reason ?? res.body?.error}) after money moved: authorization used ${used}, balance ${before} → ${after}`,
      );
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return `ClockSkew(payer ${this.payer}, ${this.whose}, ${this.seconds > 0 ? '+' : ''}${this.seconds} s)`;
  }
}
