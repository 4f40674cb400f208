import { BUILDER_ENV, EnvError, envProblem, readEnv, redisKeyPrefix } from '@acg/env';
import type { Hex } from 'viem';

/** One MEV-Boost relay the builder submits block-construction attempts to. */
export interface RelayTarget {
  /** Short name shown in health, e.g. `flashbots`. */
  name: string;
  /** Base URL; `POST {url}/relay/v1/builder/blocks` receives the submissions. */
  url: string;
}

/**
 * The four production relays submitted to by default (docs/decisions.md "Bundle submission"): Flashbots,
 * Ultra Sound, Agnostic, bloXroute (max-profit). Overridden by `RELAY_URLS`.
 */
export const PRODUCTION_RELAYS: readonly RelayTarget[] = [
  { name: 'flashbots', url: 'https://boost-relay.flashbots.net' },
  { name: 'ultrasound', url: 'https://relay.ultrasound.money' },
  { name: 'agnostic', url: 'https://agnostic-relay.net' },
  { name: 'bloxroute', url: 'https://bloxroute.max-profit.blxrbdn.com' },
];

/** Names given to the four local relays of the embedded defaults (same roles as production). */
export const DEV_RELAY_NAMES = ['flashbots', 'ultrasound', 'agnostic', 'bloxroute'] as const;

/**
 * Everything the builder needs (docs/architecture.md "Shape": configuration by environment variables, all optional in
 * development; the `npm start` launcher fills in the embedded defaults).
 */
export interface BuilderConfig {
  /** TCP port (BUILDER_PORT, default 8081; 0 picks a free port). */
  port: number;
  /** Bind address (BUILDER_HOST, default 127.0.0.1). */
  host: string;
  /** Redis URL (REDIS_URL); with `redisClusterNodes` only its user, password and TLS count (default `redis://<first node>`). */
  redisUrl: string;
  /** Redis Cluster startup nodes, `host:port` each (REDIS_CLUSTER_NODES); set, the connection is an ioredis `Cluster`. */
  redisClusterNodes?: string[];
  /** Prefix of every Redis key of this deployment (REDIS_KEY_PREFIX, default `acg:`, `{acg}:` on a cluster, where it needs a hash tag). */
  keyPrefix: string;
  /** Ethereum JSON-RPC node the bundles target (ETHEREUM_RPC_URL); needs `eth_simulateV1`. */
  ethereumRpcUrl: string;
  /** Relays (RELAY_URLS: comma-separated `name=url` or `url`; default {@link PRODUCTION_RELAYS}). */
  relays: RelayTarget[];
  /**
   * Builder BLS12-381 secret key, 32 bytes hex (BUILDER_BLS_SECRET_KEY). Unset: a random key is
   * generated at startup (development only; each process then has its own public key).
   */
  blsSecretKey?: Hex;
  /**
   * secp256k1 private key of the builder's coinbase, 32 bytes hex (BUILDER_COINBASE_PRIVATE_KEY):
   * the fee recipient of the blocks built, which signs the refund transactions and the final payment
   * to the proposer. Unset: a random key is generated at startup (development; the payment is paid
   * out of the block's own fees, so the coinbase needs no balance).
   */
  coinbasePrivateKey?: Hex;
  /**
   * Bid policy (BUILDER_PROPOSER_SHARE_BPS, default 9000 = 90 %): the share, in basis points, of the
   * block's coinbase profit (priority fees and direct transfers, less refunds and the gas of the
   * builder's own transactions) paid to the proposer; the BidTrace `value`.
   */
  proposerShareBps: number;
  /** How often each relay's validator registrations are fetched, ms (BUILDER_REGISTRATIONS_POLL_MS, default 6000; 0: only when a slot needs them). */
  registrationsPollMs: number;
  /** Consensus genesis fork version for DOMAIN_APPLICATION_BUILDER (GENESIS_FORK_VERSION, mainnet `0x00000000`). */
  genesisForkVersion: Hex;
  /**
   * Beacon node API (BEACON_API_URL): its `payload_attributes` events give each proposal's slot,
   * timestamp, `prevRandao`, withdrawals and parent beacon block root, which the block commits to.
   * Unset (the dev chain, which has no beacon chain): dev stand-ins derived from the parent hash,
   * which a real network's relays refuse.
   */
  beaconApiUrl?: string;
  /**
   * Beacon genesis time, UNIX seconds (BEACON_GENESIS_TIME; mainnet 1606824023). BidTrace `slot` =
   * (timestamp - genesis) / 12 when set; unset (dev chain, no beacon chain) the slot is the block number.
   */
  beaconGenesisTime?: number;
  /**
   * Dev chain only (BUILDER_DEV_MINING=1): after a block is submitted, also mine it on the node
   * (anvil: `evm_setAutomine`, `anvil_setCoinbase`, `evm_mine`) so that inclusion is observable.
   * Sealing and submission never depend on it. The embedded defaults turn it on.
   */
  devMining: boolean;
  /**
   * A block-construction attempt also runs every `slotMs` (BUILDER_SLOT_MS; default 12000 = one
   * Ethereum slot; 0 = only on new heads). On the dev chain, an attempt with a bid mines the block.
   */
  slotMs: number;
  /** How often the head is polled, ms (BUILDER_HEAD_POLL_MS, default 500). */
  headPollMs: number;
  /** Token bucket per client IP (docs/spec-notes.md 8): `ratePerSecond` refill, `burst` capacity. */
  rateLimit: { ratePerSecond: number; burst: number };
  /** Take the client IP from the last `X-Forwarded-For` hop (TRUST_PROXY=1), for a builder behind a proxy. */
  trustProxy: boolean;
  /** Largest HTTP request body accepted, bytes (BUILDER_MAX_BODY_BYTES, default 1 MiB); larger is 413. */
  maxBodyBytes: number;
  /** Price per bundle, USDC base units (docs/spec-notes.md 8: 0.10 USD = 100000). */
  bundlePriceBaseUnits: bigint;
  /** pino level (LOG_LEVEL, default info). */
  logLevel: string;
  /** Readable one-line logs for development (LOG_PRETTY=1; default off, on under `npm start` unless LOG_PRETTY=0). */
  logPretty: boolean;
  /** METRICS_TOKEN: when set, `GET /metrics` needs `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

/**
 * The configuration is unusable: `problems` lists every invalid or missing variable at once, one
 * line each naming it (e.g. `BUILDER_PORT=70000: must be an integer port 0..65535`).
 */
export class BuilderConfigError extends EnvError {
  override name = 'BuilderConfigError';
}

/** Values used where the environment is silent (the embedded dev stack fills these in). */
export type BuilderConfigDefaults = Partial<BuilderConfig>;

/**
 * Parses `RELAY_URLS`: comma-separated entries, each `name=url` or a bare `url` (its name is then
 * the host's first label). Throws BuilderConfigError on a malformed URL.
 */
export function parseRelayUrls(value: string): RelayTarget[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf('=');
      const [name, url] = eq > 0 && !entry.slice(0, eq).includes('/') ? [entry.slice(0, eq), entry.slice(eq + 1)] : [undefined, entry];
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new BuilderConfigError([envProblem('RELAY_URLS', value, `"${url}" is not a URL`)]);
      }
      return { name: name ?? parsed.hostname.split('.')[0], url: url.replace(/\/$/, '') };
    });
}

const bool = (v: string | undefined): boolean | undefined => (v === undefined || v === '' ? undefined : ['1', 'true', 'yes'].includes(v.toLowerCase()));

/**
 * Reads the builder configuration from `env` over `defaults`. Every variable of `BUILDER_ENV`
 * (@acg/env) is checked with zod first, then `RELAY_URLS` and the required ones.
 *
 * @throws {BuilderConfigError} Listing every problem at once, one line per variable.
 *
 * @example
 * const config = builderConfigFromEnv(process.env, { redisUrl, ethereumRpcUrl, devMining: true })
 */
export function builderConfigFromEnv(env: NodeJS.ProcessEnv, defaults: BuilderConfigDefaults = {}): BuilderConfig {
  const { values: v, problems } = readEnv(BUILDER_ENV, env);
  const redisClusterNodes = v.REDIS_CLUSTER_NODES ?? (defaults.redisClusterNodes?.length ? defaults.redisClusterNodes : undefined);
  const redisUrl = v.REDIS_URL ?? defaults.redisUrl ?? (redisClusterNodes ? `redis://${redisClusterNodes[0]}` : undefined);
  if (!redisUrl && !env.REDIS_URL) problems.push('REDIS_URL: required (or start the embedded defaults with `npm start`)');
  const keyPrefix = redisKeyPrefix(env, defaults.keyPrefix, redisClusterNodes, problems);
  const ethereumRpcUrl = v.ETHEREUM_RPC_URL ?? defaults.ethereumRpcUrl;
  if (!ethereumRpcUrl && !env.ETHEREUM_RPC_URL) problems.push('ETHEREUM_RPC_URL: required (or start the embedded defaults with `npm start`)');
  let relays = defaults.relays ?? [...PRODUCTION_RELAYS];
  try {
    if (env.RELAY_URLS) relays = parseRelayUrls(env.RELAY_URLS);
  } catch (e) {
    problems.push(...(e as BuilderConfigError).problems);
  }
  if (problems.length > 0 || !redisUrl || !ethereumRpcUrl) throw new BuilderConfigError(problems);
  return {
    port: v.BUILDER_PORT ?? defaults.port ?? 8081,
    host: env.BUILDER_HOST || defaults.host || '127.0.0.1',
    redisUrl,
    ...(redisClusterNodes ? { redisClusterNodes } : {}),
    keyPrefix,
    ethereumRpcUrl,
    relays,
    blsSecretKey: v.BUILDER_BLS_SECRET_KEY ?? defaults.blsSecretKey,
    coinbasePrivateKey: v.BUILDER_COINBASE_PRIVATE_KEY ?? defaults.coinbasePrivateKey,
    proposerShareBps: v.BUILDER_PROPOSER_SHARE_BPS ?? defaults.proposerShareBps ?? 9_000,
    registrationsPollMs: v.BUILDER_REGISTRATIONS_POLL_MS ?? defaults.registrationsPollMs ?? 6_000,
    genesisForkVersion: v.GENESIS_FORK_VERSION ?? defaults.genesisForkVersion ?? '0x00000000',
    beaconGenesisTime: v.BEACON_GENESIS_TIME ?? defaults.beaconGenesisTime,
    beaconApiUrl: v.BEACON_API_URL ?? defaults.beaconApiUrl,
    devMining: bool(env.BUILDER_DEV_MINING) ?? defaults.devMining ?? false,
    slotMs: v.BUILDER_SLOT_MS ?? defaults.slotMs ?? 12_000,
    headPollMs: v.BUILDER_HEAD_POLL_MS ?? defaults.headPollMs ?? 500,
    rateLimit: defaults.rateLimit ?? { ratePerSecond: 10, burst: 20 },
    trustProxy: bool(env.TRUST_PROXY) ?? defaults.trustProxy ?? false,
    maxBodyBytes: v.BUILDER_MAX_BODY_BYTES ?? defaults.maxBodyBytes ?? 1_048_576,
    bundlePriceBaseUnits: defaults.bundlePriceBaseUnits ?? 100_000n,
    logLevel: v.LOG_LEVEL ?? defaults.logLevel ?? 'info',
    logPretty: v.LOG_PRETTY ?? defaults.logPretty ?? false,
    metricsToken: v.METRICS_TOKEN ?? defaults.metricsToken,
  };
}
