import type { z } from 'zod';
import { BUILDER_ENV, DEVNET_ENV, EXAMPLE_PROVIDER_ENV, GATEWAY_ENV, OTEL_ENV, type EnvSpec } from './env.js';

/**
 * The reference of every environment variable: what it means and its default, next to the schemas
 * that check it. `npm run docs:config` writes {@link renderConfigurationDoc}'s text to
 * docs/configuration.md; `test/reference.unit.test.ts` fails when that file differs, or when a
 * variable of a schema (GATEWAY_ENV, BUILDER_ENV, DEVNET_ENV, EXAMPLE_PROVIDER_ENV, OTEL_ENV) has no
 * entry here. Adding a variable: add it to its schema and one entry to {@link ENV_REFERENCE}, then run
 * `npm run docs:config`.
 */

/** A section of docs/configuration.md, in the order they are written. */
export const ENV_GROUPS = {
  gateway: 'Gateway (HTTP)',
  redis: 'Redis',
  payments: 'Payments (x402, USDC)',
  chains: 'Chains the capabilities read',
  money: "Providers' money",
  provider: 'Example provider',
  builder: 'Builder (bundles and relays)',
  devnet: '`npm start` dev chains and relays',
  webhooks: 'Webhooks',
  receipts: 'Receipts and proofs',
  ops: 'Logs, metrics and traces',
} as const;

/** One row of the reference: variables documented together (e.g. a port and its host). */
export interface EnvReferenceEntry {
  group: keyof typeof ENV_GROUPS;
  /** The variables, e.g. `['GATEWAY_PORT']`. */
  names: readonly string[];
  /** Markdown: the value when unset (per entry point where they differ). */
  default: string;
  /** Markdown: what it sets. */
  meaning: string;
}

/** Every variable, by group; within a group in the order a reader needs them. */
export const ENV_REFERENCE: readonly EnvReferenceEntry[] = [
  { group: 'gateway', names: ['GATEWAY_PORT'], default: '`8080`', meaning: 'gateway HTTP port' },
  { group: 'gateway', names: ['GATEWAY_HOST'], default: '`127.0.0.1`', meaning: 'bind address' },
  {
    group: 'gateway',
    names: ['PUBLIC_BASE_URL'],
    default: '`http://GATEWAY_HOST:GATEWAY_PORT`',
    meaning: 'base URL written into documents and `PaymentRequired.resource`',
  },
  {
    group: 'gateway',
    names: ['ALLOWED_ORIGINS'],
    default: 'none',
    meaning:
      'web origins, comma-separated `scheme://host[:port]`, allowed besides `PUBLIC_BASE_URL`\'s origin (and its loopback aliases `localhost`/`127.0.0.1`/`[::1]` when it is one) on `/mcp` and on requests with a credential (`Authorization` or `SIGN-IN-WITH-X`); a foreign `Origin` gets 403 (DNS rebinding; docs/decisions.md "Browsers and `Origin`"). No `Origin` (agents) is never refused',
  },
  { group: 'builder', names: ['BUILDER_PORT', 'BUILDER_URL'], default: '`8081` / `http://127.0.0.1:8081`', meaning: 'bundle-submission host ({builder_url})' },
  {
    group: 'redis',
    names: ['REDIS_URL'],
    default: '127.0.0.1:6379 if it answers, else a private `redis-server` on a free port',
    meaning:
      'Redis (use AOF persistence in production); outages up to the Redis outage tolerance (30 s, docs/operating.md "Redis outage tolerance") lose nothing',
  },
  { group: 'redis', names: ['REDIS_KEY_PREFIX'], default: '`acg:`', meaning: 'prefix of every key and BullMQ queue of this deployment' },
  {
    group: 'redis',
    names: ['ALLOW_NON_DURABLE_STORE'],
    default: '`false`',
    meaning:
      'outside the dev defaults the gateway refuses to start on a Redis that can lose acknowledged writes (not `appendonly yes` with `appendfsync always`, or a setting it cannot read); `true` starts it anyway with a warning (docs/durability.md)',
  },
  {
    group: 'redis',
    names: ['REDIS_WAIT_REPLICAS', 'REDIS_WAIT_TIMEOUT_MS'],
    default: '`0` / `500`',
    meaning:
      "after a paid call's money writes the gateway sends `WAIT` for this many replicas, up to this many ms (1..1000), before the answer leaves; `0` sends no `WAIT`. A timeout is logged and the answer still goes (docs/durability.md)",
  },
  {
    group: 'payments',
    names: ['PAYMENT_RPC_URL'],
    default: 'a local anvil (chain id 8453) on `DEVNET_PAYMENT_PORT` (8545)',
    meaning: 'payment chain JSON-RPC',
  },
  { group: 'payments', names: ['PAYMENT_ASSET'], default: '`0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`', meaning: 'USDC on Base' },
  { group: 'payments', names: ['PAY_TO_ADDRESS'], default: 'dev account 1', meaning: 'treasury receiving payments (docs/spec-notes.md 2.9 `payTo`)' },
  { group: 'payments', names: ['FACILITATOR_PRIVATE_KEY'], default: 'dev account 0', meaning: 'in-process x402 facilitator key (pays settlement gas)' },
  { group: 'payments', names: ['FACILITATOR_URL'], default: 'unset', meaning: 'use an external x402 facilitator instead of the in-process one' },
  {
    group: 'payments',
    names: ['TREASURY_PRIVATE_KEY'],
    default: 'dev account 1',
    meaning: 'sends refunds and provider payouts; without it refunds stay `pending` and no payout is sent',
  },
  {
    group: 'payments',
    names: ['PAYMENT_SCHEMES'],
    default: '`exact` (`npm start` on its dev chain: `exact,batch-settlement`)',
    meaning:
      'the x402 schemes the paywall accepts, comma-separated (`exact` always, and first in every 402): `exact,batch-settlement` also offers vouchers over a payment channel where the price is fixed before the call (`POST /api/v1/execute` and MCP tools of built-in capabilities and of single-price provider routes, and quoted calls) (the official client deposits once and signs a cumulative voucher per call, checked off-chain; the worker claims them in batches). Suits one agent making many small calls (docs/decisions.md "batch-settlement")',
  },
  {
    group: 'payments',
    names: ['JOB_UPTO_MAX_TIMEOUT_SECONDS'],
    default: '`3600`',
    meaning:
      'the `maxTimeoutSeconds` of the `upto` entry in the 402 of `POST /api/v1/jobs` and the MCP job tool (900 to 604800): the official upto client signs its Permit2 `deadline` as now plus this, and a job is settled when it ends, so this bounds how long an `upto` job may run. The worker stops a job 300 s before the deadline (error `payment_deadline`, charged for the steps that ran). Other `upto` calls keep 300 s (docs/decisions.md "Payment schemes")',
  },
  {
    group: 'payments',
    names: ['PAYMENT_RPC_TIMEOUT_MS'],
    default: '`10000`',
    meaning:
      "bound of one JSON-RPC request to the payment chain (viem http `timeout`; the paywall's reads retry once, the facilitator's calls never). With the node unreachable a paid call (execute, jobs, deposit) answers 503 problem+json `payment_chain_unavailable` with `Retry-After` within about twice this, and `/status/health` shows `gateway.execute` and `gateway.jobs` `down`",
  },
  {
    group: 'payments',
    names: ['PAYMENT_RECOVERY_INTERVAL_MS', 'PAYMENT_RECOVERY_AFTER_MS'],
    default: '`60000` / `600000`',
    meaning:
      'worker (`npm start` and `node dist/worker.js` alike, one function reads them: `workerOptionsFromEnv`): how often the crash-recovery sweep of paid requests runs, and how long a reservation must have made no progress to count as orphaned',
  },
  {
    group: 'payments',
    names: ['PAYMENT_FINALITY'],
    default: '`finalized` (`2` on the embedded dev chain)',
    meaning:
      'when an outgoing transfer (settlement, refund, payout) is final: the chain\'s `finalized` or `safe` block tag, or a depth in blocks under the head. Until then the worker re-sends what a reorg removed (docs/decisions.md "Confirmations and reorgs")',
  },
  {
    group: 'payments',
    names: ['PAYMENT_RECONCILE_INTERVAL_MS', 'PAYMENT_RECONCILE_CONFIRMATIONS', 'PAYMENT_RECONCILE_LOOKBACK_BLOCKS'],
    default: "`60000` / `PAYMENT_FINALITY`'s depth when it is one (`2` on the embedded dev chain), else `12` / `0`",
    meaning:
      'worker (and `npm run reconcile` for the confirmations): how often the reconciliation of payments with the chain runs, how many blocks below the head count as confirmed, and where a first run (no cursor yet) starts, in blocks below the confirmed block (docs/operating.md "Reconciliation from the chain")',
  },
  {
    group: 'chains',
    names: ['ETHEREUM_RPC_URL', 'BASE_RPC_URL', 'ARBITRUM_RPC_URL'],
    default: '`npm start`: local anvils (chain ids 1 on `DEVNET_ETHEREUM_PORT`, 8453 = the payment chain, 42161 on `DEVNET_ARBITRUM_PORT`)',
    meaning: 'chains the capabilities read, the builder targets (Ethereum) and the wallet monitor watches',
  },
  {
    group: 'chains',
    names: ['ETHEREUM_WS_URL', 'BASE_WS_URL', 'ARBITRUM_WS_URL'],
    default: 'for an `http://` RPC URL the same URL as `ws://` (anvil); none for `https://`',
    meaning:
      'WebSocket JSON-RPC the wallet monitor subscribes to `newHeads` on (`off` = poll only); without one, or while the socket is down, it polls every 200 ms',
  },
  { group: 'gateway', names: ['PROBE_INTERVAL_SECONDS'], default: '`60`', meaning: 'capability probes (0 = once at startup)' },
  {
    group: 'builder',
    names: ['RELAY_URLS'],
    default: 'four local dev relays (`npm start`); production: Flashbots, Ultra Sound, Agnostic, bloXroute',
    meaning: '`name=url,...` relays the builder submits to',
  },
  { group: 'builder', names: ['BUILDER_BLS_SECRET_KEY'], default: 'a random dev key (warned)', meaning: "the builder's BLS12-381 key signing BidTraces" },
  {
    group: 'builder',
    names: ['BUILDER_COINBASE_PRIVATE_KEY'],
    default: 'a random dev key (warned)',
    meaning: "the builder's coinbase (fee recipient of its blocks); signs the refunds and the payment to the proposer, paid out of the block's own fees",
  },
  {
    group: 'builder',
    names: ['BUILDER_PROPOSER_SHARE_BPS'],
    default: '`9000`',
    meaning: "bid policy: share of the block's coinbase profit (after refunds and the builder's own gas) paid to the proposer, the BidTrace `value`",
  },
  {
    group: 'builder',
    names: ['BUILDER_REGISTRATIONS_POLL_MS'],
    default: '`6000`',
    meaning: "how often each relay's `GET /relay/v1/builder/validators` is read (0: only when a slot needs it)",
  },
  {
    group: 'builder',
    names: ['BEACON_API_URL'],
    default: 'none (dev stand-ins, right only on the dev chain)',
    meaning:
      "beacon node API whose `payload_attributes` events give each slot's timestamp, prevRandao, withdrawals and parent beacon block root (needed on a real network)",
  },
  {
    group: 'devnet',
    names: ['DEVNET_PAYMENT_PORT'],
    default: '`8545` (a free port if the default is taken; a port set here must be free)',
    meaning: 'port of the embedded payment chain',
  },
  {
    group: 'devnet',
    names: ['DEVNET_ETHEREUM_PORT', 'DEVNET_ARBITRUM_PORT'],
    default: '`8546`, `8547` (a free port if the default is taken; a port set here must be free)',
    meaning: 'ports of the embedded Ethereum and Arbitrum dev chains',
  },
  {
    group: 'devnet',
    names: ['DEVNET_RELAY_PORTS'],
    default: 'four free ports',
    meaning:
      'ports of the four local dev relays `npm start` runs when `RELAY_URLS` is unset, in the order flashbots, ultrasound, agnostic, bloxroute (e.g. `18550,18551,18552,18553`); ports set here must be free',
  },
  {
    group: 'devnet',
    names: ['SECOND_PROVIDER_PORT'],
    default: 'a free port',
    meaning:
      'port of the second example provider `npm start` runs with the dev payment chain (it joins `intelligence.token_metadata`, cheaper and slower); a port set here must be free',
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER'],
    default: '`on` with the dev payment chain (or with `EXAMPLE_PROVIDER_PRIVATE_KEY`)',
    meaning: '`off`: `npm start` does not start the example provider (apps/example-provider README)',
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER_PORT', 'EXAMPLE_PROVIDER_HOST'],
    default: '`8090` (a free port if the default is taken; a port set here must be free), `127.0.0.1`',
    meaning: 'where the example provider listens (its own process)',
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER_PRIVATE_KEY'],
    default: '`npm start`: dev account 10 (`DEV_ROLES.provider`, outside the ten anvil-funded accounts)',
    meaning: "the example provider's wallet: payout address on the payment chain and result signer",
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER_RPC_BASE', 'EXAMPLE_PROVIDER_RPC_ETHEREUM', 'EXAMPLE_PROVIDER_RPC_ARBITRUM'],
    default: '`npm start`: the chains the gateway reads (`BASE_RPC_URL`/payment chain, `ETHEREUM_RPC_URL`, `ARBITRUM_RPC_URL`, http only)',
    meaning: 'chains the example provider reads',
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER_JOIN', 'EXAMPLE_PROVIDER_PRICE_USDC', 'EXAMPLE_PROVIDER_DELAY_MS'],
    default: "none, each capability's own price, `0`",
    meaning:
      "the example provider joins those contracts (`capability_id`) at that price and that much slower instead of creating its own; `npm start`'s second provider uses them (apps/example-provider README)",
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_POLICY'],
    default: '`development` under `npm start`; else from `NODE_ENV` (`production` when unset)',
    meaning:
      '`production`: webhook URLs must be https and resolve to public addresses (SSRF-safe); `development`: the same rules plus http/https to a loopback host, nothing more (packages/wallet-monitor README "Outbound URL rules")',
  },
  {
    group: 'webhooks',
    names: ['WEBHOOK_SECRET_KEY'],
    default: 'a random key per run under `npm start`; unset elsewhere (secrets then stored as they are, set it in production)',
    meaning: '32 bytes (64 hex or base64): AES-256-GCM encryption of webhook signing secrets at rest; the same on gateways and workers',
  },
  {
    group: 'receipts',
    names: ['RECEIPT_JWS_KEY', 'RECEIPT_SIGNING_KEY'],
    default: "`npm start`: stable development keys (neither the treasury's nor the facilitator's); unset elsewhere: no proofs",
    meaning:
      '32 bytes hex each, set both or neither: the Ed25519 seed of JWS execution proofs and the secp256k1 key of x402 offers and receipts, published at `/.well-known/jwks.json`',
  },
  {
    group: 'receipts',
    names: ['RECEIPT_RETIRED_JWKS'],
    default: 'none',
    meaning: 'JSON array of public JWKs (with `kid`, no `d`) kept in the JWKS after a key rotation, so older proofs still verify',
  },
  { group: 'chains', names: ['WALLET_MONITOR_CONFIRMATIONS'], default: '1 on anvil, 3 elsewhere', meaning: 'confirmation depth, one number or `chain=n,...`' },
  {
    group: 'chains',
    names: ['LIQUIDATION_DEPLOYMENTS'],
    default: '`npm start`: the lending dev data on the Ethereum dev chain',
    meaning:
      'JSON array of `{protocol, pool | comet | morpho, startBlock}` the worker indexes (see `apps/worker/src/liquidationsConfig.ts`); `LIQUIDATION_USD_FEEDS`, `LIQUIDATION_NATIVE_TOKEN` optional',
  },
  {
    group: 'gateway',
    names: ['GATEWAY_RATE_LIMIT'],
    default: '`100`',
    meaning:
      "requests per second per client IP on the gateway's endpoints (429 problem+json with `Retry-After`); the cached discovery documents are not limited; 0 disables",
  },
  {
    group: 'gateway',
    names: ['TRUST_PROXY'],
    default: 'unset',
    meaning: 'gateway and builder: take the client IP for rate limiting from the last `X-Forwarded-For` hop',
  },
  {
    group: 'money',
    names: ['PROVIDER_FEE_BPS'],
    default: '`1000`',
    meaning: 'the gateway\'s fee on provider capabilities, basis points 0..10000, rounded down (docs/decisions.md "Providers")',
  },
  {
    group: 'money',
    names: ['PROVIDER_DISPUTE_WINDOW_SECONDS'],
    default: '`86400`',
    meaning:
      "a provider's share stays `held` (and the payer may dispute) this long times the offer's trust tier multiplier (docs/trust-v1.md: new 2×, disputed 3×, trusted 0.25×), then becomes `available`",
  },
  {
    group: 'money',
    names: ['PROVIDER_PAYOUT_INTERVAL_SECONDS'],
    default: '`3600`',
    meaning: 'worker: seconds between payout passes (one pass per interval across all workers)',
  },
  { group: 'money', names: ['PROVIDER_PAYOUT_MIN_USDC'], default: '`1.00`', meaning: 'smallest payout (decimal USDC); smaller available balances wait' },
  {
    group: 'money',
    names: ['PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS'],
    default: '`604800`',
    meaning: 'an open dispute this old is released if the provider answered, refunded if not',
  },
  {
    group: 'payments',
    names: ['CHANNEL_CHECK_INTERVAL_SECONDS'],
    default: '`5`',
    meaning:
      'worker: seconds between passes over the x402 `batch-settlement` channels (one pass at a time across all workers, under a Redis lease; packages/channels README "Claims and settlement")',
  },
  {
    group: 'payments',
    names: ['CHANNEL_CLAIM_THRESHOLD_USDC'],
    default: '`1.00`',
    meaning: "a channel whose vouchers not yet claimed on chain reach this much (decimal USDC) is claimed at the worker's next pass",
  },
  {
    group: 'payments',
    names: ['CHANNEL_CLAIM_INTERVAL_SECONDS'],
    default: '`3600`',
    meaning: 'every channel with anything unclaimed is claimed at least this often, whatever its amount; claimed funds are settled to `PAY_TO_ADDRESS`',
  },
  {
    group: 'payments',
    names: ['CHANNEL_WITHDRAW_MARGIN_SECONDS'],
    default: '`600`',
    meaning: "a channel whose payer's timed withdrawal can be finalized within this many seconds is claimed at the next pass",
  },
  {
    group: 'payments',
    names: ['CHANNEL_REFUND_IDLE_SECONDS'],
    default: '`86400`',
    meaning: 'a channel without a paid call for this long is refunded cooperatively (the rest of its deposit back to the payer); `0` never',
  },
  {
    group: 'gateway',
    names: ['QUOTE_TTL_SECONDS'],
    default: '`60`',
    meaning: 'how long a quote\'s price holds (`POST /api/v1/quotes`; apps/gateway README "Quotes")',
  },
  {
    group: 'gateway',
    names: ['ADMIN_TOKEN'],
    default: 'unset (no admin routes: they answer 404)',
    meaning: 'bearer token of the admin routes (`POST /api/v1/disputes/{id}/resolve`), at least 16 characters',
  },
  { group: 'ops', names: ['LOG_LEVEL'], default: '`info`', meaning: 'pino log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`' },
  {
    group: 'ops',
    names: ['LOG_PRETTY'],
    default: 'off; on under `npm start` (set `0` there for JSON lines)',
    meaning: '`1`/`true`: readable one-line logs (pino-pretty) instead of JSON lines; `0`/`false`: JSON',
  },
  {
    group: 'ops',
    names: ['METRICS_TOKEN'],
    default: 'unset (`/metrics` open)',
    meaning: '16-512 visible ASCII characters: every `GET /metrics` (gateway, builder, worker) needs `Authorization: Bearer <token>`, else 401 problem+json',
  },
  {
    group: 'ops',
    names: ['WORKER_METRICS_PORT', 'WORKER_METRICS_HOST'],
    default: 'unset (no listener) / `127.0.0.1`',
    meaning: 'port where a worker process serves its `GET /metrics` (0 = a free port); the gateway and the builder serve `/metrics` on their own ports',
  },
  {
    group: 'ops',
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    default: 'unset (no tracing, nothing started)',
    meaning: 'OpenTelemetry traces over OTLP/HTTP (JSON) to `<endpoint>/v1/traces`, or to the traces URL as it is (docs/operating.md "Traces")',
  },
  {
    group: 'ops',
    names: ['OTEL_SERVICE_NAME', 'OTEL_SDK_DISABLED'],
    default: '`gateway`, `worker`, `builder`; `agent-capability-gateway` under `npm start` / unset',
    meaning:
      "the spans' `service.name`; `true` turns tracing off even with an endpoint. The SDK reads the other standard `OTEL_*` variables itself (`OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`)",
  },
  {
    group: 'redis',
    names: ['REDIS_CLUSTER_NODES'],
    default: 'unset (a single Redis)',
    meaning:
      '`host:port,...` startup nodes of a Redis Cluster: every connection becomes an ioredis `Cluster`; `REDIS_URL` then only gives user, password and TLS (docs/operating.md "Redis Cluster")',
  },
  {
    group: 'builder',
    names: ['GENESIS_FORK_VERSION'],
    default: '`0x00000000` (mainnet)',
    meaning: "consensus genesis fork version of the builder's signing domain (DOMAIN_APPLICATION_BUILDER)",
  },
  {
    group: 'builder',
    names: ['BEACON_GENESIS_TIME'],
    default: "mainnet `1606824023`; `npm start`: the dev chain's",
    meaning: 'beacon genesis time, UNIX seconds: BidTrace `slot` = (block timestamp − genesis) / 12',
  },
  {
    group: 'builder',
    names: ['BUILDER_SLOT_MS', 'BUILDER_HEAD_POLL_MS'],
    default: '`12000` / `500`',
    meaning: 'a block-construction attempt also runs every `BUILDER_SLOT_MS`; how often the chain head is polled, ms (apps/builder README)',
  },
  {
    group: 'builder',
    names: ['BUILDER_MAX_BODY_BYTES'],
    default: '`1048576` (1 MiB)',
    meaning: 'largest HTTP request body the builder accepts; larger is 413',
  },
  {
    group: 'provider',
    names: ['GATEWAY_URL'],
    default: '`npm start`: its own gateway',
    meaning: 'the gateway the example provider onboards with (required when it runs on its own)',
  },
  {
    group: 'provider',
    names: ['EXAMPLE_PROVIDER_PUBLIC_URL'],
    default: '`http://<host>:<port>`',
    meaning: 'the endpoint the example provider registers, when the gateway reaches it through another URL (a proxy, TLS)',
  },
  { group: 'provider', names: ['EXAMPLE_PROVIDER_NAME'], default: '`Example Provider`', meaning: "the catalog's `provider` name of the example provider" },
];

/** Every schema checked at startup, with the entries that read it. */
const CHECKED: readonly (readonly [string, EnvSpec])[] = [
  ['gateway, worker, `npm start`', GATEWAY_ENV],
  ['builder', BUILDER_ENV],
  ['`npm start`', DEVNET_ENV],
  ['example provider', EXAMPLE_PROVIDER_ENV],
  ['every entry', OTEL_ENV],
];

/** Every variable a startup schema checks (the union of the specs above). */
export function checkedVariables(): string[] {
  return [...new Set(CHECKED.flatMap(([, spec]) => Object.keys(spec)))];
}

/**
 * What the schema accepts, in its own words: the message it gives for a value no variable accepts
 * (`'must be an integer port 0..65535'`), or undefined when the variable has no schema or takes any text.
 */
export function acceptedValues(name: string): string | undefined {
  for (const [, spec] of CHECKED) {
    const schema = (spec as Record<string, z.ZodType<unknown, string>>)[name];
    if (!schema) continue;
    const result = schema.safeParse('\u0001');
    return result.success ? undefined : result.error.issues[0]?.message;
  }
  return undefined;
}

const HEADER = `<!-- Generated by \`npm run docs:config\` from packages/env/src/reference.ts and the schemas of
packages/env/src/env.ts. Do not edit: change those and run the script (a unit test fails when this file differs). -->

# Configuration

Every variable is optional in development: \`npm start\` fills in the embedded defaults.

Every entry (\`npm start\`, \`node dist/gateway.js\`, \`dist/builder.js\`, \`dist/worker.js\`) checks the whole
environment with zod (\`@acg/env\`) before it boots anything, and exits non-zero (2 for \`npm start\`, 1 for
the others) with one line per problem, all problems at once, each naming its variable, e.g.
\`GATEWAY_PORT=70000: must be an integer port 0..65535\`, \`LOG_LEVEL=loud: must be one of fatal, error,
warn, info, debug, trace, silent\`, \`PROBE_INTERVAL_SECONDS=-1: must be a number ≥ 0\`,
\`GATEWAY_PORT=8080: port already in use\`, \`REDIS_URL=redis://…: cannot connect (ECONNREFUSED)\` (one
connection attempt with a short timeout, no retry loop), and under \`npm start\`
\`PAY_TO_ADDRESS: required when PAYMENT_RPC_URL is set\` (setting \`PAYMENT_RPC_URL\` turns off the dev
defaults; \`PAY_TO_ADDRESS\` and \`FACILITATOR_PRIVATE_KEY\` or \`FACILITATOR_URL\` are then required).
Values of \`*_KEY\`, \`*_SECRET*\`, \`*_TOKEN\` and \`*_PASSWORD\` variables are never echoed.

For each variable: what it sets, its default, and, for those checked at startup, what the check
accepts (the schema's own message) and which entries check it.
`;

/** docs/configuration.md, as `npm run docs:config` writes it. */
export function renderConfigurationDoc(): string {
  const out = [HEADER];
  for (const [group, title] of Object.entries(ENV_GROUPS)) {
    const entries = ENV_REFERENCE.filter((e) => e.group === group);
    if (entries.length === 0) continue;
    out.push(`## ${title}\n`);
    for (const e of entries) {
      out.push(`- ${e.names.map((n) => `\`${n}\``).join(', ')}: ${e.meaning}`);
      out.push(`  - default: ${e.default}`);
      for (const name of e.names) {
        const accepted = acceptedValues(name);
        const by = CHECKED.filter(([, spec]) => name in spec).map(([who]) => who);
        if (by.length === 0) continue;
        const what = accepted ? `${accepted.replace(/^must be /, '')}` : 'any text';
        out.push(`  - ${e.names.length > 1 ? `\`${name}\` ` : ''}checked at startup (${by.join('; ')}): ${what}`);
      }
    }
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
