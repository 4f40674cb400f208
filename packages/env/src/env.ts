import { pino } from 'pino';
import { z } from 'zod';

/**
 * The pino levels `LOG_LEVEL` accepts, most to least severe, then `silent`:
 * `fatal, error, warn, info, debug, trace, silent`.
 */
export const LOG_LEVELS: readonly string[] = [
  ...Object.entries(pino.levels.values)
    .sort(([, a], [, b]) => b - a)
    .map(([name]) => name),
  'silent',
];

/** A TCP port: an integer 0..65535 written in decimal (0 = let the OS pick). */
export const envPort = z
  .string()
  .refine((v) => /^\d+$/.test(v.trim()) && Number(v) <= 65535, 'must be an integer port 0..65535')
  .transform(Number);

/** A finite number ≥ 0 (e.g. seconds, milliseconds, requests per second). */
export const envNonNegative = z
  .string()
  .refine((v) => v.trim() !== '' && Number.isFinite(Number(v)) && Number(v) >= 0, 'must be a number ≥ 0')
  .transform(Number);

/** A finite number > 0 (e.g. a timeout in milliseconds). */
export const envPositive = z
  .string()
  .refine((v) => v.trim() !== '' && Number.isFinite(Number(v)) && Number(v) > 0, 'must be a number > 0')
  .transform(Number);

/** An integer in `min..max` written in decimal (e.g. basis points 0..10000). */
export function envIntRange(min: number, max: number) {
  return z
    .string()
    .refine((v) => /^\d+$/.test(v.trim()) && Number(v) >= min && Number(v) <= max, `must be an integer ${min}..${max}`)
    .transform(Number);
}

/**
 * A non-negative USDC amount as a decimal with at most 6 decimals (e.g. `1.00`), parsed to integer
 * base units (bigint; `1.00` → `1000000n`).
 */
export const envUsdc = z
  .string()
  .refine((v) => /^\d+(\.\d{1,6})?$/.test(v.trim()), 'must be a USDC amount ≥ 0 with at most 6 decimals, e.g. 1.00')
  .transform((v) => {
    const [whole, fraction = ''] = v.trim().split('.');
    return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  });

/** The x402 schemes a gateway accepts (docs/decisions.md "batch-settlement"). */
export const PAYMENT_SCHEME_NAMES = ['exact', 'batch-settlement'] as const;

/**
 * A comma-separated list of x402 schemes among {@link PAYMENT_SCHEME_NAMES}, e.g.
 * `exact,batch-settlement`; `exact` is always accepted, named or not.
 */
export const envPaymentSchemes = z
  .string()
  .refine(
    (v) => v.split(',').every((s) => (PAYMENT_SCHEME_NAMES as readonly string[]).includes(s.trim())),
    `must be a comma-separated list of ${PAYMENT_SCHEME_NAMES.join(', ')}`,
  )
  .transform((v) => [...new Set(['exact', ...v.split(',').map((s) => s.trim())])] as (typeof PAYMENT_SCHEME_NAMES)[number][]);

/** A switch: `1`, `true`, `0` or `false` (any case). */
export const envBoolean = z
  .string()
  .refine((v) => ['1', 'true', '0', 'false'].includes(v.trim().toLowerCase()), 'must be 1, true, 0 or false')
  .transform((v) => ['1', 'true'].includes(v.trim().toLowerCase()));

/** A bearer token: 16 to 512 visible ASCII characters, no spaces (it travels in `Authorization: Bearer <token>`). */
export const envBearerToken = z.string().refine((v) => /^[\x21-\x7e]{16,512}$/.test(v), 'must be 16 to 512 visible ASCII characters without spaces');

/** A pino level, one of {@link LOG_LEVELS}. */
/** When a payment-chain block is final: `safe`, `finalized` (the chain's block tags) or a depth, blocks under the head (a non-negative integer). */
export const envFinality = z
  .string()
  .refine((v) => v === 'safe' || v === 'finalized' || /^(0|[1-9][0-9]{0,5})$/.test(v), 'must be safe, finalized or a depth in blocks (a non-negative integer)')
  .transform((v): { tag: 'safe' | 'finalized' } | { depth: number } => (v === 'safe' || v === 'finalized' ? { tag: v } : { depth: Number(v) }));
export const envLogLevel = z.string().refine((v) => LOG_LEVELS.includes(v), `must be one of ${LOG_LEVELS.join(', ')}`);

/**
 * A URL whose scheme is one of `protocols` (without the colon), e.g. `['http', 'https']`.
 */
export function envUrl(protocols: readonly string[]) {
  return z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    `must be a ${protocols.join(' or ')} URL`,
  );
}

/** `0x` followed by exactly `bytes * 2` hex characters (an address is 20 bytes, a private key 32). */
export function envHex(bytes: number) {
  return z
    .string()
    .refine((v) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(v), `must be 0x followed by ${bytes * 2} hex characters`)
    .transform((v) => v as `0x${string}`);
}

/** A JSON-RPC endpoint: http(s) or ws(s). */
export const envRpcUrl = envUrl(['http', 'https', 'ws', 'wss']);
/** A Redis URL: `redis://` or `rediss://`. */
export const envRedisUrl = envUrl(['redis', 'rediss']);

/** A comma-separated list (string → string[]): entries trimmed, empty ones dropped; the base of {@link envHostPorts} and {@link envOrigins}. */
const commaList = () =>
  z.string().transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[^:\s[\],]+):(\d{1,5})$/;

/**
 * Redis Cluster startup nodes (REDIS_CLUSTER_NODES): comma-separated `host:port` entries
 * (`[v6]:port` for IPv6; spaces ignored), parsed to the list of entries,
 * e.g. `'10.0.0.1:7000, 10.0.0.2:7000'` → `['10.0.0.1:7000', '10.0.0.2:7000']`.
 */
export const envHostPorts = commaList().refine(
  (entries) => entries.length > 0 && entries.every((e) => HOST_PORT.test(e) && Number(HOST_PORT.exec(e)![1]) >= 1 && Number(HOST_PORT.exec(e)![1]) <= 65535),
  'must be comma-separated host:port entries, e.g. 10.0.0.1:7000,10.0.0.2:7000',
);
/**
 * Web origins (ALLOWED_ORIGINS): comma-separated `scheme://host[:port]` entries, http or https,
 * without path, query or credentials (spaces ignored), parsed to their serialized origins
 * (lower-case host, default port dropped), e.g. `'https://App.example.com, http://localhost:3000'`
 * → `['https://app.example.com', 'http://localhost:3000']`.
 */
export const envOrigins = commaList()
  .refine(
    (entries) =>
      entries.length > 0 &&
      entries.every((e) => {
        try {
          const u = new URL(e);
          return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && u.pathname === '/' && !u.search && !u.hash;
        } catch {
          return false;
        }
      }),
    'must be comma-separated http(s) origins (scheme://host[:port], no path), e.g. https://app.example.com,http://localhost:3000',
  )
  .transform((entries) => entries.map((e) => new URL(e).origin));
/** An http(s) URL. */
export const envHttpUrl = envUrl(['http', 'https']);

/**
 * The deployment's Redis key prefix: REDIS_KEY_PREFIX over `fallback`, default `acg:`, or `{acg}:`
 * on a Redis Cluster (`clusterNodes` set). On a cluster the prefix must contain a hash tag (a
 * `{` followed by a non-empty text and `}`, as Redis Cluster reads it): every key of the
 * deployment then hashes to one slot, so multi-key scripts, MULTI, pipelines and BullMQ work.
 * Without one a problem line is pushed onto `problems`.
 *
 * @example redisKeyPrefix({}, undefined, ['10.0.0.1:7000'], problems) // '{acg}:'
 */
export function redisKeyPrefix(env: NodeJS.ProcessEnv, fallback: string | undefined, clusterNodes: readonly string[] | undefined, problems: string[]): string {
  const prefix = env.REDIS_KEY_PREFIX || fallback || (clusterNodes?.length ? '{acg}:' : 'acg:');
  if (clusterNodes?.length && !/^[^{]*\{[^}]+\}/.test(prefix)) {
    problems.push(
      // a prefix is no secret, though its name contains KEY: shown as is (envProblem would hide it)
      `REDIS_KEY_PREFIX=${prefix}: must contain a hash tag when REDIS_CLUSTER_NODES is set, e.g. {acg}: (every key of the deployment in one cluster slot)`,
    );
  }
  return prefix;
}

/** Variables and the schema of each; a variable that is unset or empty is not checked. */
export type EnvSpec = Record<string, z.ZodType<unknown, string>>;

/** The parsed values of an {@link EnvSpec}: absent where the variable is unset, empty or invalid. */
export type EnvValues<S extends EnvSpec> = { [K in keyof S]?: z.output<S[K]> };

/**
 * Variables whose value is never echoed in a message (keys); others are echoed, with a URL password
 * replaced by `***`.
 */
const SECRET = /KEY|SECRET|PASSWORD|TOKEN/;

/**
 * One problem line, `NAME=value: reason` (value hidden for secrets, URL passwords redacted).
 *
 * @example envProblem('GATEWAY_PORT', '70000', 'must be an integer port 0..65535')
 * // 'GATEWAY_PORT=70000: must be an integer port 0..65535'
 */
export function envProblem(name: string, value: string | undefined, reason: string): string {
  if (value === undefined) return `${name}: ${reason}`;
  const shown = SECRET.test(name) ? '(hidden)' : value.replace(/\/\/([^@/]*):([^@/]*)@/, '//$1:***@');
  return `${name}=${shown}: ${reason}`;
}

/**
 * Checks every variable of `spec` in `env` (all of them, not up to the first problem).
 *
 * @param spec - Variable name → zod schema of its string value.
 * @param env - Usually `process.env`. Unset and empty variables are skipped (they take their default).
 * @returns `values` (parsed, only the valid ones) and `problems` (one {@link envProblem} line each).
 */
export function readEnv<S extends EnvSpec>(spec: S, env: NodeJS.ProcessEnv): { values: EnvValues<S>; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(spec)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const result = schema.safeParse(raw);
    if (result.success) values[name] = result.data;
    else problems.push(envProblem(name, raw, result.error.issues.map((i) => i.message).join('; ')));
  }
  return { values: values as EnvValues<S>, problems };
}

/**
 * The environment is unusable: `problems` holds one line per variable (each names it), and the
 * message is those lines after a heading, ready to print without a stack trace.
 */
export class EnvError extends Error {
  override name = 'EnvError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/** Throws {@link EnvError} when `problems` is not empty. */
export function assertNoProblems(problems: readonly string[]): void {
  if (problems.length > 0) throw new EnvError(problems);
}

/**
 * OpenTelemetry's standard variables that turn tracing on and name the service (docs/operating.md
 * "Traces"; `startTracing` of @acg/observability). Unset `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): no tracing. The SDK reads its other `OTEL_*`
 * variables itself (sampler, headers, batch sizes); they are not checked here.
 */
export const OTEL_ENV = {
  /** OTLP/HTTP base URL, e.g. `http://otel-collector:4318`; traces go to `<url>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: envHttpUrl,
  /** OTLP/HTTP traces URL used as it is (over OTEL_EXPORTER_OTLP_ENDPOINT). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envHttpUrl,
  /** `service.name` of the spans (default: `gateway`, `worker`, `builder`, `launcher` by entry). */
  OTEL_SERVICE_NAME: z.string().regex(/^[\x21-\x7e][\x20-\x7e]{0,254}$/, 'must be 1-255 printable ASCII characters'),
  /** `true` (any case): no tracing even with an endpoint set; `false` or unset: tracing as configured. */
  OTEL_SDK_DISABLED: z.string().refine((v) => ['true', 'false'].includes(v.trim().toLowerCase()), 'must be true or false'),
} satisfies EnvSpec;

/**
 * The variables of the payment side (gateway and worker; `npm start` too): docs/spec-notes.md 2.9 terms and keys.
 * Ports, URLs, hex values, numbers and `LOG_LEVEL` are checked here; what is required depends on
 * the entry (see the gateway's `configFromEnv` and {@link devDefaultsProblems}).
 */
export const GATEWAY_ENV = {
  GATEWAY_PORT: envPort,
  BUILDER_PORT: envPort,
  PUBLIC_BASE_URL: envHttpUrl,
  /** Web origins besides PUBLIC_BASE_URL's allowed on /mcp and bearer routes (docs/configuration.md). */
  ALLOWED_ORIGINS: envOrigins,
  BUILDER_URL: envHttpUrl,
  REDIS_URL: envRedisUrl,
  /** Redis Cluster startup nodes; set, every connection is an ioredis `Cluster` (docs/operating.md). */
  REDIS_CLUSTER_NODES: envHostPorts,
  /**
   * `true`: take payments on a store that can lose acknowledged writes (anything but `appendonly yes`
   * with `appendfsync always`), or whose setting cannot be read (CONFIG GET refused, e.g. a managed
   * Redis). Default `false`: outside `npm start`'s dev defaults the gateway then refuses to start.
   * docs/durability.md.
   */
  ALLOW_NON_DURABLE_STORE: envBoolean,
  /**
   * Replicas that must acknowledge a paid call's money writes before its answer leaves (`WAIT
   * numreplicas timeout`); default 0 (no WAIT: a single Redis whose `appendfsync always` suffices).
   * docs/durability.md "Replicas".
   */
  REDIS_WAIT_REPLICAS: envIntRange(0, 100),
  /** Longest `WAIT` for those replicas, ms (1..1000, default 500); on a timeout the answer goes out and the shortfall is logged. */
  REDIS_WAIT_TIMEOUT_MS: envIntRange(1, 1000),
  PAYMENT_RPC_URL: envRpcUrl,
  PAYMENT_ASSET: envHex(20),
  PAY_TO_ADDRESS: envHex(20),
  FACILITATOR_PRIVATE_KEY: envHex(32),
  FACILITATOR_URL: envHttpUrl,
  TREASURY_PRIVATE_KEY: envHex(32),
  ETHEREUM_RPC_URL: envRpcUrl,
  BASE_RPC_URL: envRpcUrl,
  ARBITRUM_RPC_URL: envRpcUrl,
  GATEWAY_RATE_LIMIT: envNonNegative,
  PROBE_INTERVAL_SECONDS: envNonNegative,
  PAYMENT_RPC_TIMEOUT_MS: envPositive,
  /** When an outgoing transfer (settlement, refund, payout) is final and no longer watched for reorgs (docs/decisions.md "Confirmations and reorgs"). */
  PAYMENT_FINALITY: envFinality,
  /** The x402 schemes the paywall accepts besides `exact` (docs/decisions.md "batch-settlement"). */
  PAYMENT_SCHEMES: envPaymentSchemes,
  /** The Permit2 window a job paid with x402 `upto` may ask for, seconds (docs/decisions.md "Payment schemes", jobs). */
  JOB_UPTO_MAX_TIMEOUT_SECONDS: envIntRange(900, 7 * 24 * 3600),
  LOG_LEVEL: envLogLevel,
  /** Ed25519 seed (32 bytes hex) signing JWS execution proofs (docs/decisions.md "Proofs and receipts"). */
  RECEIPT_JWS_KEY: envHex(32),
  /** secp256k1 private key (32 bytes hex) signing x402 EIP-712 offers and receipts. */
  RECEIPT_SIGNING_KEY: envHex(32),
  LOG_PRETTY: envBoolean,
  METRICS_TOKEN: envBearerToken,
  WORKER_METRICS_PORT: envPort,
  // providers' money (docs/decisions.md "Providers")
  PROVIDER_FEE_BPS: envIntRange(0, 10_000),
  PROVIDER_DISPUTE_WINDOW_SECONDS: envNonNegative,
  PROVIDER_PAYOUT_INTERVAL_SECONDS: envPositive,
  PROVIDER_PAYOUT_MIN_USDC: envUsdc,
  // quotes: how long a quoted price holds (apps/gateway README "Quotes")
  QUOTE_TTL_SECONDS: envPositive,
  PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS: envNonNegative,
  // x402 batch-settlement channels: the worker's claims, settlement and refunds (packages/channels README)
  CHANNEL_CHECK_INTERVAL_SECONDS: envPositive,
  CHANNEL_CLAIM_INTERVAL_SECONDS: envPositive,
  CHANNEL_CLAIM_THRESHOLD_USDC: envUsdc,
  CHANNEL_WITHDRAW_MARGIN_SECONDS: envNonNegative,
  CHANNEL_REFUND_IDLE_SECONDS: envNonNegative,
  ADMIN_TOKEN: envBearerToken,
  ...OTEL_ENV,
} satisfies EnvSpec;

/** The builder's variables (`RELAY_URLS` is parsed by the builder itself). */
export const BUILDER_ENV = {
  BUILDER_PORT: envPort,
  REDIS_URL: envRedisUrl,
  REDIS_CLUSTER_NODES: envHostPorts,
  ETHEREUM_RPC_URL: envRpcUrl,
  BUILDER_BLS_SECRET_KEY: envHex(32),
  BUILDER_COINBASE_PRIVATE_KEY: envHex(32),
  BUILDER_PROPOSER_SHARE_BPS: envIntRange(0, 10_000),
  BUILDER_REGISTRATIONS_POLL_MS: envNonNegative,
  BEACON_API_URL: envHttpUrl,
  GENESIS_FORK_VERSION: envHex(4),
  BEACON_GENESIS_TIME: envNonNegative,
  BUILDER_SLOT_MS: envNonNegative,
  BUILDER_HEAD_POLL_MS: envNonNegative,
  BUILDER_MAX_BODY_BYTES: envNonNegative,
  LOG_LEVEL: envLogLevel,
  LOG_PRETTY: envBoolean,
  METRICS_TOKEN: envBearerToken,
  ...OTEL_ENV,
} satisfies EnvSpec;

/**
 * Exactly `count` comma-separated TCP ports 1..65535 (spaces ignored), parsed to numbers,
 * e.g. `envPortList(2)` reads `'18550, 18551'` as `[18550, 18551]`.
 */
export function envPortList(count: number) {
  return commaList()
    .refine(
      (entries) => entries.length === count && entries.every((e) => /^\d+$/.test(e) && Number(e) >= 1 && Number(e) <= 65535),
      `must be ${count} comma-separated ports 1..65535`,
    )
    .transform((entries) => entries.map(Number));
}

/** The names of the four dev relays `npm start` runs, in the order of `DEVNET_RELAY_PORTS`. */
export const DEV_RELAY_PORT_ORDER = ['flashbots', 'ultrasound', 'agnostic', 'bloxroute'] as const;

/**
 * The `npm start` launcher's own variables: the ports of what it runs besides the gateway, the
 * builder and the example provider: the embedded dev chains, the four dev relays (in the order of
 * {@link DEV_RELAY_PORT_ORDER}) and the second example provider.
 */
export const DEVNET_ENV = {
  DEVNET_PAYMENT_PORT: envPort,
  DEVNET_ETHEREUM_PORT: envPort,
  DEVNET_ARBITRUM_PORT: envPort,
  DEVNET_RELAY_PORTS: envPortList(DEV_RELAY_PORT_ORDER.length),
  SECOND_PROVIDER_PORT: envPort,
} satisfies EnvSpec;

/**
 * The example provider's variables (apps/example-provider, docs/decisions.md "Providers"); `npm start` sets
 * them for the child process it spawns and checks the ones a user may set.
 * - `GATEWAY_URL`: the gateway to onboard with (required by the provider; `npm start` passes its own).
 * - `EXAMPLE_PROVIDER_PORT` (default 8090; 0 = a free port), `EXAMPLE_PROVIDER_HOST` (default 127.0.0.1).
 * - `EXAMPLE_PROVIDER_PUBLIC_URL`: the endpoint to register, when the gateway reaches the provider
 *   through another URL than `http://<host>:<port>` (a proxy, TLS).
 * - `EXAMPLE_PROVIDER_PRIVATE_KEY`: the payout wallet, which also signs results (required).
 * - `EXAMPLE_PROVIDER_NAME`: the catalog's `provider` name (default `Example Provider`).
 * - `EXAMPLE_PROVIDER_RPC_BASE`, `EXAMPLE_PROVIDER_RPC_ETHEREUM`, `EXAMPLE_PROVIDER_RPC_ARBITRUM`:
 *   HTTP JSON-RPC URLs of the chains it reads (at least one).
 * - `EXAMPLE_PROVIDER_JOIN`: comma-separated capability ids (e.g. `intelligence.token_metadata`) whose
 *   contracts it joins instead of creating them (docs/marketplace.md "Contracts and offers"); it
 *   then offers only those. `npm start` runs a second instance this way.
 * - `EXAMPLE_PROVIDER_PRICE_USDC`: the price of every offer it sends, decimal USDC (default: each capability's own).
 * - `EXAMPLE_PROVIDER_DELAY_MS`: extra milliseconds before each answer (default 0), to make a slower offer.
 * - `EXAMPLE_PROVIDER`: `off` keeps `npm start` from starting it.
 */
export const EXAMPLE_PROVIDER_ENV = {
  GATEWAY_URL: envHttpUrl,
  EXAMPLE_PROVIDER: z.enum(['on', 'off'], { message: 'must be on or off' }),
  EXAMPLE_PROVIDER_PORT: envPort,
  EXAMPLE_PROVIDER_HOST: z.string().regex(/^[0-9A-Za-z.:-]+$/, 'must be a host name or IP address'),
  EXAMPLE_PROVIDER_PUBLIC_URL: envHttpUrl,
  EXAMPLE_PROVIDER_PRIVATE_KEY: envHex(32),
  EXAMPLE_PROVIDER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/, 'must be 1-64 letters, digits, space, ".", "_" or "-", starting with a letter or digit'),
  EXAMPLE_PROVIDER_RPC_BASE: envHttpUrl,
  EXAMPLE_PROVIDER_RPC_ETHEREUM: envHttpUrl,
  EXAMPLE_PROVIDER_RPC_ARBITRUM: envHttpUrl,
  EXAMPLE_PROVIDER_JOIN: commaList().refine(
    (ids) => ids.length > 0 && ids.every((id) => /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/.test(id)),
    'must be comma-separated capability ids, e.g. intelligence.token_metadata',
  ),
  EXAMPLE_PROVIDER_PRICE_USDC: z
    .string()
    .refine((v) => /^\d+(\.\d{1,6})?$/.test(v) && /[1-9]/.test(v), 'must be a USDC amount > 0 with at most 6 decimals, e.g. 0.0025'),
  EXAMPLE_PROVIDER_DELAY_MS: envNonNegative,
  LOG_LEVEL: envLogLevel,
  LOG_PRETTY: envBoolean,
} satisfies EnvSpec;

/**
 * `npm start` rule: setting `PAYMENT_RPC_URL` turns off the embedded payment defaults (local chain,
 * dev treasury and facilitator), so `PAY_TO_ADDRESS` and `FACILITATOR_PRIVATE_KEY` or
 * `FACILITATOR_URL` become required.
 *
 * @param env - Usually `process.env`.
 * @returns Problem lines (empty when the rule holds or `PAYMENT_RPC_URL` is unset).
 */
export function devDefaultsProblems(env: NodeJS.ProcessEnv): string[] {
  if (!env.PAYMENT_RPC_URL) return [];
  const why =
    'required when PAYMENT_RPC_URL is set (setting PAYMENT_RPC_URL turns off the dev defaults; then PAY_TO_ADDRESS and FACILITATOR_PRIVATE_KEY or FACILITATOR_URL are required, TREASURY_PRIVATE_KEY to send refunds)';
  const problems: string[] = [];
  if (!env.PAY_TO_ADDRESS) problems.push(`PAY_TO_ADDRESS: ${why}`);
  if (!env.FACILITATOR_PRIVATE_KEY && !env.FACILITATOR_URL) problems.push(`FACILITATOR_PRIVATE_KEY or FACILITATOR_URL: ${why}`);
  return problems;
}
