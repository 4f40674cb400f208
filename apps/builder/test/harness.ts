import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { devAccount, resolveRedis, startEthereumDevChain, type AnvilInstance, type RedisHandle } from '@acg/devnet';
import { ulid } from 'ulid';
import { createPublicClient, http, keccak256, parseEther, parseGwei, stringToHex, type Hex, type LocalAccount, type PublicClient } from 'viem';
import { startBuilder, type RunningBuilder, type StartBuilderOptions } from '../src/app.js';
import { builderConfigFromEnv, type BuilderConfig, type BuilderConfigDefaults } from '../src/config.js';
import { startDevRelays, type DevRelayOptions, type DevRelays } from '../src/relay/devRelay.js';

/** A fixed builder BLS key for tests (any 32 bytes below the curve order). */
export const TEST_BLS_SECRET_KEY: Hex = `0x${'22'.repeat(32)}`;
/** A fixed builder coinbase key for tests (not one of the dev mnemonic's accounts). */
export const TEST_COINBASE_PRIVATE_KEY: Hex = `0x${'33'.repeat(32)}`;

/** The Ethereum dev chain (chain id 1, fifo), a private Redis, four dev relays and a builder, all started by this test file. */
export interface TestBuilder {
  eth: AnvilInstance;
  redis: RedisHandle;
  relays: DevRelays;
  builder: RunningBuilder;
  config: BuilderConfig;
  client: PublicClient;
  /** The dev chain's current block number, read fresh (no client cache). */
  head(): Promise<bigint>;
  close(): Promise<void>;
}

/**
 * Starts the stack with the bidder loop off (tests call `builder.bidder.attempt()`), dev mining on.
 * The four dev relays serve registrations for the dev chain; `relay` adds options per relay name.
 * `ethereumRpcUrl` (a function of the chain's URL) puts something between the builder and the chain.
 */
export async function startTestBuilder(
  defaults: BuilderConfigDefaults = {},
  opts: {
    relay?: Record<string, Partial<Omit<DevRelayOptions, 'name'>>>;
    ethereumRpcUrl?: (chainUrl: string) => string | Promise<string>;
    /** Run the registrations poller, head watcher and slot timer (default false: tests call `bidder.attempt()`). */
    bidder?: boolean;
    /** Shorter HTTP timeouts for the 408 tests (StartBuilderOptions.http). */
    http?: StartBuilderOptions['http'];
  } = {},
): Promise<TestBuilder> {
  const [eth, redis] = await Promise.all([startEthereumDevChain(), resolveRedis({ preferPrivate: true })]);
  let relays: DevRelays | undefined;
  try {
    relays = await startDevRelays({ ethereumRpcUrl: eth.rpcUrl, relay: opts.relay });
    const config = builderConfigFromEnv(
      {},
      {
        port: 0,
        redisUrl: redis.url,
        keyPrefix: `acg:test:${ulid()}:`,
        ethereumRpcUrl: opts.ethereumRpcUrl ? await opts.ethereumRpcUrl(eth.rpcUrl) : eth.rpcUrl,
        relays: relays.relays.map((r) => ({ name: r.name, url: r.url })),
        blsSecretKey: TEST_BLS_SECRET_KEY,
        coinbasePrivateKey: TEST_COINBASE_PRIVATE_KEY,
        devMining: true,
        slotMs: 0,
        headPollMs: 0,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        ...defaults,
      },
    );
    const builder = await startBuilder(config, { bidder: opts.bidder ?? false, http: opts.http });
    const client = createPublicClient({ transport: http(eth.rpcUrl), cacheTime: 0 }) as PublicClient;
    return {
      eth,
      redis,
      relays: relays!,
      builder,
      config,
      client,
      head: () => client.getBlockNumber({ cacheTime: 0 }),
      async close() {
        await builder.close();
        await Promise.allSettled([relays!.close(), eth.stop(), redis.stop()]);
      },
    };
  } catch (e) {
    await Promise.allSettled([relays?.close(), eth.stop(), redis.stop()]);
    throw e;
  }
}

let nextIp = 2;
/** A fresh loopback source address (127.0.0.N), so each test has its own rate-limit bucket. */
export function freshIp(): string {
  const n = nextIp++;
  return `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;
}

/** An HTTP response as the tests read it. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** The {@link Reply} of a finished response whose body arrived as `chunks`: `json` is undefined when the text is empty or not JSON. */
function replyOf(res: IncomingMessage, chunks: Buffer[]): Reply {
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

/** POSTs `body` bytes to `url` from `localAddress` (node:http, so the source IP is chosen). */
export function post(url: string, body: string | Buffer, headers: Record<string, string> = {}, localAddress = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(replyOf(res, chunks)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Options of {@link httpRequest}. */
export interface HttpRequestOptions {
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  localAddress?: string;
  /** Rejects with `no answer within … ms` after this long: detects a hang, not a speed limit. */
  timeoutMs?: number;
}

/**
 * Sends one HTTP request with any method (CONNECT too) on a fresh connection and resolves with the
 * response; rejects when the server drops the connection or does not answer within `timeoutMs`.
 */
export function httpRequest(url: string, opts: HttpRequestOptions = {}): Promise<Reply> {
  const { method = 'POST', body, headers = {}, localAddress = '127.0.0.1', timeoutMs = 10_000 } = opts;
  return new Promise((resolve, reject) => {
    const read = (res: IncomingMessage, after?: () => void) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        after?.();
        resolve(replyOf(res, chunks));
      });
    };
    const req = request(url, { method, localAddress, agent: false, headers }, (res) => read(res));
    // a CONNECT answer arrives as 'connect' (any status), with the rest of the socket handed over
    req.on('connect', (res, socket) => {
      clearTimeout(timer);
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined });
      socket.destroy();
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${method} ${url}`));
    }, timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(body);
  });
}

/** The Flashbots signature header value of `body` by `account` (viem). */
export async function flashbotsSignature(account: LocalAccount, body: string): Promise<string> {
  return `${account.address}:${await account.signMessage({ message: keccak256(stringToHex(body)) })}`;
}

/** Signs a plain ETH transfer (EIP-1559, chain id 1) from dev account `from`. */
export async function transfer(
  client: PublicClient,
  from: number,
  opts: { to?: `0x${string}`; value?: bigint; nonce?: number; tipGwei?: string; chainId?: number; data?: Hex; gas?: bigint } = {},
): Promise<Hex> {
  const account = devAccount(from);
  const nonce = opts.nonce ?? (await client.getTransactionCount({ address: account.address, blockTag: 'pending' }));
  return account.signTransaction({
    type: 'eip1559',
    chainId: opts.chainId ?? 1,
    nonce,
    to: opts.to ?? devAccount(9).address,
    value: opts.value ?? parseEther('0.001'),
    data: opts.data,
    gas: opts.gas ?? 21_000n,
    maxFeePerGas: parseGwei('50'),
    maxPriorityFeePerGas: parseGwei(opts.tipGwei ?? '2'),
  });
}

/** `n` as a JSON-RPC quantity: `0x`-prefixed lower-case hex without leading zeros (e.g. a block number). */
export const quantity = (n: bigint) => `0x${n.toString(16)}`;

/** A JSON-RPC 2.0 request body (string): `{ jsonrpc: '2.0', id, method, params }`. */
export const rpcBody = (method: string, params: unknown[], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A JSON-RPC eth_sendBundle body. */
export function sendBundleBody(txs: Hex[], blockNumber: bigint, extra: Record<string, unknown> = {}, id: number | string | null = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_sendBundle', params: [{ txs, blockNumber: `0x${blockNumber.toString(16)}`, ...extra }] });
}

/** A JSON-RPC proxy in front of a node: what it forwarded and what it refused. */
export interface RpcProxy {
  url: string;
  /** Every method called through it, in order. */
  calls: string[];
  /** The methods it refused. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * Starts a small JSON-RPC proxy on 127.0.0.1 that forwards to `target` and answers the methods
 * matching `refuse` with a JSON-RPC error -32601 (method not found) instead, as a production node
 * without anvil's methods would. Handles single calls and batches.
 */
export async function startRpcProxy(target: string, refuse: RegExp): Promise<RpcProxy> {
  const calls: string[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      const one = async (call: { id?: unknown; method?: string }) => {
        const method = String(call?.method);
        calls.push(method);
        if (refuse.test(method)) {
          refused.push(method);
          return { jsonrpc: '2.0', id: call?.id ?? null, error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
        }
        const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
        return upstream.json();
      };
      try {
        reply(200, Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body as { id?: unknown; method?: string }));
      } catch {
        reply(502, { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'upstream failed' } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Polls `check` every 50 ms until it returns a value other than undefined; rejects after `timeoutMs` (detects a hang, not a speed limit). */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
