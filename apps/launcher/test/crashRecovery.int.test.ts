import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_ROLES,
  DEV_RUNS_KEY,
  devAccount,
  devClients,
  freePort,
  resolveRedis,
  sleep,
  startDevChain,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  usdcAbi,
  type DevChain,
  type RedisHandle,
} from '@acg/devnet';
import { Redis } from 'ioredis';
import { getAddress, type Hex } from 'viem';
import { descendants, keysUnder, killLeftovers, runNpmStart, stillRunning, type Launcher } from './launcher.js';

// issue 28 items 1 and 4: `npm start` honours PAYMENT_RECOVERY_* (its crash-recovery sweep releases
// an orphaned reservation, and refunds an orphaned charged one exactly once, within
// PAYMENT_RECOVERY_AFTER_MS plus one interval, not the default 10 minutes), and a run killed with kill -9 has its keys removed by the next `npm start` on that Redis.
const INTERVAL_MS = 1_000;
const AFTER_MS = 3_000;
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

let redis: RedisHandle | undefined;
/** Ethereum and Arbitrum dev chains of the test's own (so the launcher skips its lending deployment, which is not under test here). */
let ethereum: DevChain | undefined;
let arbitrum: DevChain | undefined;
let client: Redis | undefined;
const launchers: Launcher[] = [];
const spawned: number[] = [];

async function start(): Promise<{ launcher: Launcher; prefix: string }> {
  const ports = {
    GATEWAY_PORT: await freePort(),
    BUILDER_PORT: await freePort(),
    DEVNET_PAYMENT_PORT: await freePort(),
  };
  const launcher = runNpmStart({
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    REDIS_URL: redis!.url,
    ETHEREUM_RPC_URL: ethereum!.rpcUrl,
    ARBITRUM_RPC_URL: arbitrum!.rpcUrl,
    LOG_LEVEL: 'warn',
    EXAMPLE_PROVIDER: 'off',
    PAYMENT_RECOVERY_INTERVAL_MS: String(INTERVAL_MS),
    PAYMENT_RECOVERY_AFTER_MS: String(AFTER_MS),
  });
  launchers.push(launcher);
  await launcher.waitFor('Ctrl-C stops everything', 240_000);
  const prefix = launcher.output().match(/key prefix (acg:dev:[0-9A-Z]{26}:) \(this run only/)?.[1];
  expect(prefix, launcher.output()).toBeDefined();
  spawned.push(...descendants(launcher.child.pid!).map((r) => r.pid));
  return { launcher, prefix: prefix! };
}

beforeAll(async () => {
  [redis, ethereum, arbitrum] = await Promise.all([
    resolveRedis({ preferPrivate: true }),
    startDevChain('ethereum', { extraArgs: ['--order', 'fifo'] }),
    startDevChain('arbitrum'),
  ]);
  client = new Redis(redis.url);
}, 120_000);

afterAll(async () => {
  killLeftovers(spawned, launchers);
  client?.disconnect();
  await redis?.stop();
  await ethereum?.stop();
  await arbitrum?.stop();
});

describe('npm start after a crash', () => {
  it('its recovery sweep follows PAYMENT_RECOVERY_*; a run killed with kill -9 is cleaned up by the next start', { timeout: 600_000 }, async () => {
    const first = await start();

    // an interrupted paid request: its authorization reserved (`pending`), never sent to the chain, its process gone
    const nonce = `0x${'5a'.repeat(32)}`;
    const payer = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';
    const authKey = `${first.prefix}pay:auth:eip155:8453:${USDC}:${payer}:${nonce}`;
    await client!.hset(
      authKey,
      'state',
      'pending',
      'operation_id',
      'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T',
      'asset',
      USDC,
      'payer',
      payer,
      'nonce',
      nonce,
      'amount',
      '1000',
    );
    const reservedAt = Date.now();
    await client!.zadd(`${first.prefix}pay:inflight`, reservedAt, authKey);
    // released by the sweep within PAYMENT_RECOVERY_AFTER_MS + one interval (the defaults would take 10 minutes);
    // the loop's bound only detects that it never happens
    for (let i = 0; i < 600 && (await client!.exists(authKey)) === 1; i++) await sleep(100);
    const releasedAfter = Date.now() - reservedAt;
    console.log(`orphaned reservation released ${releasedAfter} ms after it was reserved (AFTER ${AFTER_MS} + INTERVAL ${INTERVAL_MS})`);
    expect(await client!.exists(authKey)).toBe(0);
    expect(await client!.zscore(`${first.prefix}pay:inflight`, authKey)).toBeNull();
    expect(releasedAfter).toBeGreaterThanOrEqual(AFTER_MS); // not before it counts as orphaned

    // an interrupted paid request that WAS charged: its EIP-3009 authorization settled on the launcher's
    // payment chain, the reservation left `settled` (what paywall.ts writes after settlement) by a
    // gateway that died before the operation answered
    const paymentRpc = first.launcher.output().match(/payment chain\s+(http:\/\/\S+) \(eip155:8453/)?.[1];
    expect(paymentRpc, first.launcher.output()).toBeDefined();
    const { chain, publicClient, walletFor } = await devClients(paymentRpc!);
    const buyer = devAccount(DEV_ROLES.buyers[7]); // a buyer nothing else under `npm start` uses
    const treasury = devAccount(DEV_ROLES.treasury).address;
    const usdc = getAddress(USDC);
    const balanceOf = (owner: Hex) => publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [owner] });
    const refundsToBuyer = async () =>
      (await publicClient.getContractEvents({ address: usdc, abi: usdcAbi, eventName: 'Transfer', args: { from: treasury, to: buyer.address }, fromBlock: 0n }))
        .length;
    const amount = 1000n;
    const paidNonce = `0x${'c4'.repeat(32)}` as Hex;
    const message = {
      from: buyer.address,
      to: treasury,
      value: amount,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: paidNonce,
    };
    const signature = await buyer.signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: chain.id, verifyingContract: usdc },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message,
    });
    const before = await balanceOf(buyer.address);
    expect(await refundsToBuyer()).toBe(0);
    const paymentTx = await walletFor(buyer).writeContract({
      address: usdc,
      abi: usdcAbi,
      functionName: 'transferWithAuthorization',
      args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: paymentTx })).status).toBe('success');
    expect(before - (await balanceOf(buyer.address))).toBe(amount);

    const operationId = 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S9D';
    const paidKey = `${first.prefix}pay:auth:eip155:8453:${USDC}:${buyer.address.toLowerCase()}:${paidNonce}`;
    const paidAt = Date.now();
    await client!.hset(paidKey, {
      state: 'settled',
      request_hash: 'f'.repeat(64),
      payload_hash: 'e'.repeat(64),
      operation_id: operationId,
      created_at: String(paidAt),
      updated_at: String(paidAt),
      asset: USDC,
      payer: buyer.address.toLowerCase(),
      nonce: paidNonce,
      amount: String(amount),
      tx_hash: paymentTx,
    });
    await client!.zadd(`${first.prefix}pay:inflight`, paidAt, paidKey);
    // wait PAYMENT_RECOVERY_AFTER_MS + one interval + a margin for the refund to be mined, then look
    // (the state is asserted after that wait, not the time it took)
    await sleep(AFTER_MS + INTERVAL_MS + 5_000);
    const recovered = await client!.hgetall(paidKey);
    expect(recovered.state, JSON.stringify(recovered)).toBe('completed');
    expect(await client!.zscore(`${first.prefix}pay:inflight`, paidKey)).toBeNull();
    // the stored answer a replay of the payment gets: a 502 naming the payment and its refund
    expect(JSON.parse(recovered.response!)).toMatchObject({
      status: 502,
      body: { status: 502, execution_id: operationId, payment: { tx_hash: paymentTx, amount: String(amount) }, refund: { amount: String(amount) } },
    });
    expect(await balanceOf(buyer.address)).toBe(before);
    expect(await refundsToBuyer()).toBe(1);
    // later rounds refund nothing more
    await sleep(3 * INTERVAL_MS);
    expect(await refundsToBuyer()).toBe(1);
    expect(await balanceOf(buyer.address)).toBe(before);

    // kill -9 of the launcher itself: nothing of it runs its stop, its keys stay behind
    const launcherPid = descendants(first.launcher.child.pid!).find((r) => /apps\/launcher\/src\/start\.ts/.test(r.args))?.pid;
    expect(launcherPid).toBeDefined();
    process.kill(launcherPid!, 'SIGKILL');
    await first.launcher.exited;
    for (const pid of stillRunning(spawned)) process.kill(pid, 'SIGKILL'); // its anvils and relays, orphaned
    expect((await keysUnder(client!, first.prefix)).length).toBeGreaterThan(10);
    expect(await client!.sismember(DEV_RUNS_KEY, first.prefix)).toBe(1);

    // the next start on that Redis removes them, once the dead run's liveness key has expired (120 s TTL: expired here)
    await client!.pexpire(`${first.prefix}launcher:alive`, 1);
    await sleep(50);
    const second = await start();
    expect(second.launcher.output()).toMatch(new RegExp(`removed [1-9]\\d* Redis keys of an earlier run that did not stop \\(prefix ${first.prefix}\\)`));
    expect(await keysUnder(client!, first.prefix)).toEqual([]);
    expect(await client!.sismember(DEV_RUNS_KEY, first.prefix)).toBe(0);
    // a live run is left alone: the second run's keys stay while it runs
    expect((await keysUnder(client!, second.prefix)).length).toBeGreaterThan(10);

    second.launcher.child.kill('SIGTERM');
    await second.launcher.exited;
    expect(await keysUnder(client!, second.prefix)).toEqual([]);
    expect(await client!.sismember(DEV_RUNS_KEY, second.prefix)).toBe(0);
  });
});
