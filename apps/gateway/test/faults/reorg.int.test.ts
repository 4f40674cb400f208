import { PaymentInProgressError, requestHash } from '@acg/payments';
import { readRefund, startTransferFinality, trackedTransfer, TransferFinality, transferWithAuthorizationData, type FinalityRound } from '@acg/treasury';
import { runPayoutPass } from '@acg/provider-ledger';
import { ulid } from 'ulid';
import { pino } from 'pino';
import { createTestClient, createWalletClient, erc20Abi, http, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { paywallWithSettle, providerLedgerAt, treasurySender } from '../harness.js';
import { useTestGateway } from '../useTestGateway.js';
import { waitFor } from '../waitFor.js';
import {
  bearerToken,
  challenge,
  craftPayload,
  officialPayload,
  paidPost,
  paymentHeader,
  post,
  readExecution,
  readJob,
  walletBalancesRequest,
} from '../x402.js';

/** Blocks under the head before a transfer counts as final (PAYMENT_FINALITY as a depth). */
const DEPTH = 4;
const t = useTestGateway();

/**
 * Issue 33's reorg rows on real anvil (`anvil_reorg`: the last `depth` blocks replaced by empty
 * ones) and a private Redis, each ending with nothing lost: the settlement, refund or payout is on
 * chain once and the records say so.
 */
describe('confirmations and reorgs of outgoing transfers', () => {
  const test = () => createTestClient({ mode: 'anvil', transport: http(t.config.payment.rpcUrl) });
  const reorg = (depth: number) => test().request({ method: 'anvil_reorg' as never, params: [depth, []] as never });
  const mine = (blocks: number) => test().mine({ blocks });
  const receipt = (hash: string) => t.gateway.services.paymentClient.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined);
  const tracker = () =>
    new TransferFinality({
      redis: t.gateway.services.redis,
      keys: t.gateway.services.keys,
      publicClient: t.gateway.services.paymentClient,
      sender: treasurySender(t),
      rule: { depth: DEPTH },
      reversals: t.gateway.services.creditReversal,
      // as the worker wires it: a provider's entry follows its payment moved to another transaction
      onSettlementMoved: ({ operationId, txHash }) => t.gateway.services.providerLedger.repointPayment(operationId, txHash),
      log: pino({ level: 'silent' }),
    });
  const check = (): Promise<FinalityRound> => tracker().check();
  beforeAll(async () => {
    // the treasury sends the refunds and payouts below: 1 USDC from a buyer, whatever ran first
    const funder = t.stack.payment.buyers[7];
    const wallet = createWalletClient({ account: funder, chain: t.config.payment.chain, transport: http(t.config.payment.rpcUrl) });
    const hash = await wallet.writeContract({
      address: t.config.payment.asset,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [t.stack.payment.treasury.address, 1_000_000n],
    });
    // waited for: on a loaded machine the receipt may not be readable the instant the send returns
    expect((await t.gateway.services.paymentClient.waitForTransactionReceipt({ hash })).status).toBe('success');
  });
  const execute = async (buyer: LocalAccount) => {
    const r = await paidPost(buyer, t.executeUrl, walletBalancesRequest(buyer.address));
    expect(r.status).toBe(200);
    return r.body as { execution_id: string; payment: { tx_hash: Hex; amount: string } };
  };

  it('three settlements reorged out are broadcast again (or found resubmitted by someone else) and reach final', async () => {
    const buyer = t.stack.payment.buyers[0];
    const treasury = t.stack.payment.treasury.address;
    const [buyerBefore, treasuryBefore] = [await t.usdc(buyer.address), await t.usdc(treasury)];
    const calls = [await execute(buyer), await execute(buyer), await execute(buyer)];
    const paid = calls.reduce((s, c) => s + BigInt(c.payment.amount), 0n);
    // a provider's credit naming the first payment's transaction (as a provider capability's call records it)
    await t.gateway.services.providerLedger.credit({
      execution_id: calls[0].execution_id,
      provider_id: `prv_${ulid()}`,
      provider_address: privateKeyToAccount(generatePrivateKey()).address,
      capability_id: 'text.upper',
      payer: buyer.address,
      price: BigInt(calls[0].payment.amount),
      payment_tx_hash: calls[0].payment.tx_hash,
    });
    expect(buyerBefore - (await t.usdc(buyer.address))).toBe(paid);
    for (const c of calls) expect((await readExecution(t.url, c.execution_id, buyer)).payment).toMatchObject({ status: 'settled', tx_hash: c.payment.tx_hash });
    // a round before the reorg keeps each settlement's signed transaction (to broadcast it again)
    expect((await check()).final).toEqual([]);

    await reorg(3);
    for (const c of calls) expect(await receipt(c.payment.tx_hash)).toBeUndefined();
    expect(await t.usdc(buyer.address)).toBe(buyerBefore); // the chain no longer has these payments
    // the gateway does not know yet: without the tracker a resend would get the result for free

    // anyone can submit a signed authorization: a stranger resubmits the first one before the gateway does
    const stranger = privateKeyToAccount(generatePrivateKey());
    await test().setBalance({ address: stranger.address, value: 10n ** 18n });
    const first = await t.gateway.services.redis.hgetall(`${t.gateway.services.keys.prefix}pay:fin:settlement:${calls[0].execution_id}`);
    const strangerTx = await createWalletClient({ account: stranger, chain: t.config.payment.chain, transport: http(t.config.payment.rpcUrl) }).sendTransaction(
      {
        to: t.config.payment.asset,
        data: transferWithAuthorizationData(JSON.parse(first.authorization), first.signature as Hex),
      },
    );
    // anvil mines just after it answers: wait for the receipt
    expect((await t.gateway.services.paymentClient.waitForTransactionReceipt({ hash: strangerTx })).status).toBe('success');

    const round = await check();
    expect(round.moved).toEqual([`settlement:${calls[0].execution_id}`]);
    expect(round.resent.sort()).toEqual([`settlement:${calls[1].execution_id}`, `settlement:${calls[2].execution_id}`].sort());
    // the same signed transactions are mined again (same hashes); the first is the stranger's now
    for (const c of calls.slice(1))
      expect((await t.gateway.services.paymentClient.waitForTransactionReceipt({ hash: c.payment.tx_hash as Hex })).status).toBe('success');
    expect((await readExecution(t.url, calls[0].execution_id, buyer)).payment).toMatchObject({ status: 'settled', tx_hash: strangerTx });
    // the provider's entry follows it (a dispute refund's tag names the payment on chain)
    expect((await t.gateway.services.providerLedger.entry(calls[0].execution_id))?.payment_tx_hash).toBe(strangerTx);
    // (taken back: no payout of it in the tests below)
    expect(await t.gateway.services.providerLedger.reverseCredit(calls[0].execution_id)).toBe('reversed');
    expect(buyerBefore - (await t.usdc(buyer.address))).toBe(paid);
    expect((await t.usdc(treasury)) - treasuryBefore).toBe(paid);

    // the facilitator's nonces follow: a new paid call settles at once
    const after = await execute(buyer);
    await mine(DEPTH);
    const final = await check();
    expect(final.final).toEqual(expect.arrayContaining([...calls, after].map((c) => `settlement:${c.execution_id}`)));
    for (const c of [...calls, after]) expect((await readExecution(t.url, c.execution_id, buyer)).payment.status).toBe('final');
    expect(buyerBefore - (await t.usdc(buyer.address))).toBe(paid + BigInt(after.payment.amount));
  });

  it("a job's record shows its budget payment's settlement, settled then final, as an execution's does", async () => {
    const buyer = t.stack.payment.buyers[6];
    const created = await paidPost(buyer, `${t.url}/api/v1/jobs`, {
      objective: 'balances',
      budget_usdc: 0.01,
      capabilities: ['intelligence.wallet_balances'],
      steps: [{ capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const jobId = created.body.job_id as string;
    const paid = (await readJob(t.url, jobId, buyer)).payment;
    expect(paid).toMatchObject({ status: 'settled', amount: '10000' });
    expect((await receipt(paid.tx_hash))?.status).toBe('success');
    await mine(DEPTH);
    expect((await check()).final).toContain(`settlement:${jobId}`);
    expect((await readJob(t.url, jobId, buyer)).payment).toEqual({ ...paid, status: 'final' });
  });

  it("a settlement whose outcome was not seen, found on chain by the payer's resend, is tracked until final and broadcast again after a reorg", async () => {
    const buyer = t.stack.payment.buyers[7];
    const before = await t.usdc(buyer.address);
    // the settlement is mined, but its answer never reaches the gateway: the reservation is `settle_unknown`
    const paywall = paywallWithSettle(t, async (inner, p, r) => {
      await inner.settle(p, r);
      throw new Error('the settle answer was lost');
    });
    const body = walletBalancesRequest(buyer.address);
    const header = paymentHeader(await officialPayload(buyer, await challenge(t.executeUrl, body)));
    const operationId = `exe_${ulid()}`;
    const req = {
      resourceUrl: t.executeUrl,
      description: 'Execute intelligence.wallet_balances',
      price: 1000n,
      route: 'execute',
      requestHash: requestHash('POST', 'execute', body),
      operationId,
      getHeader: (name: string) => (name === 'payment-signature' ? header : undefined),
      payerAccount: async () => buyer.address,
    };
    const run = async () => ({ ok: true as const, body: { done: true } });
    await expect(paywall.handle(req, run)).rejects.toBeInstanceOf(PaymentInProgressError);
    expect(await trackedTransfer(t.gateway.services.redis, t.gateway.services.keys, 'settlement', operationId)).toBeUndefined();
    expect(before - (await t.usdc(buyer.address))).toBe(1000n);

    // the payer resends: the payment is found on chain (replay → reconcile), runs once, and is now tracked
    const resent = await paywall.handle({ ...req, operationId: `exe_${ulid()}` }, run);
    expect(resent).toMatchObject({ status: 200, body: { done: true } });
    const tracked = await trackedTransfer(t.gateway.services.redis, t.gateway.services.keys, 'settlement', operationId);
    expect(tracked).toMatchObject({ status: 'settled', amount: '1000', resent: 0 });
    expect((await receipt(tracked!.tx_hash))?.status).toBe('success');
    await check(); // keeps its signed transaction

    // its block is reorged out: the same payment is put back on chain, once
    await reorg(1);
    expect(await t.usdc(buyer.address)).toBe(before);
    expect((await check()).resent).toContain(`settlement:${operationId}`);
    // anvil mines a sent transaction just after answering eth_sendRawTransaction: wait for its block
    expect(
      before -
        (await waitFor(
          () => t.usdc(buyer.address),
          (b) => before - b === 1000n,
        )),
    ).toBe(1000n);
    await mine(DEPTH);
    expect((await check()).final).toContain(`settlement:${operationId}`);
    expect(before - (await t.usdc(buyer.address))).toBe(1000n);
  });

  it("a refund's block reorged out is broadcast again, and re-signed with the new hash shown when its nonce was taken", async () => {
    const { services } = t.gateway;
    const [a, b] = [t.stack.payment.buyers[1].address, t.stack.payment.buyers[2].address];
    const refunds = (names: string[]) => names.filter((n) => n.startsWith('refund:'));
    const refund = async (payer: Hex) => {
      const operationId = `exe_${ulid()}`;
      const before = await t.usdc(payer);
      await services.refunds.enqueue({ operationId, payer, amount: '700', paymentTxHash: `0x${'11'.repeat(32)}` });
      const sent = await waitFor(
        () => readRefund(services.redis, services.keys, operationId),
        (r) => r?.status === 'sent',
      );
      expect((await t.usdc(payer)) - before).toBe(700n);
      return { operationId, tx: sent!.tx_hash!, before };
    };
    // 1. reorged out, nonce still free: the same signed transaction again
    const one = await refund(a);
    await reorg(1);
    expect(await t.usdc(a)).toBe(one.before);
    expect(refunds((await check()).resent)).toEqual([`refund:${one.operationId}`]);
    expect(
      await waitFor(
        () => t.usdc(a),
        (x) => x === one.before + 700n,
      ),
    ).toBe(one.before + 700n);
    expect(await readRefund(services.redis, services.keys, one.operationId)).toMatchObject({ status: 'sent', tx_hash: one.tx, finality: 'unconfirmed' });

    // 2. reorged out, and another treasury transfer takes its nonce before the tracker looks: re-signed
    const two = await refund(a);
    await reorg(1);
    const other = await refund(b); // signed with the nonce the reorg freed
    expect(await t.usdc(a)).toBe(two.before);
    expect(refunds((await check()).resent)).toEqual([`refund:${two.operationId}`]);
    const shown = await readRefund(services.redis, services.keys, two.operationId);
    expect(shown?.tx_hash).not.toBe(two.tx);
    expect((await receipt(shown!.tx_hash!))?.status).toBe('success');
    expect(await receipt(two.tx)).toBeUndefined();
    expect(await t.usdc(a)).toBe(two.before + 700n); // once, not twice
    expect(await t.usdc(b)).toBe(other.before + 700n);

    await mine(DEPTH);
    await check();
    for (const r of [one, two, other]) expect(await readRefund(services.redis, services.keys, r.operationId)).toMatchObject({ finality: 'final' });
    expect(await check()).toMatchObject({ resent: [], final: [] }); // nothing is sent twice later
    expect(await t.usdc(a)).toBe(one.before + 1400n);
  });

  it("a provider payout's block reorged out is sent again; the provider holds it once", async () => {
    const { services } = t.gateway;
    const windowMs = t.config.providers.disputeWindowSeconds * 1000;
    let clock = Date.now();
    const ledger = providerLedgerAt(t, () => clock);
    const provider = privateKeyToAccount(generatePrivateKey());
    const providerId = `prv_${ulid()}`;
    await ledger.credit({
      execution_id: `exe_${ulid()}`,
      provider_id: providerId,
      provider_address: provider.address,
      capability_id: 'text.upper',
      payer: t.stack.payment.buyers[3].address,
      price: 2_000n,
      payment_tx_hash: `0x${'22'.repeat(32)}`,
    });
    clock += windowMs + 60_000; // past the dispute window: available
    const report = await runPayoutPass({
      ledger,
      redis: services.redis,
      keys: services.keys,
      sender: treasurySender(t),
      minimum: 1n,
      disputeAutoResolveSeconds: t.config.providers.disputeAutoResolveSeconds,
      log: pino({ level: 'silent' }),
    });
    const payout = report.sent.find((p) => p.provider_id === providerId)!;
    expect(await t.usdc(provider.address)).toBe(payout.amount);
    await reorg(1);
    expect(await t.usdc(provider.address)).toBe(0n);
    expect((await ledger.payouts(providerId))[0]).toMatchObject({ status: 'sent', finality: 'unconfirmed' });

    expect((await check()).resent).toContain(`payout:${payout.payout_id}`);
    expect(
      await waitFor(
        () => t.usdc(provider.address),
        (b) => b === payout.amount,
      ),
    ).toBe(payout.amount);
    await mine(DEPTH);
    expect((await check()).final).toContain(`payout:${payout.payout_id}`);
    const [view] = await ledger.payouts(providerId);
    expect(view).toMatchObject({ status: 'sent', finality: 'final', amount: payout.amount.toString() });
    expect((await receipt(view.tx_hash!))?.status).toBe('success');
    expect(await t.usdc(provider.address)).toBe(payout.amount);
    expect(await trackedTransfer(services.redis, services.keys, 'payout', payout.payout_id)).toMatchObject({ status: 'final', resent: 1 });
  });

  it('the running tracker (one round per new block) re-sends a reorged refund by itself', async () => {
    const { services } = t.gateway;
    const payer = t.stack.payment.buyers[5].address;
    const running = startTransferFinality({
      redis: services.redis,
      keys: services.keys,
      publicClient: services.paymentClient,
      sender: treasurySender(t),
      rule: { depth: DEPTH },
      log: pino({ level: process.env.DEBUG_FIN ? 'debug' : 'silent' }),
      pollingIntervalMs: 100,
    });
    try {
      const operationId = `exe_${ulid()}`;
      const before = await t.usdc(payer);
      await services.refunds.enqueue({ operationId, payer, amount: '300', paymentTxHash: `0x${'33'.repeat(32)}` });
      await waitFor(
        () => readRefund(services.redis, services.keys, operationId),
        (r) => r?.status === 'sent',
      );
      await reorg(1); // another head block at the same height: the tracker looks
      await waitFor(
        () => trackedTransfer(services.redis, services.keys, 'refund', operationId),
        (r) => r?.resent === 1,
      );
      expect(await t.usdc(payer)).toBe(before + 300n);
      await mine(DEPTH + 1);
      await waitFor(
        () => readRefund(services.redis, services.keys, operationId),
        (r) => r?.finality === 'final',
      );
      expect(await t.usdc(payer)).toBe(before + 300n);
    } finally {
      await running.stop();
    }
  });

  it('a settlement reorged out after its authorization expired is unpaid: no result on a resend or on the record', async () => {
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[4];
    const body = walletBalancesRequest(buyer.address);
    const pr = await challenge(t.executeUrl, body);
    // a block first, so the chain's clock is not behind the wall clock the paywall checks the window
    // against (on a loaded machine, minutes can pass without a block)
    await mine(1);
    const head = await services.paymentClient.getBlock();
    // a short validity window (the chain's clock), so it can expire while the block is gone
    const payload = await craftPayload(buyer, pr.accepts[0], 8453, { validBefore: head.timestamp + 20n });
    const before = await t.usdc(buyer.address);
    const paid = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
    expect(paid.status).toBe(200);
    const id = paid.body.execution_id as string;
    await check();
    await reorg(1);
    await test().increaseTime({ seconds: 30 });
    await mine(1);
    expect(await t.usdc(buyer.address)).toBe(before);
    // as if the call had credited a provider's share: the share goes back with the payment
    const ledger = providerLedgerAt(t, () => Date.now());
    await ledger.credit({
      execution_id: id,
      provider_id: `prv_${ulid()}`,
      provider_address: privateKeyToAccount(generatePrivateKey()).address,
      capability_id: 'intelligence.wallet_balances',
      payer: buyer.address,
      price: 1_000n,
      payment_tx_hash: paid.body.payment.tx_hash,
    });

    expect((await check()).unpaid).toEqual([`settlement:${id}`]);
    expect((await ledger.entry(id))?.status).toBe('refunded');
    const record = await readExecution(t.url, id, buyer);
    expect(record).toMatchObject({ execution_id: id, result: null, payment: { status: 'unpaid' } });
    expect(record.proof).toBeUndefined();
    // the payer's resend (bearer token: proven payer) no longer returns the result for free
    const resend = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload), authorization: `Bearer ${await bearerToken(t.url, buyer)}` });
    expect(resend.status).toBe(409);
    expect(resend.body).toMatchObject({ reason: 'payment_reversed', execution_id: id, payment: { status: 'unpaid' } });
    expect(resend.body.result).toBeUndefined();
    expect(await t.usdc(buyer.address)).toBe(before); // and nothing was charged
    expect(await check()).toMatchObject({ unpaid: [], resent: [] });
  });
});
