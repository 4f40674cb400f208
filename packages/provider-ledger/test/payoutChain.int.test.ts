import { devClients, mintUsdc, startDevStack, usdcBalance, type DevClients, type DevStack } from '@acg/devnet';
import { trackedTransfer, TreasurySender } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { parseAbiItem, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutTagOf, payoutTransferData, ProviderLedger, runPayoutPass, type PayoutHooks } from '../src/index.js';

/**
 * Issue 33: provider payouts reconciled against the payment chain (real anvil, a private Redis).
 * A payout on chain that Redis lost (Redis restarted without its last writes: the payout record,
 * its signed transaction, the balance move) is recorded, never paid twice; a payout recorded
 * `sent` whose transfer left the chain and whose tracking was lost is sent again once and tracked
 * until final. The provider's USDC on chain and the ledger agree at the end.
 */
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let stack: DevStack;
let chain: DevClients;
let redis: Redis;

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  chain = await devClients(stack.payment.rpcUrl);
  redis = connectRedis({ url: stack.redis.url });
  await mintUsdc(stack.payment.rpcUrl, stack.payment.treasury.address, 100_000_000n);
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

const rpc = (method: string, params: unknown[] = []) => chain.publicClient.request({ method, params } as never) as Promise<unknown>;
const usdc = (owner: Hex) => usdcBalance(stack.payment.rpcUrl, owner, stack.payment.usdc);
const transfersTo = async (to: Hex) =>
  (await chain.publicClient.getLogs({ address: stack.payment.usdc, event: TRANSFER, args: { to }, fromBlock: 0n })).map((l) => l.transactionHash);

/**
 * A checkpoint of every key under `prefix`: the function it returns puts them back as they were,
 * as a Redis restarted from an AOF that lacks every write since would (keys created since are
 * deleted, changed ones restored). Copies are kept by the server (COPY keeps value and expiry).
 */
async function checkpoint(prefix: string): Promise<() => Promise<void>> {
  // the pass's lease is left out: a restart outlasts it (30 s), the test does not wait for that
  const ours = async () => (await redis.keys(`${prefix}*`)).filter((k) => !k.endsWith(':pass:lock'));
  const shadow = (k: string) => `checkpoint:${k}`;
  const saved = new Set(await ours());
  for (const k of saved) await redis.copy(k, shadow(k), 'REPLACE');
  return async () => {
    for (const k of await ours()) if (!saved.has(k)) await redis.del(k);
    for (const k of saved) {
      await redis.copy(shadow(k), k, 'REPLACE');
      await redis.del(shadow(k));
    }
  };
}

/** A ledger on a fresh key prefix whose clock is past every dispute window, a provider with 0.9 USDC available, and a pass. */
async function setup() {
  const keys = new RedisKeys(`acg:test:payoutchain:${ulid()}:`);
  const ledger = new ProviderLedger({ redis, keys, feeBps: 1000, disputeWindowSeconds: 0, now: () => Date.now() + 1_000 });
  const sender = new TreasurySender({
    redis,
    keys,
    rpcUrl: stack.payment.rpcUrl,
    chain: stack.payment.chain,
    treasury: stack.payment.treasury,
    asset: stack.payment.usdc,
  });
  const provider = { id: `prv_${ulid()}`, address: privateKeyToAccount(generatePrivateKey()).address };
  const credit = () =>
    ledger.credit({
      execution_id: `exe_${ulid()}`,
      provider_id: provider.id,
      provider_address: provider.address,
      capability_id: 'intelligence.echo',
      payer: stack.payment.buyers[0].address,
      price: 1_000_000n,
      payment_tx_hash: `0x${'ab'.repeat(32)}`,
    });
  await credit();
  const pass = (hooks?: PayoutHooks) => runPayoutPass({ ledger, redis, keys, sender, minimum: 1n, disputeAutoResolveSeconds: 604_800, log, hooks });
  return { keys, ledger, provider, pass, credit };
}

describe('payout transfers carry their payout', () => {
  it('the tag follows the transfer call and is read back; other calldata has none', () => {
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const [payout, provider] = [`pay_${ulid()}`, `prv_${ulid()}`];
    const data = payoutTransferData(to, 900_000n, payout, provider);
    expect(payoutTagOf(data)).toEqual({ payout_id: payout, provider_id: provider });
    expect(payoutTagOf(data.slice(0, 2 + 2 * 68) as Hex)).toBeUndefined();
    expect(payoutTagOf(`${data.slice(0, 2 + 2 * 68)}${'00'.repeat(8)}` as Hex)).toBeUndefined();
  });
});

describe('payouts reconciled against the chain', () => {
  it('a payout on chain that Redis lost (record, balance move) is recorded by the next pass, never paid twice', async () => {
    const { keys, ledger, provider, pass } = await setup();
    const restart = await checkpoint(keys.prefix);
    const first = await pass();
    expect(first.sent).toHaveLength(1);
    const paid = first.sent[0];
    expect(await usdc(provider.address)).toBe(900_000n);

    // Redis restarts without the pass's writes: no payout record, the share available again
    await restart();
    expect(await ledger.payouts(provider.id)).toEqual([]);
    expect(await ledger.balance(provider.id)).toMatchObject({ available: '900000', paid: '0' });

    const second = await pass();
    expect(second.chain).toMatchObject({ adopted: [paid.payout_id], resent: [] });
    expect(second.chain?.blocked).not.toContain(provider.id);
    expect(second.sent).toEqual([]);
    expect(await transfersTo(provider.address)).toEqual([paid.tx_hash]);
    expect(await usdc(provider.address)).toBe(900_000n);
    expect(await ledger.balance(provider.id)).toMatchObject({ available: '0', paid: '900000' });
    expect(await ledger.payouts(provider.id)).toEqual([
      expect.objectContaining({ payout_id: paid.payout_id, status: 'sent', amount: '900000', tx_hash: paid.tx_hash }),
    ]);
    expect(await trackedTransfer(redis, keys, 'payout', paid.payout_id)).toMatchObject({ status: 'sent', tx_hash: paid.tx_hash });
    const totals = await ledger.totals();
    expect(totals.held + totals.available + totals.reserved + totals.paid + totals.fees).toBe(totals.credited - totals.refunded);

    // a third pass changes nothing
    expect((await pass()).chain).toMatchObject({ adopted: [], resent: [] });
    expect(await usdc(provider.address)).toBe(900_000n);
  });

  it('a reserved payout whose signed transaction Redis lost, but which was mined, is settled from the chain, not signed again', async () => {
    const { keys, ledger, provider, pass } = await setup();
    let restart: (() => Promise<void>) | undefined;
    const first = await pass({
      // the checkpoint holds the reservation, not the signed transaction
      afterReserve: async () => {
        restart = await checkpoint(keys.prefix);
      },
    });
    const paid = first.sent[0];
    await restart!();
    const [reserved] = await ledger.payouts(provider.id);
    expect(reserved).toMatchObject({ payout_id: paid.payout_id, status: 'reserved' });
    expect(await redis.hget(ledger.payoutKey(paid.payout_id), 'raw_tx')).toBeNull();

    const second = await pass();
    expect(second.chain?.adopted).toEqual([paid.payout_id]);
    expect(second.sent).toEqual([]);
    expect(await transfersTo(provider.address)).toEqual([paid.tx_hash]);
    expect(await usdc(provider.address)).toBe(900_000n);
    expect(await ledger.balance(provider.id)).toMatchObject({ available: '0', paid: '900000' });
    expect((await ledger.totals()).reserved).toBe(0n);
  });

  it('a payout recorded sent whose transfer left the chain, its tracking lost, is sent again once and tracked until final', async () => {
    const { keys, ledger, provider, pass } = await setup();
    const snapshot = await rpc('evm_snapshot');
    const first = await pass();
    const paid = first.sent[0];
    expect(await usdc(provider.address)).toBe(900_000n);
    // the transfer's block leaves the chain, and Redis lost the tracking of it
    await rpc('evm_revert', [snapshot]);
    await redis.del(`${keys.prefix}pay:fin:payout:${paid.payout_id}`);
    expect(await usdc(provider.address)).toBe(0n);
    await redis.hdel(`${keys.prefix}pl:{pl}:pass:state`, 'chain_cursor'); // and the scan rereads the blocks

    const second = await pass();
    expect(second.chain).toMatchObject({ adopted: [], resent: [paid.payout_id] });
    // (payouts of the other tests on this chain are unknown to this ledger: blocked, never adopted here)
    expect(second.chain?.blocked).not.toContain(provider.id);
    expect(second.sent).toEqual([]);
    expect(await usdc(provider.address)).toBe(900_000n);
    const [view] = await ledger.payouts(provider.id);
    expect(view).toMatchObject({ status: 'sent', amount: '900000', finality: 'unconfirmed' });
    expect(view.tx_hash).toBe(paid.tx_hash); // its nonce was free: the same signed transaction
    expect(await transfersTo(provider.address)).toEqual([view.tx_hash]);
    expect(await trackedTransfer(redis, keys, 'payout', paid.payout_id)).toMatchObject({ status: 'sent', tx_hash: view.tx_hash });
    expect(await ledger.balance(provider.id)).toMatchObject({ available: '0', paid: '900000' });

    expect((await pass()).chain).toMatchObject({ adopted: [], resent: [] });
    expect(await usdc(provider.address)).toBe(900_000n);
  });

  it('a payout recorded sent that left the chain while another transfer took its nonce is re-signed (still tagged), once', async () => {
    const { keys, ledger, provider, pass } = await setup();
    const snapshot = await rpc('evm_snapshot');
    const paid = (await pass()).sent[0];
    await rpc('evm_revert', [snapshot]);
    await redis.del(`${keys.prefix}pay:fin:payout:${paid.payout_id}`);
    // another treasury transfer takes the nonce the payout had
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await chain.walletFor(stack.payment.treasury).writeContract({
      address: stack.payment.usdc,
      abi: [parseAbiItem('function transfer(address to, uint256 value) returns (bool)')],
      functionName: 'transfer',
      args: [other, 1n],
    });
    expect(await usdc(provider.address)).toBe(0n);

    const second = await pass();
    expect(second.chain?.resent).toEqual([paid.payout_id]);
    const [view] = await ledger.payouts(provider.id);
    expect(view.tx_hash).not.toBe(paid.tx_hash);
    expect(await transfersTo(provider.address)).toEqual([view.tx_hash]);
    const tx = await chain.publicClient.getTransaction({ hash: view.tx_hash as Hex });
    expect(payoutTagOf(tx.input)).toEqual({ payout_id: paid.payout_id, provider_id: provider.id });
    expect(await usdc(provider.address)).toBe(900_000n);
    expect((await pass()).chain).toMatchObject({ adopted: [], resent: [] });
    expect(await usdc(provider.address)).toBe(900_000n);
  });

  it('a payout on chain the ledger cannot record (its balance lost too) blocks that provider until an operator decides', async () => {
    const { keys, ledger, provider, pass, credit } = await setup();
    const first = await pass();
    const paid = first.sent[0];
    // Redis loses the payout and the balance it came from (as if the credit had never been made)
    await redis.del(ledger.payoutKey(paid.payout_id), `${keys.prefix}pl:{pl}:bal:${provider.id}`, `${keys.prefix}pl:{pl}:payouts:${provider.id}`);
    await redis.hdel(`${keys.prefix}pl:{pl}:pass:state`, 'chain_cursor');
    expect(await ledger.balance(provider.id)).toMatchObject({ available: '0', paid: '0' });
    const lines: string[] = [];
    const second = await runPayoutPass({
      ledger,
      redis,
      keys,
      sender: new TreasurySender({
        redis,
        keys,
        rpcUrl: stack.payment.rpcUrl,
        chain: stack.payment.chain,
        treasury: stack.payment.treasury,
        asset: stack.payment.usdc,
      }),
      minimum: 1n,
      disputeAutoResolveSeconds: 604_800,
      log: pino({ level: 'error' }, { write: (l: string) => void lines.push(l) }),
    });
    expect(second.chain?.blocked).toContain(provider.id);
    expect(lines.map((l) => JSON.parse(l))).toContainEqual(expect.objectContaining({ alert: 'payout_chain_undecided', payout_id: paid.payout_id }));
    // new credits come in: still nothing is sent to that provider while it is blocked
    await credit();
    expect((await pass()).sent.filter((p) => p.provider_id === provider.id)).toEqual([]);
    expect(await transfersTo(provider.address)).toEqual([paid.tx_hash]);
    // the operator settles it and unblocks: payouts go on
    await redis.srem(`${keys.prefix}pl:{pl}:payouts-blocked`, provider.id);
    expect((await pass()).sent.filter((p) => p.provider_id === provider.id)).toHaveLength(1);
  });
});
