import { startDevStack, type DevStack } from '@acg/devnet';
import { reconcileBlocks, type ChainReconciliationOptions } from '@acg/reconciliation';
import { readRefund, readRefundTag, startRefunds } from '@acg/treasury';
import type { Worker } from 'bullmq';
import { pino } from 'pino';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainReconciliationOptions, createWorkerServices, type WorkerServices } from '../../../worker/src/index.js';
import { startTestGateway, treasurySender, type TestGateway } from '../harness.js';
import { anvil, headBlock } from '../invariants/faults.js';
import { RestartableRedis } from '../invariants/restartableRedis.js';
import { waitFor } from '../waitFor.js';
import { paidPost, walletBalancesRequest } from '../x402.js';

/**
 * Issue 33, found by the money invariant suite's `LoseLastWrites` (docs/money-invariants.md): the
 * private Redis restarted without its last writes, after a refund was sent, refunded the payer a
 * second time: `[RoutedCall(payer 0, cheap invalid_output, dear http_500), LoseLastWrites]`, payer
 * refunded 400000 twice for one payment of 400000. A refund now says on chain what it refunds
 * (its payment and operation, appended to the transfer: packages/treasury/src/refundTag.ts), so
 * the refund worker and the chain reconciliation find it instead of sending it again. A real
 * redis-server, restarted from an RDB checkpoint; real anvil.
 */

const log = pino({ level: 'silent' });
let redis: RestartableRedis;
let stack: DevStack;
let t: TestGateway;
let worker: WorkerServices;
let options: ChainReconciliationOptions;
let refunds: Worker | undefined;

const startRefundWorker = () => {
  refunds = startRefunds({
    redis: t.gateway.services.redis,
    keys: t.gateway.services.keys,
    connection: t.gateway.services.bullRedis,
    rpcUrl: t.config.payment.rpcUrl,
    chain: t.config.payment.chain,
    asset: t.config.payment.asset,
    treasuryPrivateKey: t.config.payment.treasuryPrivateKey,
    log,
  });
};
const stopRefundWorker = async () => {
  await refunds?.close();
  refunds = undefined;
};

beforeAll(async () => {
  redis = await RestartableRedis.start();
  stack = await startDevStack({ quiet: true, redisUrl: redis.url });
  // the refund worker is started and stopped by the tests, to place the Redis checkpoint around a refund
  t = await startTestGateway({ stack, refundWorker: false });
  worker = createWorkerServices(t.config, log);
  options = chainReconciliationOptions(worker, log, { confirmations: 0 }, treasurySender(t));
});
afterAll(async () => {
  await stopRefundWorker();
  await worker?.close();
  await t?.close();
  await stack?.stop();
  await redis?.stop();
});

/** The private Redis restarted from its checkpoint; resolves once the gateway's connections answer again. */
async function loseLastWrites(): Promise<void> {
  await redis.restartFromCheckpoint();
  await waitFor(
    () =>
      Promise.all([t.gateway.services.redis.ping(), worker.redis.ping()]).then(
        () => true,
        () => false,
      ),
    (ok) => ok,
  );
}

/** A paid built-in call by `buyer` (1000 base units), as if it had failed: its refund queued for the whole payment. */
async function paidAndRefunded(buyerIndex: number) {
  const buyer = t.stack.payment.buyers[buyerIndex];
  const before = await t.usdc(buyer.address);
  const call = await paidPost(buyer, t.executeUrl, walletBalancesRequest(buyer.address));
  expect(call.status).toBe(200);
  const { execution_id: operationId, payment } = call.body as { execution_id: string; payment: { tx_hash: Hex; amount: string } };
  return { buyer, before, operationId, payment, refund: { operationId, payer: buyer.address, amount: payment.amount, paymentTxHash: payment.tx_hash } };
}

describe('a refund whose record is lost after it was sent (a Redis restart without its last writes)', () => {
  it('is found on chain by the refund worker, not sent again', async () => {
    const { buyer, before, operationId, payment, refund } = await paidAndRefunded(0);
    await t.gateway.services.refunds.enqueue(refund);
    await redis.checkpoint(); // the refund is queued, not sent
    startRefundWorker();
    const sent = await waitFor(
      () => readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId),
      (r) => r?.status === 'sent',
    );
    await stopRefundWorker();
    expect(await t.usdc(buyer.address)).toBe(before);
    // the transfer says what it refunds
    const tx = await t.gateway.services.paymentClient.getTransaction({ hash: sent!.tx_hash as Hex });
    expect(readRefundTag(tx.input)).toEqual({ paymentTxHash: payment.tx_hash, operationId });

    await loseLastWrites();
    expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId)).toMatchObject({ status: 'pending' });
    startRefundWorker(); // its job is back in the queue, the record holds no signed transaction
    const again = await waitFor(
      () => readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId),
      (r) => r?.status === 'sent',
    );
    await stopRefundWorker();
    expect(again?.tx_hash).toBe(sent?.tx_hash);
    expect(await t.usdc(buyer.address)).toBe(before); // refunded once
  });

  it('with its payment and reservation lost too: the chain reconciliation restores the record and refunds nothing more', async () => {
    const from = (await headBlock(t)) + 1n;
    await redis.checkpoint(); // before the payment
    const { buyer, before, operationId, refund } = await paidAndRefunded(1);
    await t.gateway.services.refunds.enqueue(refund);
    startRefundWorker();
    const sent = await waitFor(
      () => readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId),
      (r) => r?.status === 'sent',
    );
    await stopRefundWorker();
    expect(await t.usdc(buyer.address)).toBe(before);

    await loseLastWrites();
    expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId)).toBeUndefined();
    await anvil(t, 'anvil_mine', ['0x1']);
    const counts = await reconcileBlocks(options, from, await headBlock(t));
    expect(counts).toMatchObject({ repaired: 1, undecided: 0 });
    expect(await readRefund(t.gateway.services.redis, t.gateway.services.keys, operationId)).toMatchObject({ status: 'sent', tx_hash: sent!.tx_hash });
    startRefundWorker();
    // whatever the reconciliation queued is sent; the payer holds what it held, refunded once
    await new Promise((res) => setTimeout(res, 1_000));
    await stopRefundWorker();
    expect(await t.usdc(buyer.address)).toBe(before);
    // a second run changes nothing
    expect(await reconcileBlocks(options, from, await headBlock(t))).toMatchObject({ repaired: 0, undecided: 0 });
    expect(await t.usdc(buyer.address)).toBe(before);
  });
});
