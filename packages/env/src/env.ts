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

/** A pino level, one of {@link LOG_LEVELS}. */
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
/** An http(s) URL. */
export const envHttpUrl = envUrl(['http', 'https']);

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
 * The variables of the payment side (gateway and worker; `npm start` too): SPEC 2.9 terms and keys.
 * Ports, URLs, hex values, numbers and `LOG_LEVEL` are checked here; what is required depends on
 * the entry (see the gateway's `configFromEnv` and {@link devDefaultsProblems}).
 */
export const GATEWAY_ENV = {
  GATEWAY_PORT: envPort,
  BUILDER_PORT: envPort,
  PUBLIC_BASE_URL: envHttpUrl,
  BUILDER_URL: envHttpUrl,
  REDIS_URL: envRedisUrl,
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
  LOG_LEVEL: envLogLevel,
} satisfies EnvSpec;

/** The builder's variables (`RELAY_URLS` is parsed by the builder itself). */
export const BUILDER_ENV = {
  BUILDER_PORT: envPort,
  REDIS_URL: envRedisUrl,
  ETHEREUM_RPC_URL: envRpcUrl,
  BUILDER_BLS_SECRET_KEY: envHex(32),
  BUILDER_FEE_RECIPIENT: envHex(20),
  PROPOSER_PUBKEY: envHex(48),
  GENESIS_FORK_VERSION: envHex(4),
  BEACON_GENESIS_TIME: envNonNegative,
  BUILDER_SLOT_MS: envNonNegative,
  BUILDER_HEAD_POLL_MS: envNonNegative,
  BUILDER_MAX_BODY_BYTES: envNonNegative,
  LOG_LEVEL: envLogLevel,
} satisfies EnvSpec;

/** The `npm start` launcher's own variables: ports of the embedded dev chains. */
export const DEVNET_ENV = {
  DEVNET_PAYMENT_PORT: envPort,
  DEVNET_ETHEREUM_PORT: envPort,
  DEVNET_ARBITRUM_PORT: envPort,
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
