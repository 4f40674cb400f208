import { reconcileBlocks, type ChainReconciliationOptions, type ReconciliationCounts } from '@acg/reconciliation';
import { TransferFinality, type FinalityRound } from '@acg/treasury';
import { redisHealth } from '@acg/redis';
import { pino } from 'pino';
import { channelUnpaidHandler } from '../../../worker/src/channels.js';
import { chainReconciliationOptions, createWorkerServices, type WorkerServices } from '../../../worker/src/index.js';
import { treasurySender, type TestGateway } from '../harness.js';
import { sweep } from './sweep.js';
import type { MoneyTruth, Scope } from './conservation.js';
import type { RestartableRedis } from './restartableRedis.js';

/**
 * The chain side of the money invariant suite's faults (docs/money-invariants.md "Faults"): JSON-RPC
 * to anvil (reorgs, the node's pool, mining), and the repair the worker runs from the chain, which
 * every fault command and the end of every sequence run before the equations are checked:
 * - the finality tracker (`TransferFinality`, what the worker runs on every new block) re-sends
 *   a settlement, refund or payout a reorg took off the chain;
 * - the chain reconciliation (`reconcileBlocks` with the worker's own options,
 *   `chainReconciliationOptions`: the code path of the `reconcile` command) checks every payment
 *   into the treasury of the sequence up to the confirmed block against the records;
 * - the refunds they queue are awaited until mined.
 */

/**
 * Blocks under the head at which a transfer counts as final, and a payment as confirmed, in the
 * suite. `Reorg` goes at most this deep: a reorg of a final block is beyond what finality promises.
 */
export const SUITE_DEPTH = 3;

/** A JSON-RPC request to anvil; throws the node's error. */
export async function anvil(t: TestGateway, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(t.stack.payment.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** The head block number of the payment chain. */
export async function headBlock(t: TestGateway): Promise<bigint> {
  return BigInt((await anvil(t, 'eth_blockNumber')) as string);
}

/** What the fault commands share for one test file: the restartable Redis, the worker's services and the repair from the chain. */
export class FaultKit {
  readonly worker: WorkerServices;
  private readonly options: ChainReconciliationOptions;
  readonly finality: TransferFinality;

  constructor(
    readonly t: TestGateway,
    readonly redis: RestartableRedis,
  ) {
    const log = pino({ level: 'silent' });
    this.worker = createWorkerServices(t.config, log);
    this.options = chainReconciliationOptions(this.worker, log, { confirmations: SUITE_DEPTH }, treasurySender(t));
    this.finality = new TransferFinality({
      redis: this.worker.redis,
      keys: this.worker.keys,
      publicClient: this.worker.paymentClient,
      sender: treasurySender(t),
      rule: { depth: SUITE_DEPTH },
      reversals: t.gateway.services.creditReversal,
      // as the worker wires it: a provider's entry follows a settlement a reorg moved to another transaction
      onSettlementMoved: ({ operationId, txHash }) => this.worker.providerLedger.repointPayment(operationId, txHash),
      // a channel whose deposit a reorg took for good: marked unpaid, its accepted charges reported (ch:unpaid)
      onChannelUnpaid: channelUnpaidHandler(this.worker, log),
      log,
    });
  }

  /**
   * The private Redis restarted from its checkpoint (`RestartableRedis.restartFromCheckpoint`), and
   * the gateway's and the worker's connections answered again (reconnected, health PING back up).
   */
  async loseLastWrites(): Promise<void> {
    await this.redis.restartFromCheckpoint();
    const clients = [this.t.gateway.services.redis, this.worker.redis];
    for (let i = 0; i < 400; i++) {
      const up = await Promise.all(
        clients.map((c) =>
          c.ping().then(
            () => !redisHealth(c)?.down,
            () => false,
          ),
        ),
      );
      if (up.every(Boolean)) return;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error('the gateway did not reconnect to the restarted Redis');
  }

  /** Mines `n` blocks. */
  mine(n: number): Promise<unknown> {
    return anvil(this.t, 'anvil_mine', [`0x${n.toString(16)}`]);
  }

  /**
   * The repair the worker runs from the chain, until it has nothing left to do: the crash-recovery
   * sweep (every in-flight reservation orphaned), blocks are mined
   * so that the sequence's transfers are confirmed, a finality round re-sends what a reorg removed,
   * the chain reconciliation checks the sequence's payments up to the confirmed block, and the
   * refunds queued meanwhile are mined. Returns what it did (for the log).
   */
  async repair(scope: Scope, truth: MoneyTruth): Promise<{ rounds: FinalityRound[]; counts: ReconciliationCounts[]; completed: string[] }> {
    const rounds: FinalityRound[] = [];
    const counts: ReconciliationCounts[] = [];
    const completed: string[] = [];
    for (let i = 0; i < 8; i++) {
      // the crash sweep: a settlement a reorg took away and the tracker put back is the sweep's again
      const swept = await sweep(this.t);
      completed.push(...swept.completed);
      await this.mine(SUITE_DEPTH + 1);
      const round = await this.finality.check();
      rounds.push(round);
      const confirmed = (await headBlock(this.t)) - BigInt(SUITE_DEPTH);
      const c =
        confirmed >= scope.fromBlock ? await reconcileBlocks(this.options, scope.fromBlock, confirmed) : { matched: 0, repaired: 0, deferred: 0, undecided: 0 };
      counts.push(c);
      await refundsMined(truth);
      const quiet =
        !swept.refunded.length &&
        !swept.completed.length &&
        !round.resent.length &&
        !round.moved.length &&
        !round.unpaid.length &&
        c.repaired === 0 &&
        c.deferred === 0;
      if (quiet) break;
    }
    return { rounds, counts, completed };
  }

  async close(): Promise<void> {
    await this.worker.close();
  }
}

/** Waits until every refund record is `sent` (the gateway's refund worker mines them), at most 60 s. */
export async function refundsMined(truth: MoneyTruth): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const pending = (await truth.refundRecords()).filter((x) => x.status !== 'sent');
    if (pending.length === 0) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}
