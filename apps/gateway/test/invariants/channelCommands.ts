import { createChannelStorage } from '@acg/channels';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, decodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { createWalletClient, http, parseAbi, type Hex } from 'viem';
import { paymentHeader, post } from '../x402.js';
import { afterEach, expectThat, FAILING, type CallRecord, type Model, type MoneyCommand, type OfferName, type ProviderMode, type Real } from './commands.js';
import { checkConservation } from './conservation.js';
import { afterFault } from './faultCommands.js';
import { SequenceChannels } from './sequenceChannels.js';

export { SequenceChannels };
import { anvil, headBlock, refundsMined, SUITE_DEPTH } from './faults.js';

/**
 * The payment-scheme commands of the money invariant suite (issue 35 item 6; docs/money-invariants.md
 * "Payment schemes"): `upto` below its ceiling on a routed call, and x402 `batch-settlement` channels
 * (deposit, vouchers, a reused, a reordered and an over-deposit voucher, the worker's claim and settlement,
 * a worker killed between a claim on chain and its bookkeeping, a cooperative refund, a timed withdrawal).
 * Every payment is made by the official `@x402/evm` clients, unchanged; the worker's pass is the worker's
 * own (`channelSettlementOf`, the official `BatchSettlementChannelManager`). The channel equations are
 * checked from the chain after each sequence and each fault (`channelTruth.ts`).
 */

const _log = pino({ level: 'silent' });
const BUILTIN = 'intelligence.wallet_balances';
const executeUrl = (r: Real) => `${r.t.url}/api/v1/execute`;

const WITHDRAW_ABI = parseAbi([
  'function initiateWithdraw((address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt) config, uint128 amount)',
  'function finalizeWithdraw((address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt) config)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
]);

/** The gateway's channel record (official storage in its Redis). */
async function storedChannel(r: Real, channelId: string) {
  return createChannelStorage({ redis: r.t.gateway.services.redis, keys: r.t.gateway.services.keys }).get(channelId);
}

/** The channel payload parts the commands read. */
interface ChannelPayloadParts {
  type: 'deposit' | 'voucher';
  channelConfig: { payer: Hex; payerAuthorizer: Hex; receiver: Hex; receiverAuthorizer: Hex; token: Hex; withdrawDelay: number; salt: Hex };
  voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
}
const partsOf = (header: string) => decodePaymentSignatureHeader(header).payload as unknown as ChannelPayloadParts;

/** The builtin's request about `payer`'s wallet (`about`: another wallet, another request). */
function builtinBody(r: Real, payer: number, about: number = payer): CallRecord['body'] {
  return { capability_id: BUILTIN, input: { address: r.payers[about].address, chain: 'base' } };
}

/** The 402 of `body` with its batch-settlement entry. */
async function channelChallenge(r: Real, body: unknown, what: string): Promise<PaymentRequired> {
  const unpaid = await post(executeUrl(r), body);
  expectThat(unpaid.status === 402, `${what}: unpaid answer ${unpaid.status}`);
  const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
  expectThat(
    pr.accepts.some((a) => a.scheme === 'batch-settlement'),
    `${what}: the 402 offers ${pr.accepts.map((a) => a.scheme)}`,
  );
  return pr;
}

/**
 * One call of the builtin paid by `payer`'s official batch-settlement client: a deposit (with its first
 * voucher) when the channel is new or short, else a voucher; on a corrective 402 (the gateway's state
 * differs from the client's, e.g. after Redis lost writes) the client resyncs and pays again, as
 * `@x402/fetch` does. Returns the answer and the header that paid it.
 */
async function channelCall(r: Real, payer: number, body: CallRecord['body'], what: string) {
  const p = r.channels.payer(payer);
  const pr = await channelChallenge(r, body, what);
  let payload = await p.client.createPaymentPayload(pr);
  let res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
  let header = paymentHeader(payload);
  const result = await p.http.processPaymentResult(payload, (n) => res.headers.get(n), res.status);
  if (result.recovered) {
    payload = await p.client.createPaymentPayload(pr);
    header = paymentHeader(payload);
    res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header });
    await p.http.processPaymentResult(payload, (n) => res.headers.get(n), res.status);
  }
  return { res, header, payload, price: BigInt(pr.accepts.find((a) => a.scheme === 'batch-settlement')!.amount) };
}

/** Asserts a voucher-paid answer: 200, the price charged (PAYMENT-RESPONSE), a SUCCEEDED record of the price with no transaction for a voucher. */
async function expectCharged(r: Real, what: string, call: Awaited<ReturnType<typeof channelCall>>): Promise<void> {
  const { res, price } = call;
  expectThat(res.status === 200, `${what}: status ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
  expectThat(settled.success && settled.extra?.chargedAmount === price.toString(), `${what}: settlement ${JSON.stringify(settled).slice(0, 300)}`);
  const rec = await r.t.gateway.services.executions.get(res.body.execution_id);
  expectThat(rec?.status === 'SUCCEEDED' && rec.payment.amount === price.toString(), `${what}: record ${rec?.status} ${rec?.payment.amount}`);
}

/**
 * `ChannelCall(payer, n)`: `n` calls of the builtin over the payer's channel (the first ever opens it with
 * a deposit on chain; a short channel is topped up by the client): each answered 200 and charged exactly
 * the price, off chain.
 */
export class ChannelCall implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly n: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    for (let i = 0; i < this.n; i++) {
      const body = builtinBody(r, this.payer);
      const call = await channelCall(r, this.payer, body, String(this));
      await expectCharged(r, String(this), call);
      m.calls.push({ payer: this.payer, kind: 'voucher', body, header: call.header, status: 200, executionId: call.res.body.execution_id });
    }
    await afterEach(r, String(this));
  }
  toString() {
    return `ChannelCall(payer ${this.payer}, ${this.n})`;
  }
}

/** The latest voucher-paid call of `payer`, if any. */
const lastVoucher = (m: Readonly<Model>, payer: number) => [...m.calls].reverse().find((c) => c.kind === 'voucher' && c.payer === payer && c.status === 200);

/** The latest voucher-paid call of `payer`; when it has none yet, the payer's channel is opened first by one {@link ChannelCall}. */
async function someVoucher(m: Model, r: Real, payer: number, what: string): Promise<CallRecord> {
  const known = lastVoucher(m, payer);
  if (known) return known;
  const body = builtinBody(r, payer);
  const call = await channelCall(r, payer, body, what);
  await expectCharged(r, what, call);
  const c: CallRecord = { payer, kind: 'voucher', body, header: call.header, status: 200, executionId: call.res.body.execution_id };
  m.calls.push(c);
  return c;
}

/**
 * `VoucherReuse(#i)`: an accepted voucher sent again for another request (another body): refused with
 * x402's `invalid_batch_settlement_evm_cumulative_amount_mismatch`, nothing charged, nothing run.
 */
export class VoucherReuse implements MoneyCommand {
  constructor(readonly index: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    await someVoucher(m, r, this.index % 2, String(this));
    const vouchers = m.calls.filter((c) => c.kind === 'voucher' && c.status === 200);
    const c = vouchers[this.index % vouchers.length]!;
    const { channelId } = partsOf(c.header).voucher;
    const before = await storedChannel(r, channelId);
    const res = await post(executeUrl(r), builtinBody(r, c.payer, 1 - c.payer), { 'PAYMENT-SIGNATURE': c.header });
    expectThat(
      res.status === 402 && res.body?.reason === 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      `${this}: a reused voucher answered ${res.status} ${res.body?.reason}`,
    );
    const after = await storedChannel(r, channelId);
    expectThat(
      after?.chargedCumulativeAmount === before?.chargedCumulativeAmount,
      `${this}: charged ${before?.chargedCumulativeAmount} → ${after?.chargedCumulativeAmount}`,
    );
    await afterEach(r, String(this));
  }
  toString() {
    return `VoucherReuse(#${this.index})`;
  }
}

/** Signs a voucher of `cumulative` on the channel of `parts` as `payer` (the official `signVoucher`), in a payload like `template`. */
async function voucherPayload(r: Real, payer: number, template: PaymentPayload, parts: ChannelPayloadParts, cumulative: bigint): Promise<PaymentPayload> {
  const signer = toClientEvmSigner(r.payers[payer] as never, r.channels.publicClient as never);
  const voucher = await signVoucher(signer, parts.voucher.channelId, cumulative.toString(), r.t.stack.payment.network);
  return { ...template, payload: { type: 'voucher', channelConfig: parts.channelConfig, voucher } as never };
}

/**
 * `VoucherReorder(payer)`: the payer signs the next two vouchers (charged + price, charged + 2 × price)
 * and sends them in the wrong order: the later one is refused (`..._cumulative_amount_mismatch`), then
 * both are accepted in order, each charged once. Skipped when the channel cannot cover both (the
 * over-deposit case is {@link OverDeposit}'s).
 */
export class VoucherReorder implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const last = await someVoucher(m, r, this.payer, String(this));
    const parts = partsOf(last.header);
    const stored = await storedChannel(r, parts.voucher.channelId);
    const body = builtinBody(r, this.payer);
    const pr = await channelChallenge(r, body, String(this));
    const accepted = pr.accepts.find((a) => a.scheme === 'batch-settlement')!;
    const price = BigInt(accepted.amount);
    const template = await r.channels.payer(this.payer).client.createPaymentPayload(pr);
    if (!stored || template.payload.type !== 'voucher' || BigInt(stored.chargedCumulativeAmount) + 2n * price > BigInt(stored.balance))
      return afterEach(r, `${this} (skipped: the channel needs a deposit)`);
    const charged = BigInt(stored.chargedCumulativeAmount);
    const first = await voucherPayload(r, this.payer, template, parts, charged + price);
    const second = await voucherPayload(r, this.payer, template, parts, charged + 2n * price);
    const early = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': paymentHeader(second) });
    expectThat(
      early.status === 402 && early.body?.reason === 'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      `${this}: the later voucher first answered ${early.status} ${early.body?.reason}`,
    );
    const p = r.channels.payer(this.payer);
    for (const payload of [first, second]) {
      const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
      await expectCharged(r, String(this), { res, header: paymentHeader(payload), payload, price });
      await p.http.processPaymentResult(payload, (n) => res.headers.get(n), res.status);
      m.calls.push({ payer: this.payer, kind: 'voucher', body, header: paymentHeader(payload), status: 200, executionId: res.body.execution_id });
    }
    const after = await storedChannel(r, parts.voucher.channelId);
    expectThat(BigInt(after?.chargedCumulativeAmount ?? -1) === charged + 2n * price, `${this}: charged ${charged} → ${after?.chargedCumulativeAmount}`);
    await afterEach(r, String(this));
  }
  toString() {
    return `VoucherReorder(payer ${this.payer})`;
  }
}

/**
 * `OverDeposit(payer)`: the payer's channel is used until the next call needs more than its deposit
 * (vouchers by the official client, at most 10); then a voucher over the balance is refused with
 * `invalid_batch_settlement_evm_cumulative_exceeds_balance` (nothing charged), and the official client
 * pays the same call with a top-up deposit.
 */
export class OverDeposit implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = builtinBody(r, this.payer);
    const channelId = partsOf((await someVoucher(m, r, this.payer, String(this))).header).voucher.channelId;
    for (let i = 0; i < 12; i++) {
      const stored = await storedChannel(r, channelId);
      if (!stored) return afterEach(r, `${this} (skipped: the channel was closed)`);
      const pr = await channelChallenge(r, body, String(this));
      const price = BigInt(pr.accepts.find((a) => a.scheme === 'batch-settlement')!.amount);
      const charged = BigInt(stored.chargedCumulativeAmount);
      if (charged + price > BigInt(stored.balance)) {
        const template = await r.channels.payer(this.payer).client.createPaymentPayload(pr);
        const parts = partsOf(lastVoucher(m, this.payer)!.header);
        const over = await voucherPayload(r, this.payer, template, parts, charged + price);
        const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': paymentHeader(over) });
        expectThat(
          res.status === 402 && res.body?.reason === 'invalid_batch_settlement_evm_cumulative_exceeds_balance',
          `${this}: a voucher of ${charged + price} over the balance ${stored.balance} answered ${res.status} ${res.body?.reason}`,
        );
        const after = await storedChannel(r, channelId);
        expectThat(after?.chargedCumulativeAmount === stored.chargedCumulativeAmount, `${this}: charged ${charged} → ${after?.chargedCumulativeAmount}`);
        break;
      }
      const call = await channelCall(r, this.payer, body, String(this));
      await expectCharged(r, String(this), call);
      m.calls.push({ payer: this.payer, kind: 'voucher', body, header: call.header, status: 200, executionId: call.res.body.execution_id });
    }
    // the official client tops the channel up with a deposit and pays
    const call = await channelCall(r, this.payer, body, String(this));
    await expectCharged(r, String(this), call);
    m.calls.push({ payer: this.payer, kind: 'voucher', body, header: call.header, status: 200, executionId: call.res.body.execution_id });
    await afterEach(r, String(this));
  }
  toString() {
    return `OverDeposit(payer ${this.payer})`;
  }
}

/**
 * `ChannelPass(crash?)`: the worker's channel pass claims every accepted voucher (`full`) and settles the
 * claimed funds to the treasury. `crash`: the worker dies right after its claim reached the chain (its
 * facilitator never answers: no bookkeeping, lease held); a restarted worker takes over once the lease
 * expires, claims again from storage (cumulative: nothing moves twice) and settles. Then every equation,
 * from the chain.
 */
export class ChannelPass implements MoneyCommand {
  constructor(readonly crash: boolean) {}
  check = () => true;
  async run(m: Model, r: Real) {
    if (this.crash) {
      const inner = r.channels.worker();
      const facilitator = (inner as unknown as { o: { facilitator: FacilitatorClient } }).o.facilitator;
      let claimed!: () => void;
      const onChain = new Promise<void>((res) => {
        claimed = res;
      });
      const dying: FacilitatorClient = {
        verify: (p, q) => facilitator.verify(p, q),
        getSupported: () => facilitator.getSupported(),
        settle: async (p, q) => {
          const result = await facilitator.settle(p, q);
          if ((p.payload as { type?: string }).type === 'claim') {
            claimed();
            return new Promise(() => undefined);
          }
          return result;
        },
      };
      const doomed = r.channels.worker({ facilitator: dying, leaseMs: 1_000 });
      const report = doomed.pass({ full: true }).then(() => 'done' as const);
      const first = await Promise.race([onChain.then(() => 'claimed' as const), report]);
      // nothing to claim: the pass ended by itself
      if (first === 'claimed') {
        const lease = r.channels.worker();
        let pass = await lease.pass({ full: true });
        for (let i = 0; i < 100 && pass.skipped; i++) {
          await new Promise((res) => setTimeout(res, 100));
          pass = await lease.pass({ full: true });
        }
        expectThat(!pass.skipped, `${this}: the dead worker's lease never expired`);
      }
    } else {
      const pass = await r.channels.worker().pass({ full: true });
      expectThat(!pass.skipped && pass.errors.length === 0, `${this}: ${JSON.stringify(pass)}`);
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return this.crash ? 'ChannelPass(worker killed after its claim)' : 'ChannelPass';
  }
}

/**
 * `CooperativeRefund`: the worker's pass two hours later with `refundIdleSeconds` one hour: every idle
 * channel's last vouchers are claimed and the rest of its escrow goes back to its payer, its record is
 * deleted; then every equation, from the chain. The payers' clients forget the refunded channels (as
 * the official client does after a refund).
 */
export class CooperativeRefund implements MoneyCommand {
  check = () => true;
  async run(m: Model, r: Real) {
    const pass = await r.channels.worker({ refundIdleSeconds: 3_600, now: () => Date.now() + 2 * 3_600_000 }).pass({ full: true });
    expectThat(!pass.skipped, `${this}: skipped`);
    for (const c of pass.refunds) {
      expectThat((await storedChannel(r, c.channel)) === undefined, `${this}: refunded channel ${c.channel} still stored`);
      for (const i of [0, 1]) await r.channels.payer(i).storage.delete(c.channel.toLowerCase());
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return 'CooperativeRefund';
  }
}

/**
 * `ChannelReorg(payer, watched)`: the worker's claim and settlement reorged out. One more call over the
 * payer's channel (opening it when new), the worker's full pass (every voucher claimed, the claims settled
 * to the treasury), then the blocks of that pass (at most `SUITE_DEPTH`) replaced by empty ones
 * (`anvil_reorg`; `watched`: a finality round saw them first). The worker then acts as it would: its repair
 * (finality rounds put deposits back), and its periodic pass, which finds the chain's `totalClaimed` below
 * its record for a channel it claimed within `claimWatchSeconds` and claims it again (cumulative: nothing
 * twice), and settles what is claimed and not settled. After: every accepted voucher claimed on chain
 * exactly once, and every equation.
 */
export class ChannelReorg implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly watched: boolean,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = builtinBody(r, this.payer);
    const call = await channelCall(r, this.payer, body, String(this));
    await expectCharged(r, String(this), call);
    m.calls.push({ payer: this.payer, kind: 'voucher', body, header: call.header, status: 200, executionId: call.res.body.execution_id });
    const channelId = partsOf(call.header).voucher.channelId.toLowerCase();
    const before = await headBlock(r.t);
    const pass = await r.channels.worker().pass({ full: true });
    expectThat(!pass.skipped && pass.errors.length === 0, `${this}: ${JSON.stringify(pass)}`);
    const claimed = async () =>
      (
        await r.t.gateway.services.paymentClient.readContract({
          address: r.t.stack.payment.batchSettlement,
          abi: WITHDRAW_ABI,
          functionName: 'channels',
          args: [channelId as Hex],
        })
      )[1];
    const claimedBefore = await claimed();
    const depth = Math.min(Number((await headBlock(r.t)) - before), SUITE_DEPTH);
    if (depth > 0) {
      if (this.watched) await r.faults.finality.check();
      await anvil(r.t, 'anvil_reorg', [depth, []]);
      const claimedAfter = await claimed();
      if (process.env.MONEY_INVARIANTS_LOG)
        console.log(`${this}: ${depth} blocks reorged out, channel ${channelId.slice(0, 10)} claimed ${claimedBefore} → ${claimedAfter}`);
      await r.faults.repair(r.scope, r.truth);
      const again = await r.channels.worker().pass();
      expectThat(!again.skipped && again.errors.length === 0, `${this}: the pass after the reorg: ${JSON.stringify(again)}`);
      const stored = await storedChannel(r, channelId);
      const back = await claimed();
      expectThat(
        stored !== undefined && back === BigInt(stored.chargedCumulativeAmount) && back === claimedBefore,
        `${this}: after the reorg the chain says claimed ${back} (before the reorg ${claimedBefore}, the record charged ${stored?.chargedCumulativeAmount})`,
      );
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return `ChannelReorg(payer ${this.payer}${this.watched ? ', watched' : ''})`;
  }
}

/**
 * `TimedWithdrawal(payer)`: the payer starts a timed withdrawal of its whole unclaimed escrow on chain
 * (`initiateWithdraw`); the gateway, 700 s later by its clock (inside the 300 s margin before the 900 s
 * `withdrawDelay` ends), refuses the next voucher with `invalid_batch_settlement_evm_withdrawal_pending`;
 * the worker's pass 700 s later claims what was accepted (the withdrawal read from the chain). Then, on a
 * snapshot of the chain (`evm_snapshot`): the chain's clock moves past the delay (`evm_increaseTime`), the
 * payer finalizes and gets back exactly what was not claimed, and every equation holds from the chain;
 * the chain goes back to the snapshot (`evm_revert`: its clock with it, so the suite's payment windows
 * keep matching the wall clock), the withdrawal still pending, and every equation is checked again.
 */
export class TimedWithdrawal implements MoneyCommand {
  constructor(readonly payer: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const last = await someVoucher(m, r, this.payer, String(this));
    const parts = partsOf(last.header);
    const id = parts.voucher.channelId;
    const contract = r.t.stack.payment.batchSettlement;
    const channel = () => r.channels.publicClient.readContract({ address: contract, abi: WITHDRAW_ABI, functionName: 'channels', args: [id] });
    const [balance, totalClaimed] = await channel();
    const pending = await r.channels.publicClient.readContract({ address: contract, abi: WITHDRAW_ABI, functionName: 'pendingWithdrawals', args: [id] });
    if (balance <= totalClaimed || pending[1] > 0 || !(await storedChannel(r, id)))
      return afterFault(m, r, `${this} (skipped: nothing in escrow, or already withdrawing)`);
    const pay = r.t.stack.payment;
    await r.channels.gas(this.payer);
    const wallet = createWalletClient({ account: r.payers[this.payer], chain: pay.chain, transport: http(pay.rpcUrl) });
    const config = { ...parts.channelConfig, withdrawDelay: Number(parts.channelConfig.withdrawDelay) };
    const send = async (hash: Hex) => {
      const receipt = await r.channels.publicClient.waitForTransactionReceipt({ hash });
      expectThat(receipt.status === 'success', `${this}: ${hash} reverted`);
    };
    await send(
      await wallet.writeContract({ address: contract, abi: WITHDRAW_ABI, functionName: 'initiateWithdraw', args: [config as never, balance - totalClaimed] }),
    );
    // the gateway 700 s later (its mirror of the chain is stale by then, so it reads the withdrawal)
    const body = builtinBody(r, this.payer);
    const refused = await withClockAhead(700, async () => {
      const pr = await channelChallenge(r, body, String(this));
      const payload = await r.channels.payer(this.payer).client.createPaymentPayload(pr);
      return post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    });
    expectThat(
      refused.status === 402 && refused.body?.reason === 'invalid_batch_settlement_evm_withdrawal_pending',
      `${this}: a voucher inside the withdrawal margin answered ${refused.status} ${refused.body?.reason}`,
    );
    // the worker near the deadline: claims what was accepted, settles it
    const pass = await r.channels.worker({ now: () => Date.now() + 700_000 }).pass();
    expectThat(!pass.skipped, `${this}: the worker's pass was skipped`);
    const stored = await storedChannel(r, id);
    const [, claimed] = await channel();
    expectThat(
      BigInt(stored?.chargedCumulativeAmount ?? -1) === claimed,
      `${this}: accepted ${stored?.chargedCumulativeAmount}, claimed ${claimed} before the deadline`,
    );
    // the worker's repair first (what an earlier crash left), and every equation with the withdrawal pending
    await afterFault(m, r, `${this} (pending)`);
    // past the delay on a snapshot of the chain: the payer takes back exactly what was not claimed
    const snapshot = (await anvil(r.t, 'evm_snapshot')) as string;
    try {
      await anvil(r.t, 'evm_increaseTime', [config.withdrawDelay + 1]);
      await anvil(r.t, 'evm_mine');
      const [escrowed] = await channel();
      const before = await r.truth.balanceOf(r.payers[this.payer].address);
      await send(await wallet.writeContract({ address: contract, abi: WITHDRAW_ABI, functionName: 'finalizeWithdraw', args: [config as never] }));
      const back = (await r.truth.balanceOf(r.payers[this.payer].address)) - before;
      expectThat(back === escrowed - claimed, `${this}: the payer got back ${back} of ${escrowed} escrowed, ${claimed} claimed`);
      const v = await checkConservation(r.truth, r.scope);
      if (v.length) throw new Error(`after ${this} (finalized): ${v.join('; ')}`);
    } finally {
      await anvil(r.t, 'evm_revert', [snapshot]);
    }
    await afterFault(m, r, String(this));
  }
  toString() {
    return `TimedWithdrawal(payer ${this.payer})`;
  }
}

/** Runs `fn` with this process's clock (the gateway's, in-process) `seconds` ahead. */
async function withClockAhead<T>(seconds: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => real() + seconds * 1000;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

/**
 * `UptoRoutedCall(payer, cheap mode, dear mode)`: a routed call of the two-offer contract paid with x402
 * `upto` by the official client (a Permit2 witness transfer for the route's highest price as ceiling):
 * a success settles exactly the answering offer's price (below the ceiling when the cheap offer answers),
 * with no refund transaction; a failure settles nothing. The payer's balance moves by exactly that.
 */
export class UptoRoutedCall implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly cheap: ProviderMode,
    readonly dear: ProviderMode,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const body = { capability_id: r.routed.capabilityId, input: { text: `upto ${m.calls.length}` }, routing: { prefer: 'cheapest' } };
    const unpaid = await post(executeUrl(r), body);
    if (unpaid.status === 503) return afterEach(r, `${this} (every offer suspended)`);
    expectThat(unpaid.status === 402, `${this}: unpaid answer ${unpaid.status}`);
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const upto = pr.accepts.find((a) => a.scheme === 'upto');
    // one offer left (the other suspended): one price, nothing to settle below it, `exact` alone
    if (!upto) return afterEach(r, `${this} (skipped: the 402 offers ${pr.accepts.map((a) => a.scheme)})`);
    const ceiling = BigInt(upto.amount);
    await r.channels.approvePermit2(this.payer);
    const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(r.payers[this.payer] as never)));
    const header = paymentHeader(await client.createPaymentPayload(pr));
    const account = r.payers[this.payer].address;
    // an earlier call's refund still on its way would land in the middle of the measure
    await refundsMined(r.truth);
    const before = await r.truth.balanceOf(account);
    for (const n of ['cheap', 'dear'] as OfferName[]) r.routed[n].mode.current = n === 'cheap' ? this.cheap : this.dear;
    const res = await post(executeUrl(r), body, { 'PAYMENT-SIGNATURE': header }).finally(() => {
      for (const n of ['cheap', 'dear'] as OfferName[]) r.routed[n].mode.current = 'ok';
    });
    const charged = before - (await r.truth.balanceOf(account));
    if (res.status === 200) {
      const answering = (['cheap', 'dear'] as OfferName[]).find((n) => r.routed[n].providerId === res.body?.provider?.provider_id);
      expectThat(answering !== undefined, `${this}: answered by ${res.body?.provider?.provider_id}`);
      const price = r.routed[answering!].price;
      expectThat(
        charged === price && res.body.payment?.amount === price.toString() && res.body.refund === undefined,
        `${this}: ceiling ${ceiling}, answered by ${answering} at ${price}: charged ${charged}, payment ${JSON.stringify(res.body.payment)}, refund ${JSON.stringify(res.body.refund)}`,
      );
    } else {
      expectThat([...FAILING.http_500, ...FAILING.timeout].includes(res.status), `${this}: status ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      expectThat(charged === 0n, `${this}: a failed call charged ${charged}`);
    }
    m.calls.push({ payer: this.payer, kind: 'routed', body, header, status: res.status, executionId: res.body?.execution_id });
    await afterEach(r, String(this));
  }
  toString() {
    return `UptoRoutedCall(payer ${this.payer}, cheap ${this.cheap}, dear ${this.dear})`;
  }
}

/**
 * Before a sequence begins: every channel an earlier sequence left is claimed, settled and refunded
 * cooperatively (the worker's pass, two hours later), so that a sequence's escrow and receiver figures
 * are its own.
 */
export async function closeChannels(r: Pick<Real, 't' | 'payers' | 'faults'>): Promise<void> {
  const kit = new SequenceChannels(r);
  const storage = createChannelStorage({ redis: r.t.gateway.services.redis as Redis, keys: r.t.gateway.services.keys });
  if ((await storage.list()).length === 0) return;
  await kit.worker({ refundIdleSeconds: 3_600, now: () => Date.now() + 2 * 3_600_000 }).pass({ full: true });
  // a channel the refund left (nothing available to refund: its payer withdrew) goes from the records
  for (const c of await storage.list()) await storage.updateChannel(c.channelId, () => undefined);
}
