import type { Chain } from 'viem';
import { base } from 'viem/chains';
import { EnvError, GATEWAY_ENV, readEnv, redisKeyPrefix } from '@acg/env';
import { BASE_USDC_ADDRESS, type ChainName } from '@acg/schemas';
import { webhookPolicyFromEnv, type UrlPolicy } from '@acg/net-guard';

/** Chains a capability may read, by spec chain name (schema `ChainName`). */
export type { ChainName };

/**
 * The service configuration shared by the gateway and the worker, resolved before either starts
 * (docs/architecture.md "Shape": configuration by environment variables, all optional in development; the `npm start`
 * launcher fills in the embedded defaults). Both processes read the same variables so that they
 * agree on Redis, key prefix, payment terms and chain URLs.
 */
export interface GatewayConfig {
  /** TCP port (GATEWAY_PORT, default 8080; 0 picks a free port). */
  port: number;
  /** Host to bind (GATEWAY_HOST, default 127.0.0.1). */
  host: string;
  /** Public base URL used in documents and PaymentRequired.resource (PUBLIC_BASE_URL, default http://host:port). */
  publicBaseUrl?: string;
  /**
   * Web origins allowed on `/mcp` and on requests carrying a bearer token, besides the origin of
   * the public base URL (ALLOWED_ORIGINS, comma-separated `scheme://host[:port]`; default none).
   * A request from any other `Origin` is refused with 403 (docs/configuration.md).
   */
  allowedOrigins?: string[];
  /** Public URL of the bundle-submission host (BUILDER_URL, default http://127.0.0.1:BUILDER_PORT). */
  builderUrl: string;
  /**
   * Redis URL (REDIS_URL). With {@link redisClusterNodes} only its user, password and TLS
   * (`rediss://`) are used; unset there, it defaults to `redis://<first cluster node>`.
   */
  redisUrl: string;
  /**
   * Redis Cluster startup nodes, `host:port` each (REDIS_CLUSTER_NODES, comma-separated). Set:
   * every connection of the process is an ioredis `Cluster` (`connectRedis` of @acg/redis) and
   * `keyPrefix` must carry a hash tag (docs/operating.md).
   */
  redisClusterNodes?: string[];
  /**
   * Prefix of every Redis key and BullMQ queue of this deployment (REDIS_KEY_PREFIX, default
   * `acg:`; `{acg}:` with REDIS_CLUSTER_NODES, where it must contain a hash tag `{...}` so that
   * all keys of the deployment share one cluster slot).
   */
  keyPrefix: string;
  payment: {
    /** JSON-RPC URL of the payment chain (PAYMENT_RPC_URL). */
    rpcUrl: string;
    /** viem chain of the payment network (Base, id 8453). */
    chain: Chain;
    /** USDC contract (PAYMENT_ASSET, default Base USDC). */
    asset: `0x${string}`;
    /** Treasury receiving payments (PAY_TO_ADDRESS). */
    payTo: `0x${string}`;
    /** Key of the in-process facilitator, pays settlement gas (FACILITATOR_PRIVATE_KEY); unused when facilitatorUrl is set. */
    facilitatorPrivateKey?: `0x${string}`;
    /** External x402 facilitator (FACILITATOR_URL). */
    facilitatorUrl?: string;
    /** Treasury key that sends refunds (TREASURY_PRIVATE_KEY); without it refunds stay pending. */
    treasuryPrivateKey?: `0x${string}`;
    /**
     * Bound of one JSON-RPC request to the payment chain, milliseconds (PAYMENT_RPC_TIMEOUT_MS,
     * default 10 000). An unreachable node turns a paid call into a 503 within about twice this.
     */
    rpcTimeoutMs: number;
    /**
     * When an outgoing transfer (settlement, refund, payout) is final, so no longer watched for
     * reorgs (PAYMENT_FINALITY: `finalized` (default), `safe`, or a depth in blocks under the head;
     * docs/decisions.md "Confirmations and reorgs").
     */
    finality: { tag: 'safe' | 'finalized' } | { depth: number };
    /**
     * The x402 schemes the paywall accepts (PAYMENT_SCHEMES, default `exact` only; `exact` always
     * first): `batch-settlement` adds vouchers over a channel beside `exact` on fixed-price
     * executions (docs/decisions.md "batch-settlement").
     */
    schemes: readonly ('exact' | 'batch-settlement')[];
    /**
     * The Permit2 window of a job paid with x402 `upto`, seconds (JOB_UPTO_MAX_TIMEOUT_SECONDS, default
     * 3600): the `maxTimeoutSeconds` of the jobs 402's `upto` entry, so the longest an `upto` job may
     * run (docs/decisions.md "Payment schemes", jobs).
     */
    jobUptoMaxTimeoutSeconds: number;
  };
  /** RPC URLs of the chains capabilities read (ETHEREUM_RPC_URL, BASE_RPC_URL, ARBITRUM_RPC_URL). */
  chains: Partial<Record<ChainName, string>>;
  /** Requests per second per client IP on the gateway's endpoints, discovery documents excepted (GATEWAY_RATE_LIMIT, default 100; 0 disables). */
  rateLimitPerSecond: number;
  /** Take the client IP from the last X-Forwarded-For hop (TRUST_PROXY=1), behind a load balancer. */
  trustProxy: boolean;
  /** pino level (LOG_LEVEL, default info). */
  logLevel: string;
  /** Readable one-line logs for development (LOG_PRETTY=1; default off, on under `npm start` unless LOG_PRETTY=0). */
  logPretty: boolean;
  /**
   * Operations (docs/decisions.md "Operations"): `token` (METRICS_TOKEN) makes every `/metrics` need
   * `Authorization: Bearer <token>`; `workerPort` (WORKER_METRICS_PORT, unset = no listener) and
   * `workerHost` (WORKER_METRICS_HOST, default 127.0.0.1) are where a worker process serves its
   * `GET /metrics`. The gateway serves `/metrics` on its own port.
   */
  metrics: { token?: string; workerPort?: number; workerHost: string };
  /** Seconds between capability probes (PROBE_INTERVAL_SECONDS, default 60; 0 disables). */
  probeIntervalSeconds: number;
  /**
   * Wallet monitor routes: `webhookPolicy` (WEBHOOK_POLICY, else NODE_ENV: production → https and
   * public addresses only; development/test → also http to loopback; unset → production) and the
   * delivery retry schedule used when dead letters are replayed (default: docs/decisions.md "Wallet monitor").
   */
  /**
   * Receipt keys (docs/decisions.md "Proofs and receipts"): `jwsKey` (RECEIPT_JWS_KEY, Ed25519 seed) signs
   * execution proofs, `signingKey` (RECEIPT_SIGNING_KEY, secp256k1) signs x402 offers and receipts;
   * `retiredJwks` (RECEIPT_RETIRED_JWKS, a JSON array of public JWKs) stay listed in the JWKS after a
   * rotation. Unset: no proofs (the catalog's `proof` stays null). `npm start` sets dev keys.
   */
  receipts?: { jwsKey: `0x${string}`; signingKey: `0x${string}`; retiredJwks?: Record<string, unknown>[] };
  walletMonitor?: {
    webhookPolicy: UrlPolicy;
    retryScheduleMs?: readonly number[];
    /** WEBHOOK_SECRET_KEY: 32 bytes (64 hex or base64) encrypting webhook signing secrets at rest; shared by gateway and workers */
    webhookSecretKey?: string;
  };
  /** Providers' money (docs/decisions.md "Providers": money and disputes; @acg/provider-ledger). */
  providers: ProvidersConfig;
  /** x402 `batch-settlement` channels: the worker's claims, settlement and refunds (packages/channels README). */
  channels: ChannelsConfig;
  /** The store's durability (docs/durability.md): the start check and `WAIT` after a paid call's money writes. */
  store: StoreConfig;
  /**
   * Bearer token of the admin routes (ADMIN_TOKEN, at least 16 characters), e.g.
   * `POST /api/v1/disputes/{id}/resolve`; unset: those routes answer 404.
   */
  adminToken?: string;
}

/**
 * The store's durability (docs/durability.md). Production runs Redis with `appendonly yes` and
 * `appendfsync always`; the gateway reads the setting at start and refuses to take payments on
 * one that can lose acknowledged writes unless `allowNonDurable`, or on the dev defaults.
 */
export interface StoreConfig {
  /**
   * `npm start` on its embedded payment chain: the Redis may be a shared one that is not ours to
   * configure, so a non-durable setting is only told in the start banner. Set by the launcher.
   */
  devDefaults: boolean;
  /** ALLOW_NON_DURABLE_STORE: start and take payments anyway, with a warning (default false). */
  allowNonDurable: boolean;
  /** REDIS_WAIT_REPLICAS: replicas that acknowledge a paid call's money writes before its answer (`WAIT`; default 0: none). */
  waitReplicas: number;
  /** REDIS_WAIT_TIMEOUT_MS: longest `WAIT`, ms (default 500). */
  waitTimeoutMs: number;
}

/** Providers' money: fee, dispute window, payouts, dispute auto-resolution (docs/decisions.md "Providers"). */
export interface ProvidersConfig {
  /** The gateway's fee in basis points of a provider capability's price, rounded down (PROVIDER_FEE_BPS, 0..10000, default 1000 = 10 %). */
  feeBps: number;
  /** How long a provider's share stays held and disputable, seconds (PROVIDER_DISPUTE_WINDOW_SECONDS, default 86400). */
  disputeWindowSeconds: number;
  /** Seconds between payout passes (PROVIDER_PAYOUT_INTERVAL_SECONDS, default 3600). */
  payoutIntervalSeconds: number;
  /**
   * Smallest payout: integer USDC base units as a decimal string (PROVIDER_PAYOUT_MIN_USDC as a
   * decimal, default 1.00 = `"1000000"`). A string, not a bigint, so the configuration stays JSON.
   */
  payoutMinBaseUnits: string;
  /** An open dispute older than this is resolved automatically, seconds (PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS, default 604800 = 7 days). */
  disputeAutoResolveSeconds: number;
  /** How long a quote's price holds, seconds (QUOTE_TTL_SECONDS, default 60; apps/gateway README "Quotes"). */
  quoteTtlSeconds: number;
}

/** The worker's pass over x402 `batch-settlement` channels (packages/channels README "Claims and settlement"). */
export interface ChannelsConfig {
  /** Seconds between passes (CHANNEL_CHECK_INTERVAL_SECONDS, default 5). */
  checkIntervalSeconds: number;
  /** Unclaimed amount of a channel that triggers its claim: integer USDC base units as a decimal string (CHANNEL_CLAIM_THRESHOLD_USDC as a decimal, default 1.00 = `"1000000"`). */
  claimThresholdBaseUnits: string;
  /** Every unclaimed channel is claimed at least this often, seconds (CHANNEL_CLAIM_INTERVAL_SECONDS, default 3600). */
  claimIntervalSeconds: number;
  /** Claim a channel whose pending withdrawal can be finalized within this many seconds (CHANNEL_WITHDRAW_MARGIN_SECONDS, default 600). */
  withdrawMarginSeconds: number;
  /** Refund cooperatively a channel idle this long, seconds; 0 never (CHANNEL_REFUND_IDLE_SECONDS, default 86400). */
  refundIdleSeconds: number;
}

/** {@link ChannelsConfig} defaults (the same as `CHANNEL_SETTLEMENT_DEFAULTS` of @acg/channels). */
export const CHANNELS_DEFAULTS: ChannelsConfig = {
  checkIntervalSeconds: 5,
  claimThresholdBaseUnits: '1000000',
  claimIntervalSeconds: 3600,
  withdrawMarginSeconds: 600,
  refundIdleSeconds: 86_400,
};

/** {@link ProvidersConfig} defaults (docs/decisions.md "Providers"). */
export const PROVIDERS_DEFAULTS: ProvidersConfig = {
  feeBps: 1000,
  disputeWindowSeconds: 86_400,
  payoutIntervalSeconds: 3600,
  payoutMinBaseUnits: '1000000',
  disputeAutoResolveSeconds: 604_800,
  quoteTtlSeconds: 60,
};

export const BASE_USDC = BASE_USDC_ADDRESS;

/** The payment chain as viem sees it: Base (8453), reached at `rpcUrl`. */
export function paymentChain(rpcUrl: string, chainId = 8453): Chain {
  return { ...base, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } } as Chain;
}

/** Values used where the environment is silent (the embedded dev stack fills these in). */
export type ConfigDefaults = Partial<Omit<GatewayConfig, 'payment' | 'providers' | 'store'>> & {
  payment?: Partial<GatewayConfig['payment']>;
  providers?: Partial<ProvidersConfig>;
  store?: Partial<StoreConfig>;
};

/**
 * The configuration is unusable: `problems` lists every invalid or missing variable at once, one
 * line each naming it (e.g. `GATEWAY_PORT=70000: must be an integer port 0..65535`).
 */
export class ConfigError extends EnvError {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from `env`, over `defaults` (the embedded dev stack's values). Every
 * variable of `GATEWAY_ENV` (@acg/env) is checked with zod first (ports, URLs, hex keys and
 * addresses, numbers ≥ 0, `LOG_LEVEL`), then the required ones.
 *
 * @throws {ConfigError} Listing every problem at once, one line per variable.
 */
export function configFromEnv(env: NodeJS.ProcessEnv, defaults: ConfigDefaults = {}): GatewayConfig {
  const { values: v, problems } = readEnv(GATEWAY_ENV, env);
  const port = v.GATEWAY_PORT ?? defaults.port ?? 8080;
  const builderPort = v.BUILDER_PORT ?? 8081;
  const rpcUrl = v.PAYMENT_RPC_URL ?? defaults.payment?.rpcUrl;
  if (!rpcUrl && !env.PAYMENT_RPC_URL) problems.push('PAYMENT_RPC_URL: required (or start the embedded defaults with `npm start`)');
  const redisClusterNodes = v.REDIS_CLUSTER_NODES ?? (defaults.redisClusterNodes?.length ? defaults.redisClusterNodes : undefined);
  const redisUrl = v.REDIS_URL ?? defaults.redisUrl ?? (redisClusterNodes ? `redis://${redisClusterNodes[0]}` : undefined);
  if (!redisUrl && !env.REDIS_URL) problems.push('REDIS_URL: required (or start the embedded defaults with `npm start`)');
  const keyPrefix = redisKeyPrefix(env, defaults.keyPrefix, redisClusterNodes, problems);
  const payTo = v.PAY_TO_ADDRESS ?? defaults.payment?.payTo;
  if (!payTo && !env.PAY_TO_ADDRESS) problems.push('PAY_TO_ADDRESS: required');
  const facilitatorUrl = v.FACILITATOR_URL ?? defaults.payment?.facilitatorUrl;
  const facilitatorPrivateKey = v.FACILITATOR_PRIVATE_KEY ?? defaults.payment?.facilitatorPrivateKey;
  if (!facilitatorUrl && !facilitatorPrivateKey && !env.FACILITATOR_URL && !env.FACILITATOR_PRIVATE_KEY) {
    problems.push('FACILITATOR_PRIVATE_KEY or FACILITATOR_URL: required');
  }
  let webhookPolicy: UrlPolicy | undefined;
  try {
    webhookPolicy = webhookPolicyFromEnv(env, defaults.walletMonitor?.webhookPolicy);
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (problems.length > 0 || !rpcUrl || !redisUrl || !payTo || !webhookPolicy) throw new ConfigError(problems);
  const host = env.GATEWAY_HOST || defaults.host || '127.0.0.1';
  return {
    port,
    host,
    publicBaseUrl: v.PUBLIC_BASE_URL ?? defaults.publicBaseUrl,
    allowedOrigins: v.ALLOWED_ORIGINS ?? defaults.allowedOrigins ?? [],
    builderUrl: v.BUILDER_URL ?? defaults.builderUrl ?? `http://127.0.0.1:${builderPort}`,
    redisUrl,
    ...(redisClusterNodes ? { redisClusterNodes } : {}),
    keyPrefix,
    payment: {
      rpcUrl,
      chain: paymentChain(rpcUrl),
      asset: v.PAYMENT_ASSET ?? defaults.payment?.asset ?? BASE_USDC,
      payTo,
      facilitatorPrivateKey,
      facilitatorUrl,
      treasuryPrivateKey: v.TREASURY_PRIVATE_KEY ?? defaults.payment?.treasuryPrivateKey,
      rpcTimeoutMs: v.PAYMENT_RPC_TIMEOUT_MS ?? defaults.payment?.rpcTimeoutMs ?? 10_000,
      finality: v.PAYMENT_FINALITY ?? defaults.payment?.finality ?? { tag: 'finalized' },
      schemes: v.PAYMENT_SCHEMES ?? defaults.payment?.schemes ?? ['exact'],
      jobUptoMaxTimeoutSeconds: v.JOB_UPTO_MAX_TIMEOUT_SECONDS ?? defaults.payment?.jobUptoMaxTimeoutSeconds ?? 3600,
    },
    chains: {
      base: v.BASE_RPC_URL ?? defaults.chains?.base ?? rpcUrl,
      ...((v.ETHEREUM_RPC_URL ?? defaults.chains?.ethereum) ? { ethereum: v.ETHEREUM_RPC_URL ?? defaults.chains?.ethereum } : {}),
      ...((v.ARBITRUM_RPC_URL ?? defaults.chains?.arbitrum) ? { arbitrum: v.ARBITRUM_RPC_URL ?? defaults.chains?.arbitrum } : {}),
    },
    rateLimitPerSecond: v.GATEWAY_RATE_LIMIT ?? defaults.rateLimitPerSecond ?? 100,
    trustProxy: env.TRUST_PROXY === '1' || env.TRUST_PROXY === 'true' || (env.TRUST_PROXY === undefined && (defaults.trustProxy ?? false)),
    logLevel: v.LOG_LEVEL ?? defaults.logLevel ?? 'info',
    logPretty: v.LOG_PRETTY ?? defaults.logPretty ?? false,
    metrics: {
      token: v.METRICS_TOKEN ?? defaults.metrics?.token,
      workerPort: v.WORKER_METRICS_PORT ?? defaults.metrics?.workerPort,
      workerHost: env.WORKER_METRICS_HOST || defaults.metrics?.workerHost || '127.0.0.1',
    },
    probeIntervalSeconds: v.PROBE_INTERVAL_SECONDS ?? defaults.probeIntervalSeconds ?? 60,
    ...receiptsOf(v.RECEIPT_JWS_KEY, v.RECEIPT_SIGNING_KEY, env.RECEIPT_RETIRED_JWKS, defaults.receipts),
    walletMonitor: {
      ...defaults.walletMonitor,
      webhookPolicy,
      webhookSecretKey: env.WEBHOOK_SECRET_KEY ?? defaults.walletMonitor?.webhookSecretKey,
    },
    providers: {
      feeBps: v.PROVIDER_FEE_BPS ?? defaults.providers?.feeBps ?? PROVIDERS_DEFAULTS.feeBps,
      disputeWindowSeconds: v.PROVIDER_DISPUTE_WINDOW_SECONDS ?? defaults.providers?.disputeWindowSeconds ?? PROVIDERS_DEFAULTS.disputeWindowSeconds,
      payoutIntervalSeconds: v.PROVIDER_PAYOUT_INTERVAL_SECONDS ?? defaults.providers?.payoutIntervalSeconds ?? PROVIDERS_DEFAULTS.payoutIntervalSeconds,
      payoutMinBaseUnits: v.PROVIDER_PAYOUT_MIN_USDC?.toString() ?? defaults.providers?.payoutMinBaseUnits ?? PROVIDERS_DEFAULTS.payoutMinBaseUnits,
      disputeAutoResolveSeconds:
        v.PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS ?? defaults.providers?.disputeAutoResolveSeconds ?? PROVIDERS_DEFAULTS.disputeAutoResolveSeconds,
      quoteTtlSeconds: v.QUOTE_TTL_SECONDS ?? defaults.providers?.quoteTtlSeconds ?? PROVIDERS_DEFAULTS.quoteTtlSeconds,
    },
    channels: {
      checkIntervalSeconds: v.CHANNEL_CHECK_INTERVAL_SECONDS ?? defaults.channels?.checkIntervalSeconds ?? CHANNELS_DEFAULTS.checkIntervalSeconds,
      claimThresholdBaseUnits:
        v.CHANNEL_CLAIM_THRESHOLD_USDC?.toString() ?? defaults.channels?.claimThresholdBaseUnits ?? CHANNELS_DEFAULTS.claimThresholdBaseUnits,
      claimIntervalSeconds: v.CHANNEL_CLAIM_INTERVAL_SECONDS ?? defaults.channels?.claimIntervalSeconds ?? CHANNELS_DEFAULTS.claimIntervalSeconds,
      withdrawMarginSeconds: v.CHANNEL_WITHDRAW_MARGIN_SECONDS ?? defaults.channels?.withdrawMarginSeconds ?? CHANNELS_DEFAULTS.withdrawMarginSeconds,
      refundIdleSeconds: v.CHANNEL_REFUND_IDLE_SECONDS ?? defaults.channels?.refundIdleSeconds ?? CHANNELS_DEFAULTS.refundIdleSeconds,
    },
    store: {
      devDefaults: defaults.store?.devDefaults ?? false,
      allowNonDurable: v.ALLOW_NON_DURABLE_STORE ?? defaults.store?.allowNonDurable ?? false,
      waitReplicas: v.REDIS_WAIT_REPLICAS ?? defaults.store?.waitReplicas ?? 0,
      waitTimeoutMs: v.REDIS_WAIT_TIMEOUT_MS ?? defaults.store?.waitTimeoutMs ?? 500,
    },
    adminToken: v.ADMIN_TOKEN ?? defaults.adminToken,
  };
}

/**
 * The receipt keys from RECEIPT_JWS_KEY and RECEIPT_SIGNING_KEY (both, or neither: one alone is a
 * {@link ConfigError}) and RECEIPT_RETIRED_JWKS (JSON array of public JWKs), over `defaults`.
 */
function receiptsOf(
  jwsKey: `0x${string}` | undefined,
  signingKey: `0x${string}` | undefined,
  retired: string | undefined,
  defaults: GatewayConfig['receipts'],
): Pick<GatewayConfig, 'receipts'> {
  if (!jwsKey && !signingKey) return defaults ? { receipts: defaults } : {};
  if (!jwsKey || !signingKey) throw new ConfigError(['RECEIPT_JWS_KEY and RECEIPT_SIGNING_KEY: set both or neither']);
  let retiredJwks: Record<string, unknown>[] | undefined;
  if (retired) {
    try {
      const parsed: unknown = JSON.parse(retired);
      if (!Array.isArray(parsed) || parsed.some((k) => typeof k !== 'object' || k === null || 'd' in k || typeof (k as { kid?: unknown }).kid !== 'string'))
        throw new Error();
      retiredJwks = parsed as Record<string, unknown>[];
    } catch {
      throw new ConfigError(['RECEIPT_RETIRED_JWKS: must be a JSON array of public JWKs, each with a kid and no private "d"']);
    }
  }
  return { receipts: { jwsKey, signingKey, ...(retiredJwks ? { retiredJwks } : {}) } };
}
