// `POST /api/v1/execute` paid with x402 `batch-settlement` (PAYMENT_SCHEMES=exact,batch-settlement) on a test
// gateway (anvil with our x402BatchSettlement, Redis), by the official @x402/fetch client with the official
// @x402/evm batch-settlement client scheme, unchanged: a burst over one channel, a duplicate in flight, a
// reused and a reordered voucher, and the channel's charged total against the prices.
import { createChannelStorage } from '@acg/channels';
import { RedisKeys } from '@acg/redis';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, signVoucher } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Redis } from 'ioredis';
import { createPublicClient, http } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { post, walletBalancesRequest } from './x402.js';

const PRICE = 1000n; // intelligence.wallet_balances: 0.001 USDC

const t = useTestGateway({ config: { chains: { ethereum: 'http://127.0.0.1:1' }, payment: { schemes: ['exact', 'batch-settlement'] } } });
let redis: Redis | undefined;
afterAll(() => redis?.disconnect());

/** The gateway's channels, read from its Redis (@acg/channels storage under its key prefix). */
function channels() {
  redis ??= new Redis(t.config.redisUrl);
  return createChannelStorage({ redis, keys: new RedisKeys(t.config.keyPrefix) });
}

function buyerClient(index: number) {
  const buyer = t.stack.payment.buyers[index];
  const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
  const client = new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never)));
  return { buyer, client, publicClient, fetch: wrapFetchWithPayment(fetch, client) };
}

async function paidCall(pay: typeof fetch, body: unknown) {
  const res = await pay(t.executeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('batch-settlement on POST /api/v1/execute', () => {
  it('the 402 offers exact first and batch-settlement beside it', async () => {
    const r = await post(t.executeUrl, walletBalancesRequest(t.stack.payment.buyers[5].address));
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(r.body).toMatchObject({ scheme: 'exact', maxAmountRequired: PRICE.toString() });
    expect(pr.accepts[1]).toMatchObject({ amount: '1000', payTo: t.stack.payment.treasury.address, extra: { withdrawDelay: 900, minDeposit: '10000' } });
  });

  it('a burst of calls over one channel: one deposit on chain, then vouchers; the channel is charged exactly the sum of the prices', async () => {
    const { buyer, fetch: pay } = buyerClient(5);
    const before = await t.usdc(buyer.address);
    const N = 12;
    const settlements = [];
    for (let i = 0; i < N; i++) {
      const r = await paidCall(pay, walletBalancesRequest(buyer.address));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status).toBe('SUCCEEDED');
      settlements.push(decodePaymentResponseHeader(r.headers.get('payment-response')!));
    }
    // the first call and the 11th deposit (10 calls' worth each), the others are vouchers (no transaction)
    expect(settlements.map((s) => (s.transaction ? 'deposit' : 'voucher'))).toEqual(['deposit', ...Array(9).fill('voucher'), 'deposit', 'voucher']);
    expect(settlements.every((s) => s.success && s.extra?.chargedAmount === '1000')).toBe(true);
    const mine = (await channels().list()).filter((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase());
    expect(mine).toHaveLength(1);
    expect(mine[0].chargedCumulativeAmount).toBe((PRICE * BigInt(N)).toString());
    // the buyer paid the two deposits into escrow, nothing else
    expect(before - (await t.usdc(buyer.address))).toBe(BigInt(mine[0].balance));
  });

  it('a duplicate in flight runs once; a reused and a reordered voucher are refused with the x402 reason', async () => {
    const { buyer, client, fetch: pay, publicClient } = buyerClient(6);
    // open the channel
    expect((await paidCall(pay, walletBalancesRequest(buyer.address))).status).toBe(200);
    const body = walletBalancesRequest(buyer.address);
    const r402 = await post(t.executeUrl, body);
    const pr: PaymentRequired = decodePaymentRequiredHeader(r402.headers.get('payment-required')!);
    const payload: PaymentPayload = await client.createPaymentPayload(pr);
    expect(payload.payload).toMatchObject({ type: 'voucher', voucher: { maxClaimableAmount: '2000' } });
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) };
    // the same voucher twice at once: one execution, the duplicate waits and gets its receipt (no proof of payer) or the answer
    const [a, b] = await Promise.all([post(t.executeUrl, body, header), post(t.executeUrl, body, header)]);
    const statuses = [a.status, b.status].sort();
    const executions = new Set([a, b].filter((r) => r.status === 200).map((r) => r.body.execution_id));
    expect(executions.size).toBe(1);
    expect(statuses[0]).toBe(200);
    const charged = async () =>
      (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!.chargedCumulativeAmount;
    expect(await charged()).toBe('2000');

    // the same voucher for another call: refused with the official reason and the channel state to resync
    const other = walletBalancesRequest(buyer.address, 'base');
    const reused = await post(t.executeUrl, { ...other, input: { ...other.input, address: t.stack.payment.buyers[0].address } }, header);
    expect(reused.status).toBe(402);
    expect(reused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // a voucher skipping ahead: refused the same way
    const cfg = (payload.payload as { channelConfig: object; voucher: { channelId: `0x${string}` } }).channelConfig;
    const channelId = (payload.payload as { voucher: { channelId: `0x${string}` } }).voucher.channelId;
    const ahead: PaymentPayload = {
      ...payload,
      payload: {
        type: 'voucher',
        channelConfig: cfg,
        voucher: await signVoucher(toClientEvmSigner(buyer, publicClient as never), channelId, '5000', t.stack.payment.network),
      },
    };
    const reordered = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(ahead) });
    expect(reordered.status).toBe(402);
    expect(reordered.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(await charged()).toBe('2000');
  });

  it('a client that lost its channel state (restarted without storage) resynchronises from the corrective 402 and pays on', async () => {
    const first = buyerClient(7);
    for (let i = 0; i < 2; i++) expect((await paidCall(first.fetch, walletBalancesRequest(first.buyer.address))).status).toBe(200);
    // a fresh official client: it knows nothing of the channel, so it signs as if it were new
    const restarted = buyerClient(7);
    const body = walletBalancesRequest(restarted.buyer.address);
    const pr: PaymentRequired = decodePaymentRequiredHeader((await post(t.executeUrl, body)).headers.get('payment-required')!);
    const stale = await restarted.client.createPaymentPayload(pr);
    const refused = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(stale) });
    expect(refused.status).toBe(402);
    expect(refused.body.reason).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    // the corrective 402: its PaymentRequired names the x402 code in `error` (what the official client
    // compares) and carries the channel's state in the batch-settlement entry
    const corrective: PaymentRequired = decodePaymentRequiredHeader(refused.headers.get('payment-required')!);
    expect(corrective.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(corrective.accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
      channelState: { chargedCumulativeAmount: '2000' },
      voucherState: { signedMaxClaimable: '2000' },
    });
    // so the official fetch client recovers (reads the channel on chain, checks its own voucher) and pays on
    const r = await paidCall(restarted.fetch, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const charged = (await channels().list()).find((c) => c.channelConfig.payer.toLowerCase() === restarted.buyer.address.toLowerCase())!;
    expect(charged.chargedCumulativeAmount).toBe('3000');
  });
});
