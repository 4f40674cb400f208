import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectRedis, RedisKeys } from '@acg/redis';
import { BuilderMetrics, createLogger, createRegistry, HttpMetrics, type Registry } from '@acg/observability';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Bidder } from './bidder.js';
import { BeaconPayloadAttributes } from './block/beaconAttributes.js';
import { checkSealer, type SealerStatus } from './block/seal.js';
import type { BuilderConfig } from './config.js';
import { BUILDER_HEADERS_TIMEOUT_MS, BUILDER_REQUEST_TIMEOUT_MS, createRpcListener, refuseConnect } from './http/server.js';
import { BuilderStats, BundleIntake } from '@acg/bundles';
import { secp256k1Backend } from '@acg/secp256k1';
import { TokenBucket } from './ratelimit.js';
import { TrackingBidder } from './tracking.js';
import { blsPublicKey, computeBuilderDomain, randomBlsSecretKey } from './relay/signing.js';
import { ValidatorRegistrations } from './relay/registrations.js';
import { RelaySubmitter } from './relay/submitter.js';
import { createRpcServer } from './rpc/server.js';

/** A running builder: `url` ({builder_url}), `rpcUrl` (`url` + `/rpc`), its parts, and `close()`. */
export interface RunningBuilder {
  url: string;
  rpcUrl: string;
  server: Server;
  config: BuilderConfig;
  /** The builder's BLS public key (48 bytes hex), as in health and every BidTrace. */
  blsPublicKey: Hex;
  /** The builder's coinbase (fee recipient of its blocks; it pays refunds and the proposer). */
  coinbase: Address;
  /** What the startup check found: whether the node can seal blocks (no bid is submitted while it cannot). */
  sealer: SealerStatus;
  /** The relays' validator registrations as this process last fetched them. */
  registrations: ValidatorRegistrations;
  /** The beacon node's payload attributes (BEACON_API_URL), when configured. */
  beacon?: BeaconPayloadAttributes;
  intake: BundleIntake;
  bidder: Bidder;
  redis: Redis;
  keys: RedisKeys;
  client: PublicClient;
  /** This builder's Prometheus registry (`GET /metrics` on the builder port) and its builder counters. */
  metrics: { registry: Registry; builder: BuilderMetrics };
  close(): Promise<void>;
}

/** Options of {@link startBuilder}. */
export interface StartBuilderOptions {
  log?: Logger;
  /** Run the head watcher and slot timer (default true). Tests turn it off and call `bidder.attempt()`. */
  bidder?: boolean;
  /**
   * HTTP timeouts, ms: the request head within `headersTimeoutMs` (default {@link BUILDER_HEADERS_TIMEOUT_MS}),
   * the whole request within `requestTimeoutMs` (default {@link BUILDER_REQUEST_TIMEOUT_MS}), else 408.
   * Tests shorten them; the defaults are the documented ones (apps/builder README "Timeouts").
   */
  http?: { headersTimeoutMs?: number; requestTimeoutMs?: number };
}

/**
 * Starts the bundle-submission host ({builder_url}, docs/spec-notes.md 4): connects Redis, checks the Ethereum
 * node and whether it can seal blocks (`checkSealer`: a node that cannot is logged as an error and
 * reported in health, and then no bid is submitted and `builder.send_bundle` is not LIVE), registers
 * the builder (BLS public key, relays, sealer) in the live health counters, listens with
 * `POST /rpc`, and starts the registrations poller and the bidder. Resolves once it accepts requests.
 *
 * @throws {Error} when Redis or the node does not answer, or the port is taken.
 *
 * @example
 * const builder = await startBuilder(builderConfigFromEnv(process.env))
 * console.log(builder.rpcUrl)
 */
export async function startBuilder(config: BuilderConfig, opts: StartBuilderOptions = {}): Promise<RunningBuilder> {
  const log = opts.log ?? createLogger({ service: 'builder', level: config.logLevel, pretty: config.logPretty });
  const registry = createRegistry();
  const metrics = { registry, http: new HttpMetrics(registry), builder: new BuilderMetrics(registry), token: config.metricsToken };
  const redis = connectRedis({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, name: 'builder', autoPipelining: true });
  try {
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    throw e;
  }
  const keys = new RedisKeys(config.keyPrefix);
  const client = createPublicClient({ transport: http(config.ethereumRpcUrl, { timeout: 10_000, retryCount: 1 }) }) as PublicClient;
  try {
    await client.getChainId();
  } catch {
    redis.disconnect();
    throw new Error(`builder: the Ethereum node at ETHEREUM_RPC_URL does not answer eth_chainId`);
  }
  let secretKey = config.blsSecretKey;
  if (!secretKey) {
    secretKey = randomBlsSecretKey();
    log.warn('BUILDER_BLS_SECRET_KEY is not set: using a random development BLS key for this process');
  }
  const signer = { secretKey, publicKey: blsPublicKey(secretKey), domain: computeBuilderDomain(config.genesisForkVersion) };
  let coinbaseKey = config.coinbasePrivateKey;
  if (!coinbaseKey) {
    coinbaseKey = generatePrivateKey();
    log.warn('BUILDER_COINBASE_PRIVATE_KEY is not set: using a random development coinbase key for this process');
  }
  const coinbase = privateKeyToAccount(coinbaseKey);
  const sealer = await checkSealer(client);
  if (sealer.ok) log.info({ client: sealer.client, zero_state_root: sealer.zeroStateRoot }, 'the node can seal blocks (eth_simulateV1 with validation)');
  else
    log.error({ client: sealer.client, reason: sealer.reason }, 'the node at ETHEREUM_RPC_URL cannot seal blocks: bundles are accepted, no block is submitted');
  const stats = new BuilderStats(redis, keys);
  await stats.register(signer.publicKey, config.relays, {
    ok: sealer.ok,
    client: sealer.client,
    zero_state_root: sealer.zeroStateRoot,
    ...(sealer.reason ? { reason: sealer.reason } : {}),
    checked_at: sealer.checked_at,
  });

  const intake = new BundleIntake({ redis, keys, client, bundlePriceBaseUnits: config.bundlePriceBaseUnits });
  if (secp256k1Backend() === 'noble')
    log.warn('the native secp256k1 binding did not load: signatures are recovered in pure JS (@noble/curves), about 25 times slower');
  const bucket = new TokenBucket(redis, keys, { scope: 'builder:rpc', ...config.rateLimit });
  const rpc = createRpcServer({ intake, client, feeRecipient: coinbase.address, blsPublicKey: signer.publicKey, log, metrics: metrics.builder });
  // slow clients are bounded: the head within 10 s, the whole request within 30 s, else 408 (apps/builder README)
  const server = createServer(
    {
      headersTimeout: opts.http?.headersTimeoutMs ?? BUILDER_HEADERS_TIMEOUT_MS,
      requestTimeout: opts.http?.requestTimeoutMs ?? BUILDER_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    },
    createRpcListener({ server: rpc, bucket, log, maxBodyBytes: config.maxBodyBytes, trustProxy: config.trustProxy, metrics }),
  );
  server.keepAliveTimeout = 65_000;
  server.on('connect', refuseConnect);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  }).catch((e) => {
    redis.disconnect();
    throw e;
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;

  const registrations = new ValidatorRegistrations({ relays: config.relays, log: log.child({ module: 'registrations' }) });
  const beacon = config.beaconApiUrl ? new BeaconPayloadAttributes({ beaconUrl: config.beaconApiUrl, log: log.child({ module: 'beacon' }) }) : undefined;
  if (!beacon && sealer.ok && !sealer.zeroStateRoot)
    log.warn('BEACON_API_URL is not set: blocks carry the dev chain’s stand-in prevRandao and beacon root, which a real network’s relays refuse');
  const bidder = new TrackingBidder({
    client,
    pool: intake.pool,
    intake,
    bundleStats: intake.pool.stats,
    submitter: new RelaySubmitter({ relays: config.relays, stats, log: log.child({ module: 'relays' }), metrics: metrics.builder }),
    registrations,
    signer,
    coinbase,
    sealer: { ok: sealer.ok, reason: sealer.reason, acceptZeroStateRoot: sealer.zeroStateRoot },
    proposerShareBps: config.proposerShareBps,
    devMining: config.devMining,
    slotMs: config.slotMs,
    headPollMs: config.headPollMs,
    beaconGenesisTime: config.beaconGenesisTime,
    beacon,
    log: log.child({ module: 'bidder' }),
    metrics: metrics.builder,
  });
  beacon?.start();
  if (opts.bidder ?? true) {
    registrations.start(config.registrationsPollMs);
    bidder.start();
  }

  return {
    url,
    rpcUrl: `${url}/rpc`,
    server,
    config,
    blsPublicKey: signer.publicKey,
    coinbase: coinbase.address,
    sealer,
    registrations,
    beacon,
    intake,
    bidder,
    redis,
    keys,
    client,
    metrics: { registry, builder: metrics.builder },
    async close() {
      registrations.stop();
      beacon?.stop();
      await bidder.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      redis.disconnect();
    },
  };
}
