import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devClients, mintUsdc, startDevStack, usdcBalance, type DevClients, type DevStack } from '@acg/devnet';
import { TreasuryReadError, TreasurySender, type SignedTransfer, type TransferRecord } from '@acg/treasury';
import { connectRedis, RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { parseAbiItem, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Attack (issue 23 item 6): a mined treasury transfer whose receipt reads fail (a rate-limited or
 * lagging node) must never be signed a second time. A JSON-RPC proxy in front of the real anvil
 * answers `eth_getTransactionReceipt` (and `eth_getTransactionByHash`) with HTTP 429 while
 * `failing` is on; everything else passes through.
 */

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let stack: DevStack;
let clients: DevClients;
let redis: Redis;
let proxy: Server;
let proxyUrl: string;
const fault = { failing: false, refused: 0 };
const FAILED_METHODS = new Set(['eth_getTransactionReceipt', 'eth_getTransactionByHash']);

/** A JSON-RPC proxy to anvil that refuses receipt and transaction reads with 429 while `fault.failing`. */
function startProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const calls = [JSON.parse(body)].flat() as { method: string }[];
      if (fault.failing && calls.some((c) => FAILED_METHODS.has(c.method))) {
        fault.refused++;
        res
          .writeHead(429, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'rate limited' } }));
        return;
      }
      const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  clients = await devClients(stack.payment.rpcUrl);
  redis = connectRedis({ url: stack.redis.url });
  await mintUsdc(stack.payment.rpcUrl, stack.payment.treasury.address, 100_000_000n);
  proxy = await startProxy(stack.payment.rpcUrl);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  redis?.disconnect();
  await new Promise((r) => proxy?.close(r));
  await stack?.stop();
});

/** A record in memory with the compare-and-delete `clear` the contract asks for. */
function memoryRecord(): TransferRecord & { signedSoFar: Hex[] } {
  let value: SignedTransfer | undefined;
  const signedSoFar: Hex[] = [];
  return {
    signedSoFar,
    load: async () => value,
    save: async (s) => {
      value = s;
      signedSoFar.push(s.hash);
    },
    clear: async (hash) => {
      if (value?.hash === hash) value = undefined;
    },
  };
}

describe('treasury transfer whose receipt reads fail', () => {
  it('is never signed twice: a failed read is retried later, and exactly one transfer lands', async () => {
    const keys = new RedisKeys(`acg:test:treasuryfault:${ulid()}:`);
    const sender = new TreasurySender({
      redis,
      keys,
      rpcUrl: proxyUrl,
      chain: stack.payment.chain,
      treasury: stack.payment.treasury,
      asset: stack.payment.usdc,
      receiptTimeoutMs: 1_500,
    });
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const amount = 1_234_567n;
    const record = memoryRecord();
    const treasuryBefore = await usdcBalance(stack.payment.rpcUrl, stack.payment.treasury.address, stack.payment.usdc);

    fault.failing = true;
    // first attempt: signed, broadcast and mined (anvil automines), but its receipt cannot be read
    await expect(sender.transferOnce({ to, amount, record })).rejects.toThrow();
    expect(record.signedSoFar).toHaveLength(1);
    const first = record.signedSoFar[0];
    // a later block, so the treasury's mined nonce is surely past the transfer's
    await clients.testClient.mine({ blocks: 2 });

    // retries while the reads still fail: refused as a read failure, nothing new signed or sent
    for (let i = 0; i < 3; i++) {
      await expect(sender.transferOnce({ to, amount, record })).rejects.toBeInstanceOf(TreasuryReadError);
    }
    expect(fault.refused).toBeGreaterThan(0);
    expect(record.signedSoFar).toEqual([first]);

    // the node answers again: the same transfer is found, never a second one
    fault.failing = false;
    const outcome = await sender.transferOnce({ to, amount, record });
    expect(outcome).toEqual({ hash: first, status: 'success' });
    expect(record.signedSoFar).toEqual([first]);

    const logs = await clients.publicClient.getLogs({ address: stack.payment.usdc, event: TRANSFER, args: { to }, fromBlock: 0n });
    expect(logs.map((l) => l.transactionHash)).toEqual([first]);
    expect(await usdcBalance(stack.payment.rpcUrl, to, stack.payment.usdc)).toBe(amount);
    expect(await usdcBalance(stack.payment.rpcUrl, stack.payment.treasury.address, stack.payment.usdc)).toBe(treasuryBefore - amount);
  });
});
