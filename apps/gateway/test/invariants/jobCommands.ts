import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { toClientEvmSigner, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { paymentHeader, post, readJob } from '../x402.js';
import { afterEach, expectThat, type Model, type MoneyCommand, type Real } from './commands.js';
import { LoseLastWrites, Reorg } from './faultCommands.js';
import { refundsMined } from './faults.js';

/**
 * The `upto` job command of the money invariant suite (issue 35 item 6; docs/money-invariants.md
 * "Payment schemes"): a job paid with the official `@x402/evm` upto client, its budget the ceiling,
 * run by the suite's worker (the job runner of `startWorker`), which records what the steps spent on the
 * payment's reservation; the gateway settles exactly that (`Paywall.settleRecorded`, or the deferred
 * recovery), with no refund transaction.
 */

const BUILTIN = 'intelligence.wallet_balances';
/** the built-in's price (base units): what one step spends */
const STEP_PRICE = 1000n;
/** the job's budget (USDC), the `upto` ceiling: above what any job of this command spends */
const BUDGET_USDC = 0.005;
/**
 * Payers (lower case) whose ended `upto` job the suite's worker records without nudging the gateway: the
 * worker dies after `recordDeferredCharge`, before its pub/sub message (money.int.test.ts wires it).
 */
export const NUDGE_LOST = new Set<string>();
const ENDED = ['succeeded', 'failed', 'cancelled', 'budget_exhausted'];
/** an ended job whose `upto` settlement is done: on chain (settled or final), or nothing to settle */
const SETTLED = ['settled', 'final', 'not_charged'];

/**
 * `UptoJob(payer, steps, nudge lost?)`: `POST /api/v1/jobs` with `steps` (1–3) built-in steps and a 0.005
 * USDC budget, paid with `upto` (ceiling 5000). The job answers 202 with no settlement; once it ends, its
 * payment is settled for exactly what its steps spent (`steps` × 1000), in one transaction through the
 * `x402UptoPermit2Proxy`, with no refund; the payer's balance moves by exactly that. `nudge lost`: the
 * worker records the amount and dies before it tells the gateway; the gateway's deferred recovery round
 * (`Paywall.recoverDeferred`, run here at once rather than a minute later) settles it the same. `then`:
 * right after, the settlement's block is reorged out before any finality round saw it (`Reorg(1)`: the
 * facilitator's signed bytes kept when it was tracked are broadcast again), or Redis comes back without
 * every write of the job (`LoseLastWrites`: the chain reconciliation finds the settlement without its
 * reservation and refunds it in full); every equation after either.
 */
export class UptoJob implements MoneyCommand {
  constructor(
    readonly payer: number,
    readonly steps: number,
    readonly nudgeLost: boolean,
    /** a fault right after the settlement: its block reorged out (unwatched), or Redis back at the checkpoint before the job */
    readonly then?: 'Reorg' | 'LoseLastWrites',
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const account = r.payers[this.payer];
    const steps = Array.from({ length: this.steps }, () => ({ capability_id: BUILTIN, input: { address: account.address, chain: 'base' } }));
    const body = { objective: `upto job of ${this.steps}`, budget_usdc: BUDGET_USDC, capabilities: [BUILTIN], steps };
    const url = `${r.t.url}/api/v1/jobs`;
    const unpaid = await post(url, body);
    expectThat(unpaid.status === 402, `${this}: unpaid answer ${unpaid.status} ${JSON.stringify(unpaid.body).slice(0, 300)}`);
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const upto = pr.accepts.find((a) => a.scheme === 'upto');
    expectThat(upto !== undefined, `${this}: the 402 offers ${pr.accepts.map((a) => a.scheme)}, no upto`);
    const ceiling = BigInt(upto!.amount);
    await r.channels.approvePermit2(this.payer);
    const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(account as never)));
    const header = paymentHeader(await client.createPaymentPayload(pr));
    // an earlier call's refund still on its way would land in the middle of the measure
    await refundsMined(r.truth);
    const before = await r.truth.balanceOf(account.address);
    const payerKey = account.address.toLowerCase();
    if (this.nudgeLost) NUDGE_LOST.add(payerKey);
    const created = await post(url, body, { 'PAYMENT-SIGNATURE': header }).catch((e: unknown) => {
      NUDGE_LOST.delete(payerKey);
      throw e;
    });
    expectThat(created.status === 202, `${this}: status ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`);
    const jobId: string = created.body.job_id;
    // the worker runs the steps; the gateway settles what they spent (at most about 60 s under load)
    let job: any;
    try {
      for (let i = 0; i < 600; i++) {
        job = await readJob(r.t.url, jobId, account);
        if (ENDED.includes(job.status) && SETTLED.includes(job.payment?.status)) break;
        // the gateway's recovery round, once the worker recorded the amount without a nudge
        if (this.nudgeLost && ENDED.includes(job.status)) await r.t.gateway.services.paywall.recoverDeferred({ olderThanMs: 0 });
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      NUDGE_LOST.delete(payerKey);
    }
    expectThat(SETTLED.includes(job.payment?.status), `${this}: job ${jobId} not settled: ${JSON.stringify(job).slice(0, 400)}`);
    const spent = STEP_PRICE * BigInt(this.steps);
    const charged = before - (await r.truth.balanceOf(account.address));
    expectThat(
      job.status === 'succeeded' && job.spent_base_units === String(spent) && job.payment.amount === String(spent) && job.refund === null,
      `${this}: ceiling ${ceiling}, ${this.steps} steps: job ${job.status}, spent ${job.spent_base_units}, payment ${JSON.stringify(job.payment)}, refund ${JSON.stringify(job.refund)}`,
    );
    expectThat(spent < ceiling && charged === spent, `${this}: ceiling ${ceiling}, the steps spent ${spent}, the payer was charged ${charged}`);
    const tx = await r.truth.client.getTransaction({ hash: job.payment.tx_hash });
    expectThat(
      tx.to?.toLowerCase() === x402UptoPermit2ProxyAddress.toLowerCase(),
      `${this}: the settlement ${job.payment.tx_hash} went to ${tx.to}, not the upto proxy`,
    );
    if (this.then === 'Reorg') return new Reorg(1, false).run(m, r);
    if (this.then === 'LoseLastWrites') return new LoseLastWrites().run(m, r);
    await afterEach(r, String(this));
  }
  toString() {
    return `UptoJob(payer ${this.payer}, ${this.steps} steps${this.nudgeLost ? ', nudge lost' : ''}${this.then ? `, then ${this.then}` : ''})`;
  }
}
