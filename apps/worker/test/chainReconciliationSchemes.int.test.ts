import { createChannelStorage, channelChainViews } from '@acg/channels';
import { PERMIT2_ADDRESS, usdcAbi } from '@acg/devnet';
import { paymentKeys } from '@acg/payments/commands';
import { type ChainReconciliationOptions, reconcileBlocks, reconciledOperationId } from '@acg/reconciliation';
import { readRefund, treasuryKeys } from '@acg/treasury';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { toClientEvmSigner, BATCH_SETTLEMENT_ADDRESS } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { createPublicClient, createWalletClient, http, maxUint256, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerProvider, startTestProvider, upperCaseAnswer } from '../../gateway/test/providerServer.js';
import { useTestGateway } from '../../gateway/test/useTestGateway.js';
import { waitFor } from '../../gateway/test/waitFor.js';
import { paymentHeader, post, walletBalancesRequest } from '../../gateway/test/x402.js';
import { chainReconciliationOptions, startWorker, treasurySenderOf, type RunningWorker } from '../src/index.js';
import { channelSettlementOf } from '../src/channels.js';

/**
 * The chain reconciliation reads x402 `upto` settlements and `batch-settlement` claims and settlements
 * from the chain's logs (docs/decisions.md "Reconciliation from the chain"), on a real anvil payment chain
 * (our x402UptoPermit2Proxy, Permit2 and x402BatchSettlement) and a private Redis, paid by the official
 * `@x402/evm` clients, unchanged: a settlement whose record is intact matches; one whose record was
 * removed is recovered (refunded once); a record whose amount was changed, and a forged record naming
 * a settlement the chain never saw, are reported undecided and move no money; a channel's claim and
 * settlement match the contract's views, a recorded claim raised in Redis is set back to the chain's,
 * and a channel record removed while its escrow holds unclaimed funds is reported.
 */

const ID = 'intelligence.upper_recon_upto';
const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const outputSchema = { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] };
const base = { description: 'Upper-cases text.', input_schema: inputSchema, output_schema: outputSchema, example_request: { text: 'probe' }, timeout_ms: 2000 };

const t = useTestGateway({
  config: { chains: { ethereum: 'http://127.0.0.1:1' }, walletMonitor: { webhookPolicy: 'development' }, payment: { schemes: ['exact', 'batch-settlement'] } },
});
const servers: { close(): Promise<void> }[] = [];
let worker: RunningWorker;
let options: ChainReconciliationOptions;

const rpc = async (method: string, params: unknown[] = []) => {
  const res = await fetch(t.stack.payment.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
};
const head = async () => BigInt((await rpc('eth_blockNumber')) as string);

/** A seller offering the test's capability at `price` (the first creates it); probed so that routing takes it. */
async function seller(name: string, price: string, first: boolean): Promise<void> {
  const account = privateKeyToAccount(generatePrivateKey());
  const server = await startTestProvider((call) => upperCaseAnswer(call));
  servers.push(server);
  const offer = first ? { ...base, name: 'upper_recon_upto', price_usdc: price } : { ...base, capability_id: ID, price_usdc: price };
  const r = await registerProvider(t.url, account, { name, endpoint: server.url, capabilities: [offer] });
  expect(r.status).toBe(201);
  server.setSecret(r.body.signing_secret);
  server.signAs(account, [ID]);
  await t.gateway.services.providers.directory.reload();
  for (let i = 0; i < 3; i++) await t.gateway.prober.probeProvider(r.body.provider_id);
}

/** The buyer lets Permit2 move its USDC, as an `upto` payer must. */
async function approvePermit2(buyer: LocalAccount): Promise<void> {
  const pay = t.stack.payment;
  const wallet = createWalletClient({ account: buyer, chain: pay.chain, transport: http(pay.rpcUrl) });
  const hash = await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
  await createPublicClient({ chain: pay.chain, transport: http(pay.rpcUrl) }).waitForTransactionReceipt({ hash });
}

/** A routed call paid with `upto` by the official upto client (its ceiling the dearest offer, its charge the cheapest). */
async function uptoCall(buyer: LocalAccount, text: string) {
  const body = { capability_id: ID, input: { text }, routing: { prefer: 'cheapest' } };
  const first = await post(t.executeUrl, body);
  expect(first.status).toBe(402);
  const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
  expect(required.accepts.map((a) => a.scheme)).toContain('upto');
  const client = new x402Client().register('eip155:*', new UptoEvmScheme(toClientEvmSigner(buyer as never)));
  const payload = await client.createPaymentPayload(required);
  expect(payload.accepted.scheme).toBe('upto');
  const r = await post(t.executeUrl, body, { 'PAYMENT-SIGNATURE': paymentHeader(payload) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.payment).toMatchObject({ amount: '1000' });
  return r.body as { execution_id: string; payment: { tx_hash: `0x${string}`; amount: string } };
}

async function reservationOf(redis: Redis, prefix: string, operationId: string): Promise<string> {
  for (const k of await redis.keys(`${prefix}pay:auth:*`)) if ((await redis.hget(k, 'operation_id')) === operationId) return k;
  throw new Error(`no reservation for ${operationId}`);
}

/** A log sink whose `undecided` alerts the test reads. */
function alertLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, alerts: () => lines.filter((l) => l.alert === 'chain_reconciliation_undecided') };
}

beforeAll(async () => {
  await seller('Cheap Co', '0.001', true);
  await seller('Dear Co', '0.003', false);
  for (const buyer of t.stack.payment.buyers.slice(3, 8)) await approvePermit2(buyer);
  worker = await startWorker(t.config, {
    log: pino({ level: 'silent' }),
    walletMonitor: false,
    paymentRecovery: false,
    payouts: false,
    refunds: false,
    chainReconciliation: false,
    // the channel passes are run by hand below
    channels: false,
  });
  options = {
    ...chainReconciliationOptions(
      worker.services,
      pino({ level: 'silent' }),
      { confirmations: 2, lookbackBlocks: 1_000_000 },
      treasurySenderOf(worker.services),
    ),
    // records of settlements are checked at once here (default: once 10 minutes old)
    olderThanMs: 0,
  };
});
afterAll(async () => {
  await worker?.close();
  for (const s of servers) await s.close();
});

describe('reconciliation of upto and batch-settlement from the chain', () => {
  it('upto: a settlement with its record matches; a removed record is recovered once; a changed amount (reservation or execution record) and a forged record are reported and move no money but a refund of the removed one', async () => {
    const { redis, keys } = worker.services;
    const [intact, changed, removed] = t.stack.payment.buyers.slice(3, 6);
    const recordChanged = t.stack.payment.buyers[7];
    const treasury = t.stack.payment.treasury.address;
    const from = (await head()) + 1n;

    const a = await uptoCall(intact, 'intact');
    const b = await uptoCall(changed, 'changed');
    const c = await uptoCall(removed, 'removed');
    const g = await uptoCall(recordChanged, 'record');
    // G: its execution record's payment amount changed in Redis
    const gRecord = JSON.parse((await redis.get(keys.execution(g.execution_id)))!);
    expect(gRecord.payment).toMatchObject({ amount: '1000', tx_hash: g.payment.tx_hash });
    await redis.set(keys.execution(g.execution_id), JSON.stringify({ ...gRecord, payment: { ...gRecord.payment, amount: '500' } }));
    const aKey = await reservationOf(redis, keys.prefix, a.execution_id);
    expect(aKey).toContain(`:${PERMIT2_ADDRESS.toLowerCase()}:`);
    expect(await redis.hget(aKey, 'scheme')).toBe('upto');
    // B: its recorded charge changed in Redis
    const bKey = await reservationOf(redis, keys.prefix, b.execution_id);
    expect(await redis.hget(bKey, 'amount')).toBe('1000');
    await redis.hset(bKey, 'amount', '2000');
    // C: its reservation lost (the execution record with it)
    const cKey = await reservationOf(redis, keys.prefix, c.execution_id);
    await redis.del(cKey, keys.execution(c.execution_id));
    // D: a forged record of a settlement that never happened
    const forgedKey = paymentKeys.authorization(keys, `eip155:${t.stack.payment.chain.id}`, PERMIT2_ADDRESS, intact.address, `0x${'ab'.repeat(32)}`);
    await redis.hset(forgedKey, {
      state: 'completed',
      scheme: 'upto',
      operation_id: 'exe_forged',
      payer: intact.address,
      nonce: `0x${'ab'.repeat(32)}`,
      asset: t.stack.payment.usdc,
      amount: '1000',
      tx_hash: `0x${'cd'.repeat(32)}`,
      updated_at: String(Date.now() - 1000),
    });
    await rpc('anvil_mine', ['0x2']);
    const to = (await head()) - 2n;
    const treasuryBefore = await t.usdc(treasury);
    const [changedBefore, removedBefore] = [await t.usdc(changed.address), await t.usdc(removed.address)];

    const { log, alerts } = alertLog();
    expect(await reconcileBlocks({ ...options, log }, from, to)).toEqual({ matched: 1, repaired: 1, deferred: 0, undecided: 3 });
    // A's record now says it was seen on chain
    expect(await redis.hget(aKey, 'chain_check')).toBe(
      `${a.payment.tx_hash}:${(await worker.services.paymentClient.getTransactionReceipt({ hash: a.payment.tx_hash })).blockNumber}`,
    );
    // C: recreated for its rcn_ operation, completed with a 502 naming its refund of what was settled (1000, not the ceiling)
    const op = reconciledOperationId(cKey);
    expect(await redis.hget(cKey, 'state')).toBe('completed');
    expect(await redis.hget(cKey, 'tx_hash')).toBe(c.payment.tx_hash);
    expect(await readRefund(redis, keys, op)).toMatchObject({ amount: '1000', payer: removed.address });
    // B and D: reported as alerts, nothing moved
    const reasons = alerts().map((l) => String(l.reason));
    expect(reasons).toHaveLength(3);
    expect(reasons.some((r) => /execution record's payment 500 .* is not the amount settled 1000/.test(r))).toBe(true);
    expect(reasons.some((r) => /charge 2000 is not the amount settled 1000/.test(r))).toBe(true);
    expect(reasons.some((r) => /records a settlement, but its settlement 0x(cd){32} is not on chain/.test(r))).toBe(true);
    expect(await t.usdc(changed.address)).toBe(changedBefore);
    // C's payer gets back what was settled, once (the refund the gateway's refund worker sends)
    await waitFor(
      () => readRefund(redis, keys, op),
      (r) => r?.status === 'sent',
    );
    await waitFor(
      () => t.usdc(removed.address),
      (v) => v === removedBefore + 1000n,
    );
    expect(await t.usdc(treasury)).toBe(treasuryBefore - 1000n);

    // a second run: A and C match, B and G are reported again (their range), the forged record once only; C's refund is not queued twice
    const again = alertLog();
    expect(await reconcileBlocks({ ...options, log: again.log }, from, to)).toEqual({ matched: 2, repaired: 0, deferred: 0, undecided: 2 });
    expect(again.alerts()).toHaveLength(2);
    expect((await readRefund(redis, keys, op))?.amount).toBe('1000');
    expect(await t.usdc(removed.address)).toBe(removedBefore + 1000n);
    expect(await t.usdc(treasury)).toBe(treasuryBefore - 1000n);
    // B's and G's records put back: they match
    await redis.hset(bKey, 'amount', '1000');
    await redis.set(keys.execution(g.execution_id), JSON.stringify(gRecord));
    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 4, repaired: 0, deferred: 0, undecided: 0 });

    // A's stored payload says another ceiling than the one its settlement was made against: reported
    const aPayload = (await redis.hget(aKey, 'payload'))!;
    const raised = JSON.parse(aPayload);
    expect(raised.payload.permit2Authorization.permitted.amount).toBe('3000');
    raised.payload.permit2Authorization.permitted.amount = '2000';
    await redis.hset(aKey, 'payload', JSON.stringify(raised));
    const ceiling = alertLog();
    expect(await reconcileBlocks({ ...options, log: ceiling.log }, from, to)).toEqual({ matched: 3, repaired: 0, deferred: 0, undecided: 1 });
    expect(ceiling.alerts()).toContainEqual(expect.objectContaining({ reason: 'the signed ceiling 2000 is not the ceiling settled against (3000)' }));
    await redis.hset(aKey, 'payload', aPayload);
  });

  it('upto: a settlement reorged out is left to the finality tracker, never reported, and matches once its transaction is mined again', async () => {
    const { redis, keys } = worker.services;
    const buyer = t.stack.payment.buyers[3];
    const from = (await head()) + 1n;
    const snapshot = await rpc('evm_snapshot');
    const e = await uptoCall(buyer, 'reorged');
    const eKey = await reservationOf(redis, keys.prefix, e.execution_id);
    const paid = await t.usdc(buyer.address);
    // the worker's finality tracker keeps the facilitator's signed transaction (to broadcast it again) once it saw it mined
    await waitFor(
      () => redis.hget(treasuryKeys.finality(keys, 'settlement', e.execution_id), 'raw_tx'),
      (raw) => raw !== null,
    );
    // the block holding the settlement leaves the chain; Redis still records it settled
    await rpc('evm_revert', [snapshot]);
    expect(await redis.hget(eKey, 'state')).toBe('completed');
    // each run until the tracker has broadcast it again and it is confirmed: nothing undecided, nothing moved by the reconciliation
    const { log, alerts } = alertLog();
    const counts = { matched: 0, repaired: 0, deferred: 0, undecided: 0 };
    await waitFor(
      async () => {
        await rpc('anvil_mine', ['0x1']);
        const run = await reconcileBlocks({ ...options, log }, from, (await head()) - 2n);
        for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += run[k];
        return redis.hget(eKey, 'chain_check');
      },
      (checked) => checked !== null,
    );
    expect(alerts()).toEqual([]);
    expect(counts).toMatchObject({ repaired: 0, undecided: 0 });
    expect(counts.matched).toBeGreaterThanOrEqual(1);
    // charged once: the same settlement, mined again
    expect(await t.usdc(buyer.address)).toBe(paid);
    expect(await redis.hget(eKey, 'chain_check')).toMatch(new RegExp(`^${e.payment.tx_hash}:`));
  });

  it('batch-settlement: a channel claimed and settled matches the contract; a recorded claim raised in Redis is set back; a lost channel record is reported', async () => {
    const { redis, keys } = worker.services;
    const buyer = t.stack.payment.buyers[6];
    const publicClient = createPublicClient({ chain: t.stack.payment.chain, transport: http(t.stack.payment.rpcUrl) });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new BatchClientScheme(toClientEvmSigner(buyer, publicClient as never))));
    const from = (await head()) + 1n;
    for (let i = 0; i < 3; i++) {
      const res = await pay(t.executeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(walletBalancesRequest(buyer.address)),
      });
      expect(res.status).toBe(200);
    }
    const storage = createChannelStorage({ redis, keys });
    const channel = (await storage.list()).find((c) => c.channelConfig.payer.toLowerCase() === buyer.address.toLowerCase())!;
    expect(channel.chargedCumulativeAmount).toBe('3000');
    // the worker claims and settles it
    const pass = await channelSettlementOf(worker.services, pino({ level: 'silent' }), { refundIdleSeconds: 0 }).pass({ full: true });
    expect(pass.claims.length).toBe(1);
    expect(pass.settle).toBeDefined();
    const views = channelChainViews(worker.services.paymentClient, BATCH_SETTLEMENT_ADDRESS);
    const id = channel.channelId as `0x${string}`;
    // what the worker believes claimed is what the contract says
    expect((await storage.get(id))?.totalClaimed).toBe(String((await views.channel(id)).totalClaimed));
    expect((await views.channel(id)).totalClaimed).toBe(3000n);
    await rpc('anvil_mine', ['0x2']);
    const to = (await head()) - 2n;

    // the claim (its channel) and the settlement to the treasury
    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 2, repaired: 0, deferred: 0, undecided: 0 });

    // the record says more was claimed than the contract holds: set back to the chain's, so the next pass claims it again
    const json = JSON.parse((await redis.get(`${keys.prefix}ch:server:channel:${id.toLowerCase()}`))!);
    await redis.set(`${keys.prefix}ch:server:channel:${id.toLowerCase()}`, JSON.stringify({ ...json, totalClaimed: '3500' }));
    expect(await reconcileBlocks(options, from, to)).toEqual({ matched: 1, repaired: 1, deferred: 0, undecided: 0 });
    expect((await storage.get(id))?.totalClaimed).toBe('3000');

    // raised again, and only the settlement's block reconciled (no claim of the channel in it): the
    // receivers view shows less claimed for the treasury than the channel records add up to
    const settleBlock = (await worker.services.paymentClient.getTransactionReceipt({ hash: pass.settle as `0x${string}` })).blockNumber;
    const claimBlock = (await worker.services.paymentClient.getTransactionReceipt({ hash: pass.claims[0].transaction as `0x${string}` })).blockNumber;
    expect(settleBlock).not.toBe(claimBlock);
    await redis.set(`${keys.prefix}ch:server:channel:${id.toLowerCase()}`, JSON.stringify({ ...json, totalClaimed: '3500' }));
    const raised = alertLog();
    expect(await reconcileBlocks({ ...options, log: raised.log }, settleBlock, settleBlock)).toEqual({ matched: 0, repaired: 0, deferred: 0, undecided: 1 });
    expect(raised.alerts()).toContainEqual(expect.objectContaining({ reason: expect.stringMatching(/channel records say \d+ claimed for the treasury/) }));
    await redis.set(`${keys.prefix}ch:server:channel:${id.toLowerCase()}`, JSON.stringify(json));

    // the channel's record lost while its escrow still holds unclaimed funds: reported, nothing moved
    expect((await views.channel(id)).balance).toBeGreaterThan(3000n);
    await storage.updateChannel(id, () => undefined);
    expect(await storage.get(id)).toBeUndefined();
    const { log, alerts } = alertLog();
    const escrowBefore = await t.usdc(BATCH_SETTLEMENT_ADDRESS);
    expect(await reconcileBlocks({ ...options, log }, from, to)).toEqual({ matched: 1, repaired: 0, deferred: 0, undecided: 1 });
    expect(alerts()).toContainEqual(expect.objectContaining({ channelId: id.toLowerCase(), reason: expect.stringContaining('without a record') }));
    expect(await t.usdc(BATCH_SETTLEMENT_ADDRESS)).toBe(escrowBefore);
  });
});
