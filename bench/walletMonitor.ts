/**
 * `npx tsx bench/walletMonitor.ts [--blocks=5] [--transfers=200] [--addresses=1000]`
 *
 * Wallet monitor: block confirmation → webhook received, p50/p99, with 1,000 watched addresses
 * (4 subscriptions of 250) and 200 transfers per block (half USDC `transfer`, half ETH), against
 * baselines measured in the same run:
 *
 * - **monitor**: `startWalletMonitor` as deployed (watcher woken by an `eth_subscribe` `newHeads`
 *   subscription on anvil's WebSocket port, head polling every 200 ms as the fallback, callTracer traces,
 *   address index, BullMQ queue, Standard Webhooks signing, ledger debit per event, keep-alive POST).
 * - **naive poller**: the least a watcher can do: poll `eth_blockNumber` at the same interval, read
 *   the block's transactions and `Transfer` logs, match a `Set` of addresses in memory, POST
 *   unsigned JSON straight to the receiver (no Redis, no queue, no retries, no billing, no traces).
 * - **direct feed** (floor): the same receiver fed the monitor's signed bodies directly at the same
 *   concurrency, timed from the first POST: the cost of HTTP alone.
 *
 * Each block is built with automine off (200 raw transactions from 8 dev accounts), then mined
 * with `evm_mine`; "confirmation" is the moment `evm_mine` returns (depth 1, as on the dev chain).
 * The receiver runs in a child process (so it never shares the monitor's event loop) and stamps
 * each arrival with the wall clock. Monitor and naive blocks alternate in the order M N N M (the
 * monitor's watcher is stopped during naive phases and the naive blocks pay addresses the
 * monitor does not watch). Nothing asserts on speed: the command exits 0 when it ran.
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { devAccount, devClients, resolveRedis, startDevChain, type DevChain, type RedisHandle } from '@acg/devnet';
import { Ledger } from '@acg/accounts';
import { RedisKeys, connectRedis } from '@acg/redis';
import { startWalletMonitor, type RunningWalletMonitor } from '@acg/wallet-monitor';
import { pino } from 'pino';
import { createPublicClient, encodeFunctionData, erc20Abi, http, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fmt, fmtRatio, machine, percentile, ratio, table } from './lib/stats.js';

const WATCHDOG_MS = 240_000;
const POLL_MS = 200;
const CONCURRENCY = 64;

interface Arrival {
  path: string;
  at: number;
  key: string;
}

const now = () => performance.timeOrigin + performance.now();

function args() {
  const flags: Record<string, number> = { blocks: 5, transfers: 200, addresses: 1000 };
  for (const a of process.argv.slice(2)) {
    const m = /^--(blocks|transfers|addresses)=(\d+)$/.exec(a);
    if (!m) {
      console.error(`unknown argument ${a}\nusage: npx tsx bench/walletMonitor.ts [--blocks=5] [--transfers=200] [--addresses=1000]`);
      process.exit(2);
    }
    flags[m[1]] = Number(m[2]);
  }
  return flags;
}

/** The webhook receiver, in a child process: answers 200 and reports (path, arrival wall time, tx key) over IPC. */
const RECEIVER_SOURCE = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    let key = '';
    try { const b = JSON.parse(Buffer.concat(chunks).toString('utf8')); key = b.tx_hash + ':' + (b.log_index ?? 'n') + ':' + b.subscription_id; } catch {}
    res.end('ok');
    process.send({ path: req.url, at, key });
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
`;

class ReceiverChild {
  readonly arrivals: Arrival[] = [];
  private child!: ChildProcess;
  url = '';
  private dir = mkdtempSync(join(os.tmpdir(), 'wm-bench-'));

  async start(): Promise<void> {
    const file = join(this.dir, 'receiver.cjs');
    writeFileSync(file, RECEIVER_SOURCE);
    this.child = fork(file, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise<void>((resolve) => {
      this.child.on('message', (m: Arrival | { port: number }) => {
        if ('port' in m) {
          this.url = `http://127.0.0.1:${m.port}`;
          resolve();
        } else this.arrivals.push(m);
      });
    });
  }

  stop(): void {
    this.child?.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Signs and sends `n` transfers (half USDC, half ETH) to `recipients`, without mining. */
async function queueTransfers(chain: DevChain, senders: LocalAccount[], nonces: Map<string, number>, recipients: `0x${string}`[], n: number): Promise<void> {
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const raws: Hex[] = [];
  for (let i = 0; i < n; i++) {
    const from = senders[i % senders.length];
    const nonce = nonces.get(from.address)!;
    nonces.set(from.address, nonce + 1);
    const to = recipients[Math.floor(Math.random() * recipients.length)];
    const common = { chainId: chain.chainId, nonce, maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, type: 'eip1559' as const };
    raws.push(
      i % 2 === 0
        ? await from.signTransaction({
            ...common,
            to: chain.usdc,
            gas: 80_000n,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 1_000n + BigInt(i)] }),
          })
        : await from.signTransaction({ ...common, to, gas: 21_000n, value: 1_000_000_000n + BigInt(i) }),
    );
  }
  await Promise.all(raws.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })));
}

/** A naive watcher: head polling, block transactions + Transfer logs, a Set of addresses, unsigned POSTs. */
function naivePoller(rpcUrl: string, watched: Set<string>, url: string) {
  const client = createPublicClient({ transport: http(rpcUrl) });
  let last = -1n;
  let stopped = false;
  const loop = (async () => {
    last = await client.getBlockNumber({ cacheTime: 0 });
    while (!stopped) {
      const head = BigInt(await client.request({ method: 'eth_blockNumber' }));
      if (head > last) {
        for (let n = last + 1n; n <= head; n++) {
          const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
          const logs = await client.request({
            method: 'eth_getLogs',
            params: [{ blockHash: block.hash!, topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'] }],
          });
          const bodies: string[] = [];
          for (const tx of block.transactions) {
            if (tx.value > 0n && tx.to && watched.has(tx.to.toLowerCase()))
              bodies.push(JSON.stringify({ tx_hash: tx.hash, log_index: null, subscription_id: 'naive', to: tx.to, amount: tx.value.toString() }));
          }
          for (const l of logs) {
            const to = `0x${l.topics[2]!.slice(-40)}`;
            if (l.topics.length === 3 && watched.has(to))
              bodies.push(
                JSON.stringify({ tx_hash: l.transactionHash, log_index: Number(l.logIndex), subscription_id: 'naive', to, amount: BigInt(l.data).toString() }),
              );
          }
          await postAll(url, bodies, {});
        }
        last = head;
      } else await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** POSTs bodies with CONCURRENCY in flight (fetch keep-alive). */
async function postAll(url: string, bodies: string[], headers: Record<string, string>[] | Record<string, string>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      const h = Array.isArray(headers) ? headers[i] : headers;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body: bodies[i] });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, bodies.length) }, worker));
}

interface SideResult {
  name: string;
  latencies: number[];
  blocks: number;
  expected: number;
  received: number;
}

async function waitArrivals(receiver: ReceiverChild, path: string, from: number, count: number, timeoutMs = 30_000): Promise<Arrival[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = receiver.arrivals.slice(from).filter((a) => a.path === path);
    if (got.length >= count || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function main(): Promise<number> {
  const flags = args();
  console.log(`bench wallet-monitor: ${machine()}; ${new Date().toISOString()}`);
  let redis: RedisHandle | undefined;
  let chain: DevChain | undefined;
  let monitor: RunningWalletMonitor | undefined;
  const receiver = new ReceiverChild();
  const cleanup = async () => {
    await monitor?.stop().catch(() => undefined);
    receiver.stop();
    await chain?.stop().catch(() => undefined);
    await redis?.stop().catch(() => undefined);
  };
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s (hang guard); stopping`);
    void cleanup().finally(() => process.exit(1));
  }, WATCHDOG_MS);
  watchdog.unref();
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    const [r, c] = await Promise.all([resolveRedis({ preferPrivate: true }), startDevChain('ethereum'), receiver.start()]);
    redis = r;
    chain = c;
    const clients = await devClients(chain.rpcUrl);
    const keys = new RedisKeys(`acg:bench:wm:${Date.now()}:`);
    const conn = connectRedis({ url: redis.url });
    const ledger = new Ledger(conn, keys);

    monitor = await startWalletMonitor({
      redisUrl: redis.url,
      keyPrefix: keys.prefix,
      chains: { ethereum: { rpcUrl: chain.rpcUrl } },
      policy: 'development',
      renewalIntervalSeconds: 0,
      pollIntervalMs: POLL_MS,
      concurrency: CONCURRENCY,
      log: pino({ level: process.env.LOG_LEVEL ?? 'warn' }),
    });
    const watcher = monitor.watchers[0];

    // 1,000 watched addresses in 4 subscriptions of 250 (4 owners with funded metered accounts)
    const watched = Array.from({ length: flags.addresses }, () => privateKeyToAccount(generatePrivateKey()).address);
    const perSub = Math.ceil(watched.length / 4);
    const subIds: string[] = [];
    for (let s = 0; s < 4; s++) {
      const owner = devAccount(2 + s).address;
      await ledger.credit(owner, 1_000_000_000n, 'deposit', `bench-${s}`);
      const created = await monitor.service.subscribe(owner, {
        addresses: watched.slice(s * perSub, (s + 1) * perSub),
        chains: ['ethereum'],
        events: ['transfer_in', 'transfer_out'],
        webhook_url: `${receiver.url}/monitor`,
      });
      subIds.push(created.subscription_id);
    }
    const naiveWatched = Array.from({ length: flags.addresses }, () => privateKeyToAccount(generatePrivateKey()).address);
    const naiveSet = new Set(naiveWatched.map((a) => a.toLowerCase()));

    const senders = [2, 3, 4, 5, 6, 7, 8, 9].map((i) => devAccount(i) as LocalAccount);
    const nonces = new Map<string, number>();
    for (const s of senders) nonces.set(s.address, await clients.publicClient.getTransactionCount({ address: s.address, blockTag: 'pending' }));
    await clients.publicClient.request({ method: 'evm_setAutomine' as 'eth_chainId', params: [false] as never });

    const mineBlock = async (recipients: `0x${string}`[], path: string, expected: number): Promise<number[]> => {
      await queueTransfers(chain!, senders, nonces, recipients, flags.transfers);
      const from = receiver.arrivals.length;
      await clients.publicClient.request({ method: 'evm_mine' as 'eth_chainId' });
      const t0 = now();
      const got = await waitArrivals(receiver, path, from, expected);
      if (got.length < expected) console.error(`bench: block on ${path} delivered ${got.length}/${expected} within 30 s`);
      const block = await clients.publicClient.getBlock();
      if (block.transactions.length !== flags.transfers)
        console.error(`bench: block has ${block.transactions.length} transactions, expected ${flags.transfers}`);
      return got.map((a) => a.at - t0);
    };

    const sides: Record<'monitor' | 'naive', SideResult> = {
      monitor: { name: 'wallet monitor (signed, queued, billed)', latencies: [], blocks: 0, expected: 0, received: 0 },
      naive: { name: 'naive poller (unsigned, direct POST)', latencies: [], blocks: 0, expected: 0, received: 0 },
    };
    /** Counts one measured block of `flags.transfers` transfers on `side`: its webhooks' latencies (ms) and how many arrived. */
    const recordBlock = (side: SideResult, latencies: number[]) => {
      side.latencies.push(...latencies);
      side.blocks++;
      side.expected += flags.transfers;
      side.received += latencies.length;
    };
    // where the watcher learned of each measured block's head (newHeads subscription, or the polling fallback)
    const headSources = new Set<string>();
    const runMonitor = async (blocks: number, record: boolean) => {
      await watcher.start();
      const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
      for (let i = 0; i < 200 && ((await watcher.cursor())?.number ?? 0n) < head; i++) await new Promise((r) => setTimeout(r, 25));
      for (let b = 0; b < blocks; b++) {
        if (record) headSources.add(watcher.headSource);
        const l = await mineBlock(watched, '/monitor', flags.transfers);
        if (record) recordBlock(sides.monitor, l);
      }
      await watcher.stop();
    };
    const runNaive = async (blocks: number, record: boolean) => {
      const poller = naivePoller(chain!.rpcUrl, naiveSet, `${receiver.url}/naive`);
      await new Promise((r) => setTimeout(r, POLL_MS));
      for (let b = 0; b < blocks; b++) {
        const l = await mineBlock(naiveWatched, '/naive', flags.transfers);
        if (record) recordBlock(sides.naive, l);
      }
      await poller.stop();
    };

    const half = Math.max(1, Math.ceil(flags.blocks / 2));
    console.log(
      `bench: ${flags.addresses} watched addresses (4 subscriptions), ${flags.transfers} transfers per block (half USDC, half ETH), ` +
        `${2 * half} measured blocks per side in two halves (order M N N M) after one warm-up block each\n`,
    );
    await runMonitor(1, false); // warm-up
    await runNaive(1, false);
    await runMonitor(half, true);
    await runNaive(half, true);
    await runNaive(half, true);
    await runMonitor(half, true);

    // Floor: the monitor's own signed bodies, POSTed straight to the receiver.
    const health = await monitor.service.health();
    const bodies = Array.from({ length: flags.transfers }, (_, i) =>
      JSON.stringify({ tx_hash: `0x${i.toString(16).padStart(64, '0')}`, log_index: i, subscription_id: 'direct', amount: '1' }),
    );
    const directLat: number[] = [];
    for (let r = 0; r < flags.blocks; r++) {
      const from = receiver.arrivals.length;
      const t0 = now();
      await postAll(`${receiver.url}/direct`, bodies, {
        'webhook-id': 'msg_direct',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,direct',
      });
      directLat.push(...(await waitArrivals(receiver, '/direct', from, flags.transfers)).map((a) => a.at - t0));
    }

    const row = (name: string, l: number[], blocks: number, received: number, expected: number) => [
      name,
      String(blocks),
      `${received}/${expected}`,
      fmt(percentile(l, 50)),
      fmt(percentile(l, 99)),
      fmt(Math.max(...l)),
    ];
    console.log(
      table(
        ['block confirmation → webhook received', 'blocks', 'events', 'p50 ms', 'p99 ms', 'max ms'],
        [
          row(sides.monitor.name, sides.monitor.latencies, sides.monitor.blocks, sides.monitor.received, sides.monitor.expected),
          row(sides.naive.name, sides.naive.latencies, sides.naive.blocks, sides.naive.received, sides.naive.expected),
          row('direct feed (HTTP only, floor)', directLat, flags.blocks, directLat.length, flags.blocks * flags.transfers),
        ],
      ),
    );
    const m50 = percentile(sides.monitor.latencies, 50);
    const m99 = percentile(sides.monitor.latencies, 99);
    console.log(
      `\nratio monitor/naive: p50 ${fmtRatio(ratio(m50, percentile(sides.naive.latencies, 50)))}, p99 ${fmtRatio(ratio(m99, percentile(sides.naive.latencies, 99)))}` +
        `   (spec: about 450 ms after block confirmation; monitor p50 ${fmt(m50, 0)} ms)`,
    );
    console.log(`machine: ${machine()}`);
    console.log(`monitor head source during the measured blocks: ${[...headSources].join(', ')} (newHeads over WebSocket = subscription)`);
    console.log(
      `monitor health: delivery latency measured from the watcher's view p50 ${fmt(health.delivery_latency_ms.p50 ?? NaN)} ms / p99 ${fmt(health.delivery_latency_ms.p99 ?? NaN)} ms over ${health.delivery_latency_ms.samples} samples; backlog ${JSON.stringify(health.backlog)}`,
    );
    let billed = 0n;
    for (let s = 0; s < 4; s++) billed += 1_000_000_000n - (await ledger.balance(devAccount(2 + s).address));
    const deliveredAll = receiver.arrivals.filter((a) => a.path === '/monitor').length;
    console.log(
      `billing: ${billed} base units for ${deliveredAll} delivered events (${billed === BigInt(deliveredAll) * 1000n ? 'exactly' : 'NOT'} 1000 each)`,
    );
    let failed = 0;
    for (const id of subIds) failed += (await monitor.service.subscriptions.stats(id)).failed_attempts;
    console.log(`failed delivery attempts (retried): ${failed}`);
    conn.disconnect();
    return 0;
  } catch (e) {
    console.error('bench: failed:', e);
    return 1;
  } finally {
    await cleanup();
    clearTimeout(watchdog);
  }
}

process.exit(await main());
