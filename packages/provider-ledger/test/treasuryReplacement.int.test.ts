import { devClients, mintUsdc, startDevStack, usdcBalance, type DevClients, type DevStack } from '@acg/devnet';
import { ChainSender, storedTransferRecord, TransactionNotMinedError, TreasurySender } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { encodeFunctionData, erc20Abi, parseAbiItem, parseTransaction, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 33 item 4 on a real anvil with automine off: a treasury transfer that is stuck in the pool
 * (its fee cap under the base fee) or refused ("replacement transaction underpriced": another
 * transaction holds its nonce in the pool) is replaced at the same nonce with a higher fee until
 * the node takes it, and lands exactly once; the facilitator's sender, whose transaction lost its
 * nonce to another (dropped, then the nonce reused), reports `TransactionNotMinedError` and its
 * next send follows the chain's nonce. Balances add up from the chain's `Transfer` logs.
 */

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let stack: DevStack;
let chain: DevClients;
let redis: Redis;

const rpc = (method: string, params: unknown[] = []) => chain.publicClient.request({ method, params } as never) as Promise<unknown>;
const usdc = (owner: Hex) => usdcBalance(stack.payment.rpcUrl, owner, stack.payment.usdc);
const receipt = (hash: Hex) => chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined);
/** Every USDC transfer to `to` on chain, as transaction hashes. */
const transfersTo = async (to: Hex) =>
  (await chain.publicClient.getLogs({ address: stack.payment.usdc, event: TRANSFER, args: { to }, fromBlock: 0n })).map((l) => l.transactionHash);

/** Mines a block every 200 ms until `until` settles (automine is off), and returns its outcome. */
async function mining<T>(until: Promise<T>): Promise<T> {
  let done = false;
  const settled = until.finally(() => {
    done = true;
  });
  settled.catch(() => undefined);
  while (!done) {
    await rpc('evm_mine');
    await new Promise((r) => setTimeout(r, 200));
  }
  return settled;
}

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  chain = await devClients(stack.payment.rpcUrl);
  redis = connectRedis({ url: stack.redis.url });
  await mintUsdc(stack.payment.rpcUrl, stack.payment.treasury.address, 100_000_000n);
});
afterEach(async () => {
  await rpc('evm_setAutomine', [true]);
});
afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

function treasury(receiptTimeoutMs = 1_500) {
  return new TreasurySender({
    redis,
    keys: new RedisKeys(`acg:test:treasuryreplace:${ulid()}:`),
    rpcUrl: stack.payment.rpcUrl,
    chain: stack.payment.chain,
    treasury: stack.payment.treasury,
    asset: stack.payment.usdc,
    receiptTimeoutMs,
  });
}

describe('a treasury transfer stuck in the pool or refused', () => {
  it('stuck under the base fee: replaced at the same nonce with a higher fee, lands once', async () => {
    const sender = treasury();
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const amount = 2_345_678n;
    const recordKey = `${sender.address}:stuck:${ulid()}`;
    const record = storedTransferRecord(redis, recordKey);
    const treasuryBefore = await usdc(stack.payment.treasury.address);
    await rpc('evm_setAutomine', [false]);

    // signed, stored and broadcast; nothing is mined, so the receipt wait times out
    await expect(sender.transferOnce({ to, amount, record })).rejects.toThrow();
    const first = (await record.load())!;
    const firstFee = parseTransaction(first.raw).maxFeePerGas!;
    // the base fee jumps far above its fee cap: it can no longer be mined
    await rpc('anvil_setNextBlockBaseFeePerGas', [`0x${(firstFee * 1000n).toString(16)}`]);
    await rpc('evm_mine');
    expect(await receipt(first.hash)).toBeUndefined();

    // the next attempt finds it waiting in the pool at the next nonce: replaced with a higher fee
    const outcome = await mining(sender.transferOnce({ to, amount, record }));
    const now = (await record.load())!;
    expect(outcome).toEqual({ hash: now.hash, status: 'success' });
    expect(now).toMatchObject({ nonce: first.nonce, replaces: [first.hash] });
    expect(parseTransaction(now.raw).maxFeePerGas! * 100n).toBeGreaterThanOrEqual(firstFee * 120n);
    expect(await receipt(first.hash)).toBeUndefined();
    expect(await transfersTo(to)).toEqual([now.hash]);
    expect(await usdc(to)).toBe(amount);
    expect(await usdc(stack.payment.treasury.address)).toBe(treasuryBefore - amount);

    // idempotent: another attempt finds the mined replacement, signs nothing
    expect(await sender.transferOnce({ to, amount, record })).toEqual(outcome);
    expect(await transfersTo(to)).toEqual([now.hash]);
  });

  it('refused ("replacement transaction underpriced"): the fee grows attempt by attempt until the node takes it, once', async () => {
    const sender = treasury(1_000);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const amount = 1_111_111n;
    const record = storedTransferRecord(redis, `${sender.address}:refused:${ulid()}`);
    const treasuryBefore = await usdc(stack.payment.treasury.address);
    await rpc('evm_setAutomine', [false]);

    // signed and stored, then the process dies before the broadcast
    await expect(
      sender.transferOnce({
        to,
        amount,
        record,
        hooks: {
          afterSign: () => {
            throw new Error('crash');
          },
        },
      }),
    ).rejects.toThrow('crash');
    const first = (await record.load())!;
    const fee = parseTransaction(first.raw);
    // meanwhile another transaction of the treasury takes that nonce in the pool with twice the fees
    const squatter = await chain.walletFor(stack.payment.treasury).sendTransaction({
      to: stack.payment.treasury.address,
      value: 0n,
      nonce: first.nonce,
      maxFeePerGas: fee.maxFeePerGas! * 2n,
      maxPriorityFeePerGas: fee.maxPriorityFeePerGas! * 2n,
    });

    // each attempt is refused by the node and bumps from its last fee: it never wedges
    let outcome: Awaited<ReturnType<TreasurySender['transferOnce']>> | undefined;
    for (let attempt = 0; attempt < 12 && !outcome; attempt++) {
      outcome = await sender.transferOnce({ to, amount, record }).catch(() => undefined);
      const pool = (await rpc('txpool_content')) as { pending: Record<string, Record<string, { hash: Hex }>> };
      const held = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === sender.address.toLowerCase())?.[1] ?? {};
      const current = (await record.load())?.hash;
      // the node took a replacement (it holds our transaction now, not the squatter): mined from here on
      if (Object.values(held).some((t) => t.hash === current)) outcome = await mining(sender.transferOnce({ to, amount, record }));
    }
    const now = (await record.load())!;
    expect(outcome).toEqual({ hash: now.hash, status: 'success' });
    expect(now.nonce).toBe(first.nonce);
    expect(now.replaces?.[0]).toBe(first.hash);
    expect(now.replaces!.length).toBeGreaterThan(1); // refused at least once on the way
    expect(parseTransaction(now.raw).maxFeePerGas!).toBeGreaterThan(fee.maxFeePerGas! * 2n);
    expect(await receipt(squatter)).toBeUndefined();
    expect(await transfersTo(to)).toEqual([now.hash]);
    expect(await usdc(to)).toBe(amount);
    expect(await usdc(stack.payment.treasury.address)).toBe(treasuryBefore - amount);
  });
});

describe("the facilitator's sender when its transaction's nonce goes to another (dropped, then the nonce reused)", () => {
  it('waitForReceipt throws TransactionNotMinedError; the next send uses the chain nonce and lands once', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    await chain.testClient.setBalance({ address: account.address, value: 10n ** 18n });
    await mintUsdc(stack.payment.rpcUrl, account.address, 10_000n);
    const sender = new ChainSender({
      publicClient: chain.publicClient as never,
      wallet: chain.walletFor(account) as never,
      account,
      chain: stack.payment.chain,
      checkEveryMs: 200,
    });
    const [x, y] = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
    const transfer = (to: Hex, amount: bigint) => ({
      to: stack.payment.usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
    });
    await rpc('evm_setAutomine', [false]);
    const lost = await sender.send(transfer(x, 100n));
    const { nonce } = await chain.publicClient.getTransaction({ hash: lost });
    await rpc('anvil_dropTransaction', [lost]);
    // the nonce goes to another transaction of the same account
    const other = await chain.walletFor(account).sendTransaction({ ...transfer(y, 50n), nonce });
    await rpc('evm_mine');
    expect((await receipt(other))?.status).toBe('success');

    const error = await sender.waitForReceipt({ hash: lost, timeout: 30_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionNotMinedError);
    expect((error as TransactionNotMinedError).hash).toBe(lost);

    // not wedged: the next send takes the chain's nonce and is mined
    const again = await sender.send(transfer(x, 100n));
    expect((await chain.publicClient.getTransaction({ hash: again })).nonce).toBe(nonce + 1);
    const mined = await mining(sender.waitForReceipt({ hash: again, timeout: 30_000 }));
    expect(mined.status).toBe('success');
    expect(await transfersTo(x)).toEqual([again]);
    expect(await usdc(x)).toBe(100n);
    expect(await usdc(y)).toBe(50n);
    expect(await usdc(account.address)).toBe(10_000n - 150n);
  });
});
