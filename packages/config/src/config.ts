import type { Chain } from 'viem';
import { base } from 'viem/chains';
import { EnvError, GATEWAY_ENV, readEnv } from '@acg/env';
import { BASE_USDC_ADDRESS, type ChainName } from '@acg/schemas';
import { webhookPolicyFromEnv, type WebhookPolicy } from '@acg/wallet-monitor';

/** Chains a capability may read, by SPEC chain name (schema `ChainName`). */
export type { ChainName };

/**
 * The service configuration shared by the gateway and the worker, resolved before either starts
 * (DESIGN 1: configuration by environment variables, all optional in development; the `npm start`
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
  /** Public URL of the bundle-submission host (BUILDER_URL, default http://127.0.0.1:BUILDER_PORT). */
  builderUrl: string;
  /** Redis URL (REDIS_URL). */
  redisUrl: string;
  /** Prefix of every Redis key and BullMQ queue of this deployment (REDIS_KEY_PREFIX, default `acg:`). */
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
  };
  /** RPC URLs of the chains capabilities read (ETHEREUM_RPC_URL, BASE_RPC_URL, ARBITRUM_RPC_URL). */
  chains: Partial<Record<ChainName, string>>;
  /** Requests per second per client IP on the gateway's endpoints, discovery documents excepted (GATEWAY_RATE_LIMIT, default 100; 0 disables). */
  rateLimitPerSecond: number;
  /** Take the client IP from the last X-Forwarded-For hop (TRUST_PROXY=1), behind a load balancer. */
  trustProxy: boolean;
  /** pino level (LOG_LEVEL, default info). */
  logLevel: string;
  /** Seconds between capability probes (PROBE_INTERVAL_SECONDS, default 60; 0 disables). */
  probeIntervalSeconds: number;
  /**
   * Wallet monitor routes: `webhookPolicy` (WEBHOOK_POLICY, else NODE_ENV: production → https and
   * public addresses only; development/test → also http to loopback; unset → production) and the
   * delivery retry schedule used when dead letters are replayed (default DESIGN's).
   */
  walletMonitor?: {
    webhookPolicy: WebhookPolicy;
    retryScheduleMs?: readonly number[];
    /** WEBHOOK_SECRET_KEY: 32 bytes (64 hex or base64) encrypting webhook signing secrets at rest; shared by gateway and workers */
    webhookSecretKey?: string;
  };
}

export const BASE_USDC = BASE_USDC_ADDRESS;

/** The payment chain as viem sees it: Base (8453), reached at `rpcUrl`. */
export function paymentChain(rpcUrl: string, chainId = 8453): Chain {
  return { ...base, id: chainId, rpcUrls: { default: { http: [rpcUrl] } } } as Chain;
}

/** Values used where the environment is silent (the embedded dev stack fills these in). */
export type ConfigDefaults = Partial<Omit<GatewayConfig, 'payment'>> & { payment?: Partial<GatewayConfig['payment']> };

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
  const redisUrl = v.REDIS_URL ?? defaults.redisUrl;
  if (!redisUrl && !env.REDIS_URL) problems.push('REDIS_URL: required (or start the embedded defaults with `npm start`)');
  const payTo = v.PAY_TO_ADDRESS ?? defaults.payment?.payTo;
  if (!payTo && !env.PAY_TO_ADDRESS) problems.push('PAY_TO_ADDRESS: required');
  const facilitatorUrl = v.FACILITATOR_URL ?? defaults.payment?.facilitatorUrl;
  const facilitatorPrivateKey = v.FACILITATOR_PRIVATE_KEY ?? defaults.payment?.facilitatorPrivateKey;
  if (!facilitatorUrl && !facilitatorPrivateKey && !env.FACILITATOR_URL && !env.FACILITATOR_PRIVATE_KEY) {
    problems.push('FACILITATOR_PRIVATE_KEY or FACILITATOR_URL: required');
  }
  let webhookPolicy: WebhookPolicy | undefined;
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
    builderUrl: v.BUILDER_URL ?? defaults.builderUrl ?? `http://127.0.0.1:${builderPort}`,
    redisUrl,
    keyPrefix: env.REDIS_KEY_PREFIX || defaults.keyPrefix || 'acg:',
    payment: {
      rpcUrl,
      chain: paymentChain(rpcUrl),
      asset: v.PAYMENT_ASSET ?? defaults.payment?.asset ?? BASE_USDC,
      payTo,
      facilitatorPrivateKey,
      facilitatorUrl,
      treasuryPrivateKey: v.TREASURY_PRIVATE_KEY ?? defaults.payment?.treasuryPrivateKey,
      rpcTimeoutMs: v.PAYMENT_RPC_TIMEOUT_MS ?? defaults.payment?.rpcTimeoutMs ?? 10_000,
    },
    chains: {
      base: v.BASE_RPC_URL ?? defaults.chains?.base ?? rpcUrl,
      ...((v.ETHEREUM_RPC_URL ?? defaults.chains?.ethereum) ? { ethereum: v.ETHEREUM_RPC_URL ?? defaults.chains?.ethereum } : {}),
      ...((v.ARBITRUM_RPC_URL ?? defaults.chains?.arbitrum) ? { arbitrum: v.ARBITRUM_RPC_URL ?? defaults.chains?.arbitrum } : {}),
    },
    rateLimitPerSecond: v.GATEWAY_RATE_LIMIT ?? defaults.rateLimitPerSecond ?? 100,
    trustProxy: env.TRUST_PROXY === '1' || env.TRUST_PROXY === 'true' || (env.TRUST_PROXY === undefined && (defaults.trustProxy ?? false)),
    logLevel: v.LOG_LEVEL ?? defaults.logLevel ?? 'info',
    probeIntervalSeconds: v.PROBE_INTERVAL_SECONDS ?? defaults.probeIntervalSeconds ?? 60,
    walletMonitor: {
      ...defaults.walletMonitor,
      webhookPolicy,
      webhookSecretKey: env.WEBHOOK_SECRET_KEY ?? defaults.walletMonitor?.webhookSecretKey,
    },
  };
}
