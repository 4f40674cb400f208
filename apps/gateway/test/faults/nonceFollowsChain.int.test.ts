import { devClients, devPrivateKey, type DevClients } from '@acg/devnet';
import { succeededExecutionAnswer } from '@acg/execution';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { recoverPayments } from '../harness.js';
import { useTestGateway } from '../useTestGateway.js';
import { waitFor } from '../waitFor.js';
import { challenge, officialPayload, paymentHeader, post, walletBalancesRequest } from '../x402.js';

// issue 33 ("The chain is the ledger of record") item 4, on a real anvil: the facilitator's nonce
// follows the chain. After a reorg (or any drop of the chain's nonce below the one it last used), a
// dropped settlement, or a stuck one, the stack goes on without a restart, and every payment is
// either executed or refunded, from the chain's balances and the gateway's records.
const t = useTestGateway();
const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const facilitator = privateKeyToAccount(devPrivateKey(0)).address;
let chain: DevClients;

beforeAll(async () => {
  chain = await devClients(t.stack.payment.rpcUrl);
});

/** One paid `POST /api/v1/execute` by `buyer` (the official client's payment): status, body and the header to resend. */
async function paidCall(buyerIndex: number) {
  const buyer = t.stack.payment.buyers[buyerIndex];
  const body = walletBalancesRequest(buyer.address);
  const header = paymentHeader(await officialPayload(buyer, await challenge(t.executeUrl, body)));
  const r = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': header });
  return { ...r, header, request: body };
}

const rpc = (method: string, params: unknown[]) => chain.publicClient.request({ method, params } as never) as Promise<unknown>;
const nonceOf = (blockTag: 'latest' | 'pending') => chain.publicClient.getTransactionCount({ address: facilitator, blockTag });

/** Every paid call either delivered its execution (charged once) or was not charged: from the chain and the records. */
async function executedOrRefunded(calls: { status: number; body: any }[], charged: bigint) {
  let executed = 0n;
  for (const c of calls) {
    if (c.status !== 200) continue;
    executed++;
    const record = await t.gateway.services.executions.get(c.body.execution_id);
    expect(record?.status).toBe('SUCCEEDED');
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: c.body.payment.tx_hash });
    expect(receipt.status).toBe('success');
  }
  expect(charged).toBe(executed * PRICE);
}

describe("the chain's nonce falls below the facilitator's (a reorg, issue 33)", () => {
  it('settles the next payments at the chain nonce, without a restart', { timeout: 120_000 }, async () => {
    const buyer = t.stack.payment.buyers[2].address;
    // a few settlements, then the chain loses them: anvil_reorg of their blocks, and the chain's
    // count set back to where it was before them (as when the reorged transactions are dropped)
    const start = await nonceOf('latest');
    for (let i = 0; i < 3; i++) expect((await paidCall(1)).status).toBe(200);
    expect(await nonceOf('latest')).toBe(start + 3);
    await rpc('anvil_reorg', [3, []]);
    await rpc('anvil_setNonce', [facilitator, `0x${start.toString(16)}`]);
    expect(await nonceOf('pending')).toBe(start);

    const before = await t.usdc(buyer);
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await paidCall(2));
    expect(calls.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(await nonceOf('latest')).toBe(start + 3);
    await executedOrRefunded(calls, before - (await t.usdc(buyer)));
  });
});

describe('a settlement the node dropped (anvil_dropTransaction)', () => {
  it('is rebroadcast at its nonce and mined; the paid call answers 200, charged once', { timeout: 120_000 }, async () => {
    const buyer = t.stack.payment.buyers[4].address;
    const before = await t.usdc(buyer);
    await rpc('evm_setAutomine', [false]);
    let call: Promise<Awaited<ReturnType<typeof paidCall>>> | undefined;
    try {
      const latest = await nonceOf('latest');
      call = paidCall(4);
      // the settlement waits in the pool; the node drops it
      await waitFor(
        () => nonceOf('pending'),
        (n) => n > latest,
      );
      const pool = (await rpc('txpool_content', [])) as { pending: Record<string, Record<string, { hash: `0x${string}` }>> };
      const mine = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === facilitator.toLowerCase())?.[1] ?? {};
      const dropped = Object.values(mine)[0].hash;
      await rpc('anvil_dropTransaction', [dropped]);
      expect(await nonceOf('pending')).toBe(latest);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    const r = await call!;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await executedOrRefunded([r], before - (await t.usdc(buyer)));
  });
});

describe('a settlement stuck in the node (nothing mined within the confirmation wait)', () => {
  it('answers an honest 503 naming the settlement; once it mines, the same payment gets its result', { timeout: 180_000 }, async () => {
    const buyer = t.stack.payment.buyers[5].address;
    const before = await t.usdc(buyer);
    await rpc('evm_setAutomine', [false]);
    let stuck: Awaited<ReturnType<typeof paidCall>>;
    try {
      stuck = await paidCall(5);
      expect(stuck.status, JSON.stringify(stuck.body)).toBe(503);
      expect(stuck.headers.get('retry-after')).toBeTruthy();
      expect(stuck.body).toMatchObject({
        reason: 'settlement_pending',
        payment: {
          status: 'unknown',
          tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
          authorization: { from: expect.any(String), nonce: expect.any(String) },
        },
      });
      expect(stuck.body.detail).toContain(stuck.body.payment.tx_hash);
      expect(stuck.body.detail).not.toMatch(/unreachable/);
      // neither a retry nor the sweep releases a settlement still waiting in the node: it may yet be mined
      const retry = await post(t.executeUrl, stuck.request, { 'PAYMENT-SIGNATURE': stuck.header });
      expect(retry.status).toBe(503);
      expect(retry.body).toMatchObject({ reason: 'settlement_pending', payment: { tx_hash: stuck.body.payment.tx_hash } });
      const finishedAnswer = (op: string) => succeededExecutionAnswer(t.gateway.services.executions, op);
      const round = await recoverPayments(t, { olderThanMs: 0, finishedAnswer });
      expect(round).toEqual({ released: [], refunded: [], completed: [] });
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    await rpc('evm_mine', []);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: stuck.body.payment.tx_hash });
    expect(receipt.status).toBe('success');
    const again = await post(t.executeUrl, stuck.request, { 'PAYMENT-SIGNATURE': stuck.header });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.payment.tx_hash).toBe(stuck.body.payment.tx_hash);
    await executedOrRefunded([again], before - (await t.usdc(buyer)));
  });
});
