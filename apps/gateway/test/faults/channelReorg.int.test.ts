// A batch-settlement channel's deposit reorged out (anvil evm_snapshot / evm_revert) on a test gateway (anvil with
// our x402BatchSettlement, a private Redis), paid by the official @x402/fetch client with the official @x402/evm
// batch-settlement client scheme, unchanged: the deposit is tracked until final like an `exact` settlement; the
// finality round broadcasts the facilitator's own signed deposit again while its ERC-3009 authorization is
// valid; once it expired unused, the channel is marked unpaid, its vouchers are refused with x402's code and its
// accepted charges are reported; the worker's claims of the other channels go on.
import { ChannelSettlement, channelChainViews, createChannelStorage, unpaidChannels } from '@acg/channels';
import { createInProcessFacilitator } from '@acg/payments';
import { RedisKeys } from '@acg/redis';
import { TransferFinality, trackedTransfer, treasuryKeys, type FinalityRound } from '@acg/treasury';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as BatchServerScheme } from '@x402/evm/batch-settlement/server';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { pino } from 'pino';
import { createPublicClient, createTestClient, http, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { channelUnpaidHandler } from '../../../worker/src/channels.js';
import { useTestGateway } from '../useTestGateway.js';
import { walletBalancesRequest } from '../x402.js';

const PRICE = 1000n; // intelligence.wallet_balances: 0.001 USDC
const t = useTestGateway({ config: { chains: { ethereum: 'http://127.0.0.1:1' }, payment: { schemes: ['exact', 'batch-settlement'] } } });
const log = pino({ level: 'silent' });

describe('a batch-settlement deposit reorged out', () => {
  const test = () => createTestClient({ mode: 'anvil', transport: http(t.config.payment.rpcUrl) });
  const rpc = (method: string, params: unknown[] = []) => test().request({ method: method as never, params: params as never });
  const keys = () => new RedisKeys(t.config.keyPrefix);
  const storage = () => createChannelStorage({ redis: t.gateway.services.redis, keys: keys() });
  const views = () => channelChainViews(t.gateway.services.paymentClient);
  // the worker's finality round, wired as the worker wires it (a depth far above these tests: nothing is final)
  const check = (): Promise<FinalityRound> =>
    new TransferFinality({
      redis: t.gateway.services.redis,
      keys: t.gateway.services.keys,
      publicClient: t.gateway.services.paymentClient,
      rule: { depth: 1_000 },
      reversals: t.gateway.services.creditReversal,
      onChannelUnpaid: channelUnpaidHandler(t.gateway.services, log),
      log,
    }).check();
  /** One full pass of the worker's channel claims and settlement. */
  const workerPass = () => {
    const network = `eip155:${t.config.payment.chain.id}` as const;
    return new ChannelSettlement({
      redis: t.gateway.services.redis,
      keys: keys(),
      scheme: new BatchServerScheme(t.stack.payment.treasury.address, { storage: storage() }),
      facilitator: createInProcessFacilitator({
        rpcUrl: t.config.payment.rpcUrl,
        chain: t.config.payment.chain,
        signer: t.stack.payment.facilitator,
        networks: [network],
      }),
      network,
      token: t.config.payment.asset,
      chain: views(),
      refundIdleSeconds: 0,
      log,
    }).pass({ full: true });
  };
  const buyer = (index: number) => {
    const account = t.stack.payment.buyers[index];
    const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(account, publicClient as never))));
    const call = async () => {
      const res = await pay(t.executeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(walletBalancesRequest(account.address)),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };
    return { account, call };
  };
  /** Opens a channel (a deposit) and pays `n` calls in all; the deposit call's execution id, the deposit's hash and the channel. */
  const open = async (b: ReturnType<typeof buyer>, n: number) => {
    const first = await b.call();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const deposit = decodePaymentResponseHeader(first.headers.get('payment-response')!).transaction as Hex;
    expect(deposit).toMatch(/^0x[0-9a-f]{64}$/);
    for (let i = 1; i < n; i++) expect((await b.call()).status).toBe(200);
    const channel = (await storage().list()).find((c) => c.channelConfig.payer.toLowerCase() === b.account.address.toLowerCase())!;
    expect(channel.chargedCumulativeAmount).toBe((PRICE * BigInt(n)).toString());
    return { executionId: first.body.execution_id as string, deposit, channelId: channel.channelId as Hex, balance: BigInt(channel.balance) };
  };

  it("is tracked until final; reorged out, the facilitator's signed deposit is broadcast again and the channel goes on", async () => {
    const b = buyer(3);
    const snapshot = (await rpc('evm_snapshot')) as Hex;
    const c = await open(b, 3);
    expect(await trackedTransfer(t.gateway.services.redis, t.gateway.services.keys, 'settlement', c.executionId)).toMatchObject({
      status: 'settled',
      tx_hash: c.deposit,
      amount: PRICE.toString(),
    });
    expect((await views().channel(c.channelId)).balance).toBe(c.balance);
    // a round before the reorg keeps the deposit's signed transaction
    expect((await check()).final).toEqual([]);
    expect(await rpc('evm_revert', [snapshot])).toBe(true);
    expect((await views().channel(c.channelId)).balance).toBe(0n);

    const round = await check();
    expect(round.resent).toEqual([`settlement:${c.executionId}`]);
    // the same signed transaction is mined again (same hash): the escrow is back
    expect((await t.gateway.services.paymentClient.waitForTransactionReceipt({ hash: c.deposit })).status).toBe('success');
    expect((await views().channel(c.channelId)).balance).toBe(c.balance);
    // the channel goes on: two more vouchers, and the worker claims all five
    for (let i = 0; i < 2; i++) expect((await b.call()).status).toBe(200);
    const pass = await workerPass();
    expect(pass.failedClaims).toEqual([]);
    expect((await views().channel(c.channelId)).totalClaimed).toBe(5n * PRICE);
    expect((await unpaidChannels(t.gateway.services.redis, keys())).size).toBe(0);
  });

  it('reorged out before any finality round saw it: broadcast again from the signed bytes kept when it was tracked', async () => {
    const b = buyer(5);
    const snapshot = (await rpc('evm_snapshot')) as Hex;
    const c = await open(b, 2);
    // the paywall kept the facilitator's signed deposit and its signer as it tracked it
    const tracked = await t.gateway.services.redis.hgetall(treasuryKeys.finality(t.gateway.services.keys, 'settlement', c.executionId));
    expect(tracked).toMatchObject({ status: 'settled', tx_hash: c.deposit });
    expect(tracked.raw_tx).toMatch(/^0x[0-9a-f]+$/);
    expect(tracked.raw_from?.toLowerCase()).toBe(t.stack.payment.facilitator.address.toLowerCase());
    // no round before the reorg (a reorg faster than the worker's first look)
    expect(await rpc('evm_revert', [snapshot])).toBe(true);
    expect((await views().channel(c.channelId)).balance).toBe(0n);
    const round = await check();
    expect(round.resent).toEqual([`settlement:${c.executionId}`]);
    expect((await t.gateway.services.paymentClient.waitForTransactionReceipt({ hash: c.deposit })).status).toBe('success');
    expect((await views().channel(c.channelId)).balance).toBe(c.balance);
    expect((await b.call()).status).toBe(200);
    expect((await workerPass()).failedClaims).toEqual([]);
    expect((await views().channel(c.channelId)).totalClaimed).toBe(3n * PRICE);
  });

  it('its authorization expired before it could be put back: the channel is unpaid, its vouchers are refused, its charges reported', async () => {
    const b = buyer(4);
    const snapshot = (await rpc('evm_snapshot')) as Hex;
    const c = await open(b, 3);
    expect((await check()).unpaid).toEqual([]);
    expect(await rpc('evm_revert', [snapshot])).toBe(true);
    // past the authorization's validBefore (the official client signs it for maxTimeoutSeconds, 60 s)
    await test().increaseTime({ seconds: 3_600 });
    await test().mine({ blocks: 1 });

    const round = await check();
    expect(round.unpaid).toEqual([`settlement:${c.executionId}`]);
    expect(await trackedTransfer(t.gateway.services.redis, t.gateway.services.keys, 'settlement', c.executionId)).toMatchObject({ status: 'unpaid' });
    expect((await views().channel(c.channelId)).balance).toBe(0n);
    // reported: the three calls accepted on the channel, none claimed, none covered by an escrow
    const report = (await unpaidChannels(t.gateway.services.redis, keys())).get(c.channelId.toLowerCase());
    expect(report).toMatchObject({
      channelId: c.channelId.toLowerCase(),
      operationId: c.executionId,
      deposit: c.balance.toString(),
      charged: (3n * PRICE).toString(),
      claimedOnChain: '0',
      balanceOnChain: '0',
      unclaimed: (3n * PRICE).toString(),
      uncovered: (3n * PRICE).toString(),
    });
    // the next voucher is refused with x402's code (over the escrow the chain holds), nothing is charged
    const refused = await b.call();
    expect(refused.status).toBe(402);
    const pr = decodePaymentRequiredHeader(refused.headers.get('payment-required')!);
    expect(refused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_exceeds_balance');
    expect(pr.error).toContain('invalid_batch_settlement_evm_cumulative_exceeds_balance');
    expect((await storage().get(c.channelId))?.chargedCumulativeAmount).toBe((3n * PRICE).toString());
    // a further round changes nothing (reported once); the worker does not try to claim it (it could only revert)
    expect((await check()).unpaid).toEqual([]);
    const pass = await workerPass();
    expect([pass.claims, pass.failedClaims]).toEqual([[], []]);
  });
});
