/**
 * `npm start`: the whole service on its embedded defaults, in one Node process (docs/architecture.md "Shape").
 *
 * - Payment chain: `PAYMENT_RPC_URL`, else a local anvil with chain id 8453, real USDC at the Base
 *   address and Multicall3 (port `DEVNET_PAYMENT_PORT`, default 8545, or a free one if taken).
 * - Redis: `REDIS_CLUSTER_NODES` (a Redis Cluster), else `REDIS_URL`, else 127.0.0.1:6379 if it
 *   answers, else a private redis-server (`appendonly yes`, `appendfsync always`). The `store` line
 *   says what the gateway read of its persistence; on the dev payment chain a setting that can lose
 *   writes is only warned about, with `PAYMENT_RPC_URL` it is refused (docs/durability.md).
 * - Gateway on `GATEWAY_PORT` (default 8080) with the dev accounts: index 0 facilitator (pays gas),
 *   index 1 treasury (payTo, sends refunds), indexes 2-9 funded buyers. With the dev payment chain it
 *   takes x402 `batch-settlement` beside `exact` (PAYMENT_SCHEMES overrides), so `npm run demo` shows a
 *   burst of calls over one channel.
 * - The example provider (apps/example-provider) as its own child process on `EXAMPLE_PROVIDER_PORT`
 *   (default 8090, or a free one if taken), wallet dev account 10 (`DEV_ROLES.provider`) unless
 *   `EXAMPLE_PROVIDER_PRIVATE_KEY` is set, reading the dev chains; it onboards itself through the
 *   gateway's public API like any third party. Runs with the dev payment chain, or with
 *   `EXAMPLE_PROVIDER_PRIVATE_KEY`; `EXAMPLE_PROVIDER=off` turns it off.
 * - With the dev payment chain, a second provider: the same app again with dev account 11
 *   (`DEV_ROLES.secondProvider`) on a free port, which joins the example provider's
 *   `intelligence.token_metadata` contract (cheaper, slower) through the same public API, so the
 *   contract has two offers to route and fail over between (docs/marketplace.md).
 * While it prepares, prints one line per step with the time it took; then a banner with every URL
 * (web pages first, then the APIs, chains and processes), both demos, the Python stub's command and
 * a funded dev-chain-only account. Every port it binds can be set (docs/configuration.md): the
 * gateway, builder, dev chains, the four dev relays (`DEVNET_RELAY_PORTS`), the example provider and
 * the second provider (`SECOND_PROVIDER_PORT`). Ctrl-C (SIGINT), SIGTERM and SIGHUP stop everything it
 * started and exit with 128 + the signal number (130, 143, 129); so does the death of the parent
 * process (e.g. `npm` killed), noticed within a second. A second signal exits at once (the managed
 * children are then SIGKILLed by the exit hook of `spawnManaged`).
 * With the dev payment chain, state lives under a fresh key prefix per run (`acg:dev:<ulid>:`);
 * the orderly stop deletes that prefix's keys (and only those: SCAN MATCH of the exact prefix,
 * never FLUSH) from a Redis it did not spawn, so a shared Redis keeps nothing of the run. A run
 * killed without stopping (`kill -9`) is cleaned up by the next launcher on that Redis: each run
 * registers its prefix in `acg:dev:runs` with a liveness key it renews (@acg/devnet `registerDevRun`),
 * and a start first removes the keys of registered runs whose liveness key expired (`removeDeadDevRuns`).
 * `REDIS_KEY_PREFIX` set: the prefix is the user's, and nothing is deleted.
 * The worker's variables (PAYMENT_RECOVERY_*, LIQUIDATION_*) are read as `node dist/worker.js` reads them (`workerOptionsFromEnv`).
 * Traces (OpenTelemetry) go to `OTEL_EXPORTER_OTLP_ENDPOINT` when it is set.
 */
import {
  BUILDER_ENV,
  DEV_RELAY_PORT_ORDER,
  devDefaultsProblems,
  DEVNET_ENV,
  EnvError,
  EXAMPLE_PROVIDER_ENV,
  GATEWAY_ENV,
  guardProcess,
  portProblems,
  readEnv,
  redisClusterProblem,
  redisProblem,
  type EnvValues,
  type PortCheck,
} from '@acg/env';
import { builderConfigFromEnv, parseRelayUrls, startBuilder, startDevRelays, type DevRelays, type RunningBuilder } from '@acg/builder';
import { configFromEnv, type ConfigDefaults } from '@acg/config';
import { devReceiptKeys } from '@acg/receipts';
import { startGateway, type RunningGateway, type StoreDurabilityCheck } from '@acg/gateway';
import { webhookPolicyFromEnv } from '@acg/net-guard';
import { paymentRecoveryFromEnv, startWorker, workerOptionsFromEnv, type RunningWorker } from '@acg/worker';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { createLogger, logPrettyFromEnv, startTracing, type Tracing } from '@acg/observability';
import { ulid } from 'ulid';
import {
  BASE_CHAIN_ID,
  devAccount,
  devPrivateKey,
  deleteKeysWithPrefix,
  DEV_ROLES,
  registerDevRun,
  removeDeadDevRuns,
  freePort,
  isPortFree,
  lendingIndexerConfig,
  resolveRedis,
  setupLendingDevnet,
  setupPaymentChain,
  startAnvil,
  startDevChain,
  watchParent,
  type AnvilInstance,
  type DevChain,
  type LendingDevnet,
  type RedisHandle,
} from '@acg/devnet';
import { demoCommand } from './demoCommand.js';
import { devSessionFragment } from './devSignIn.js';
import { spawnExampleProvider, type ExampleProvider } from './exampleProvider.js';

const env = process.env;
/** The example provider runs with the dev payment chain (dev wallet), or with a wallet of the user's; `EXAMPLE_PROVIDER=off` stops it. */
/** The second provider `npm start` runs: the example provider again, joining one of its contracts cheaper and slower (docs/marketplace.md). */
const SECOND_PROVIDER = { name: 'Second Provider', capabilityId: 'intelligence.token_metadata', priceUsdc: '0.0015', delayMs: 250 } as const;
const exampleProviderWanted = env.EXAMPLE_PROVIDER !== 'off' && (!env.PAYMENT_RPC_URL || Boolean(env.EXAMPLE_PROVIDER_PRIVATE_KEY));

/**
 * Every problem of the environment, found before anything boots: each variable's format (zod,
 * @acg/env), the `PAYMENT_RPC_URL` rule, then the ports this process will listen on and a set
 * `REDIS_URL` (one connection attempt, short timeout). One line per problem, naming the variable.
 */
const LAUNCHER_ENV = { ...GATEWAY_ENV, ...BUILDER_ENV, ...DEVNET_ENV, ...EXAMPLE_PROVIDER_ENV };
async function environmentProblems(): Promise<{ problems: string[]; values: EnvValues<typeof LAUNCHER_ENV> }> {
  const { values: v, problems } = readEnv(LAUNCHER_ENV, env);
  problems.push(...devDefaultsProblems(env));
  try {
    if (env.RELAY_URLS) parseRelayUrls(env.RELAY_URLS);
  } catch (e) {
    problems.push(...(e as EnvError).problems);
  }
  try {
    paymentRecoveryFromEnv(env);
  } catch (e) {
    problems.push((e as Error).message);
  }
  try {
    webhookPolicyFromEnv(env);
  } catch (e) {
    problems.push((e as Error).message);
  }
  const ports: PortCheck[] = [
    { name: 'GATEWAY_PORT', port: v.GATEWAY_PORT ?? 8080, host: env.GATEWAY_HOST || '127.0.0.1' },
    { name: 'BUILDER_PORT', port: v.BUILDER_PORT ?? 8081, host: env.BUILDER_HOST || '127.0.0.1' },
  ];
  if (v.WORKER_METRICS_PORT) ports.push({ name: 'WORKER_METRICS_PORT', port: v.WORKER_METRICS_PORT, host: env.WORKER_METRICS_HOST || '127.0.0.1' });
  // a dev chain's default port falls back to a free one when taken; a port set explicitly must be free
  if (!env.PAYMENT_RPC_URL && v.DEVNET_PAYMENT_PORT !== undefined) ports.push({ name: 'DEVNET_PAYMENT_PORT', port: v.DEVNET_PAYMENT_PORT });
  if (!env.ETHEREUM_RPC_URL && v.DEVNET_ETHEREUM_PORT !== undefined) ports.push({ name: 'DEVNET_ETHEREUM_PORT', port: v.DEVNET_ETHEREUM_PORT });
  if (!env.ARBITRUM_RPC_URL && v.DEVNET_ARBITRUM_PORT !== undefined) ports.push({ name: 'DEVNET_ARBITRUM_PORT', port: v.DEVNET_ARBITRUM_PORT });
  if (exampleProviderWanted && v.EXAMPLE_PROVIDER_PORT !== undefined) {
    ports.push({ name: 'EXAMPLE_PROVIDER_PORT', port: v.EXAMPLE_PROVIDER_PORT, host: v.EXAMPLE_PROVIDER_HOST });
  }
  if (!env.RELAY_URLS && v.DEVNET_RELAY_PORTS) for (const port of v.DEVNET_RELAY_PORTS) ports.push({ name: 'DEVNET_RELAY_PORTS', port });
  if (exampleProviderWanted && !env.PAYMENT_RPC_URL && v.SECOND_PROVIDER_PORT !== undefined)
    ports.push({ name: 'SECOND_PROVIDER_PORT', port: v.SECOND_PROVIDER_PORT });
  const [portIssues, redisIssue] = await Promise.all([
    portProblems(ports.filter((p, i) => ports.findIndex((q) => q.port === p.port) === i)),
    v.REDIS_CLUSTER_NODES
      ? redisClusterProblem('REDIS_CLUSTER_NODES', v.REDIS_CLUSTER_NODES, v.REDIS_URL)
      : v.REDIS_URL
        ? redisProblem('REDIS_URL', v.REDIS_URL)
        : undefined,
  ]);
  return { problems: [...problems, ...portIssues, ...(redisIssue ? [redisIssue] : [])], values: v };
}

const { problems, values: envValues } = await environmentProblems();
if (problems.length > 0) {
  process.stderr.write(`npm start: ${new EnvError(problems).message}\n`);
  process.exit(2);
}

// readable logs by default here (a developer's terminal); LOG_PRETTY=0 gives JSON lines
const pretty = logPrettyFromEnv(env, true);
const log = createLogger({ service: 'launcher', level: env.LOG_LEVEL || 'info', pretty });
const line = (name: string, value: string) => process.stdout.write(`  ${name.padEnd(16)} ${value}\n`);
const launchStarted = performance.now();
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
/**
 * One step of the preparation: prints `  <label> ...` before it and the time it took (and `done(result)`,
 * e.g. its URL) after it, on one line unless something else printed in between.
 */
async function step<T>(label: string, run: () => Promise<T>, done?: (result: T) => string): Promise<T> {
  const started = performance.now();
  process.stdout.write(`  ${label} ...`);
  const result = await run();
  process.stdout.write(` ${seconds(started)}${done ? `: ${done(result)}` : ''}\n`);
  return result;
}
// OpenTelemetry traces of all three services (one process, one service.name) when OTEL_EXPORTER_OTLP_ENDPOINT is set
const tracing: Tracing = startTracing({ serviceName: 'agent-capability-gateway', log });

let anvil: AnvilInstance | undefined;
let redis: RedisHandle | undefined;
let gateway: RunningGateway | undefined;
let worker: RunningWorker | undefined;
let ethereum: DevChain | undefined;
let relays: DevRelays | undefined;
let builder: RunningBuilder | undefined;
let lending: LendingDevnet | undefined;
let arbitrum: DevChain | undefined;
let exampleProvider: ExampleProvider | undefined;
let secondProvider: ExampleProvider | undefined;
let stopping = false;

/** The banner's `store` line: the Redis persistence setting the gateway read at start and, unless durable, what it risks (docs/durability.md). */
function storeLine(store: StoreDurabilityCheck): string {
  if (store.decision === 'durable') return `${store.setting}: every acknowledged write is on disk before it is answered`;
  const why = store.decision === 'dev_defaults' ? 'dev defaults only; production refuses it' : 'ALLOW_NON_DURABLE_STORE=true';
  return `${store.setting} (${why}). RISK: ${store.risk}`;
}

/** The per-run key prefix this process made up (deleted from a shared Redis on stop), if any. */
let runPrefix: string | undefined;
/** This run's registration on a shared Redis (so a later run can clean up after a `kill -9`). */
let runRegistration: { stop(): Promise<void> } | undefined;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    process.stdout.write('\nstopping...\n');
    await secondProvider?.stop().catch(() => undefined);
    await exampleProvider?.stop().catch(() => undefined);
    await gateway?.close().catch(() => undefined);
    await worker?.close().catch(() => undefined);
    await builder?.close().catch(() => undefined);
    await tracing.shutdown();
    await relays?.close().catch(() => undefined);
    await ethereum?.stop().catch(() => undefined);
    await arbitrum?.stop().catch(() => undefined);
    await anvil?.stop().catch(() => undefined);
    // this run's keys (its own per-run prefix only; never another prefix, never a FLUSH) leave a shared Redis with it
    if (runPrefix && redis && !redis.spawned) {
      const clusterNodes = env.REDIS_CLUSTER_NODES?.split(',').map((n) => n.trim());
      await runRegistration?.stop().catch(() => undefined);
      const removed = await deleteKeysWithPrefix(redis.url, runPrefix, { clusterNodes }).catch(() => undefined);
      if (removed !== undefined) process.stdout.write(`removed ${removed} Redis keys of this run (prefix ${runPrefix})\n`);
    }
    await redis?.stop().catch(() => undefined);
  }
  process.exit(code);
}
// an unhandled rejection (a library's unawaited call while a chain is down) is logged, not fatal
guardProcess(log, () => stop(1));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => void stop(128 + osConstants.signals[signal]));
}
// `npm start` runs this process directly (`exec` in the script); if npm is killed outright, stop too.
// Ctrl-C reaches npm and this process together and npm exits at once: its death while this
// process is already stopping must not cut the stop short (the run's Redis keys would stay).
watchParent(() => {
  if (!stopping) void stop(128 + osConstants.signals.SIGHUP);
});

try {
  const defaults: ConfigDefaults = { payment: {}, logPretty: pretty };
  if (!env.PAYMENT_RPC_URL) {
    const wanted = Number(env.DEVNET_PAYMENT_PORT || 8545);
    const port = (await isPortFree(wanted)) ? wanted : undefined;
    process.stdout.write('Preparing the dev stack (one line per step, with the time it took):\n');
    anvil = await step(
      'payment chain (anvil, chain id 8453)',
      () => startAnvil({ chainId: BASE_CHAIN_ID, port, quiet: true }),
      (a) => a.rpcUrl,
    );
    const paymentRpc = anvil.rpcUrl;
    const chain = await step('USDC, Multicall3 and Permit2 on the payment chain, funded dev accounts', () => setupPaymentChain(paymentRpc));
    // State only means something with this chain: a fresh key prefix per run, so a shared Redis
    // never replays an earlier run's jobs or refunds onto a new chain (REDIS_KEY_PREFIX overrides).
    // (hash-tagged on a Redis Cluster: docs/operating.md)
    defaults.keyPrefix = env.REDIS_CLUSTER_NODES ? `{acg:dev:${ulid()}}:` : `acg:dev:${ulid()}:`;
    // removed on stop, unless REDIS_KEY_PREFIX names the prefix (then the keys are the operator's)
    if (!env.REDIS_KEY_PREFIX) runPrefix = defaults.keyPrefix;
    // the dev defaults may use a shared Redis that is not ours to configure: a non-durable one is told in the banner, not refused (docs/durability.md)
    defaults.store = { devDefaults: true };
    defaults.payment = {
      rpcUrl: anvil.rpcUrl,
      payTo: chain.treasury.address,
      facilitatorPrivateKey: devPrivateKey(DEV_ROLES.facilitator),
      treasuryPrivateKey: devPrivateKey(DEV_ROLES.treasury),
      // anvil mines only when a transaction arrives, so its `finalized` tag lags far behind: a
      // transfer is final two blocks under the head (PAYMENT_FINALITY overrides)
      finality: { depth: 2 },
      // the dev chain has our x402BatchSettlement at its canonical address and this process runs the
      // worker's channel pass: channels are offered beside `exact` (PAYMENT_SCHEMES overrides; the
      // gateway's own default, with PAYMENT_RPC_URL, stays `exact`; docs/decisions.md "batch-settlement")
      schemes: ['exact', 'batch-settlement'],
    };
  }
  if (!env.ETHEREUM_RPC_URL) {
    // Ethereum dev chain (chain id 1): bundles target it (FIFO ordering so a sealed block keeps bundle order)
    const ethereumPort = Number(env.DEVNET_ETHEREUM_PORT || 8546);
    const freeEthereumPort = (await isPortFree(ethereumPort)) ? ethereumPort : undefined;
    ethereum = await step(
      'Ethereum dev chain (anvil, chain id 1)',
      () => startDevChain('ethereum', { port: freeEthereumPort, extraArgs: ['--order', 'fifo'] }),
      (c) => c.rpcUrl,
    );
    defaults.chains = { ...defaults.chains, ethereum: ethereum.rpcUrl };
    // lending dev data for the liquidation search: Aave v3 (as Aave and as Spark), Morpho Blue, a Comet market, seeded positions
    const ethereumRpc = ethereum.rpcUrl;
    lending = await step(
      'lending dev data: Aave v3, Spark, Compound v3, Morpho Blue and seeded positions (the first run compiles Morpho Blue with solc-js, about 40 s)',
      () => setupLendingDevnet(ethereumRpc),
      (l) => `${l.positions.length} positions`,
    );
  }
  if (!env.ARBITRUM_RPC_URL) {
    // Arbitrum dev chain (chain id 42161) for the wallet monitor; Base is the payment chain itself
    const arbitrumPort = Number(env.DEVNET_ARBITRUM_PORT || 8547);
    const freeArbitrumPort = (await isPortFree(arbitrumPort)) ? arbitrumPort : undefined;
    arbitrum = await step(
      'Arbitrum dev chain (anvil, chain id 42161)',
      () => startDevChain('arbitrum', { port: freeArbitrumPort }),
      (c) => c.rpcUrl,
    );
    defaults.chains = { ...defaults.chains, arbitrum: arbitrum.rpcUrl };
  }
  if (anvil) {
    // embedded defaults are a development setup: webhooks may go to http://127.0.0.1 receivers (WEBHOOK_POLICY overrides)
    // a key per run encrypts webhook signing secrets at rest (WEBHOOK_SECRET_KEY overrides; production must set one)
    defaults.walletMonitor = { webhookPolicy: 'development', webhookSecretKey: randomBytes(32).toString('hex') };
    // development receipt keys (stable, neither the treasury's nor the facilitator's); RECEIPT_JWS_KEY and RECEIPT_SIGNING_KEY override
    defaults.receipts = devReceiptKeys();
  }
  redis = env.REDIS_CLUSTER_NODES
    ? { url: env.REDIS_URL || `redis://${env.REDIS_CLUSTER_NODES.split(',')[0].trim()}`, spawned: false, stop: async () => undefined }
    : await step(
        'Redis',
        () => resolveRedis({ url: env.REDIS_URL }),
        (r) => `${r.url}${r.spawned ? ' (a private redis-server on a free port: nothing answered on 127.0.0.1:6379; set REDIS_URL to choose)' : ''}`,
      );
  defaults.redisUrl = redis.url;
  if (runPrefix && !redis.spawned) {
    // a run killed without stopping (kill -9) left its keys: remove them now (only runs whose launcher is gone), then register this one
    const clusterNodes = env.REDIS_CLUSTER_NODES?.split(',').map((n) => n.trim());
    const dead = await removeDeadDevRuns(redis.url, { clusterNodes });
    for (const run of dead) process.stdout.write(`removed ${run.removed} Redis keys of an earlier run that did not stop (prefix ${run.prefix})\n`);
    runRegistration = await registerDevRun(redis.url, runPrefix, { clusterNodes });
  }
  // the four dev relays list the dev validator as the proposer of each upcoming dev slot (slot = block number)
  if (!env.RELAY_URLS) {
    // DEVNET_RELAY_PORTS (checked free before boot) sets their ports, in the order of DEV_RELAY_PORT_ORDER; else free ports
    const relayPorts = envValues.DEVNET_RELAY_PORTS;
    relays = await step(
      'four dev relays',
      () =>
        startDevRelays({
          ethereumRpcUrl: env.ETHEREUM_RPC_URL || ethereum?.rpcUrl,
          relay: relayPorts ? Object.fromEntries(DEV_RELAY_PORT_ORDER.map((name, i) => [name, { port: relayPorts[i] }])) : undefined,
        }),
      (r) => r.relays.map((x) => x.url.replace(/^http:\/\/127\.0\.0\.1/, '')).join(' '),
    );
  }
  const builderPort = Number(env.BUILDER_PORT || 8081);
  defaults.builderUrl = env.BUILDER_URL ?? `http://127.0.0.1:${builderPort}`;
  const config = configFromEnv(env, defaults);
  const builderLog = createLogger({ service: 'builder', level: config.logLevel, pretty });
  const builderConfig = builderConfigFromEnv(env, {
    redisUrl: redis.url,
    keyPrefix: config.keyPrefix,
    ethereumRpcUrl: config.chains.ethereum,
    ...(relays ? { relays: relays.relays } : {}),
    devMining: Boolean(ethereum),
    slotMs: 12_000,
    logPretty: pretty,
  });
  builder = await step(
    'builder',
    () => startBuilder(builderConfig, { log: builderLog }),
    (b) => b.url,
  );
  // one process (docs/architecture.md "Shape"): the worker runs the job runner, the refunds and the provider payouts; the gateway serves HTTP
  // the worker's variables (PAYMENT_RECOVERY_*, LIQUIDATION_*) through the same function as `node dist/worker.js`
  worker = await step('worker (jobs, refunds, payouts, liquidation indexer, wallet monitor)', () =>
    startWorker(config, {
      log: createLogger({ service: 'worker', level: config.logLevel, pretty }),
      ...workerOptionsFromEnv(env, config),
      ...(lending && config.chains.ethereum && !env.LIQUIDATION_DEPLOYMENTS
        ? { liquidations: { chain: 'ethereum' as const, rpcUrl: config.chains.ethereum, ...lendingIndexerConfig(lending.deployment) } }
        : {}),
    }),
  );
  gateway = await step(
    'gateway',
    () => startGateway(config, { log: createLogger({ service: 'gateway', level: config.logLevel, pretty }), refundWorker: false }),
    (g) => g.url,
  );

  // the example provider: its own process, onboarded through the gateway's public API (docs/decisions.md "Providers")
  let exampleProviderId: string | undefined;
  let exampleProviderLine = 'off (EXAMPLE_PROVIDER=off, or PAYMENT_RPC_URL without EXAMPLE_PROVIDER_PRIVATE_KEY)';
  const http = (url: string | undefined) => (url && /^https?:/.test(url) ? url : undefined);
  if (exampleProviderWanted) {
    // a port set explicitly was checked free before boot; the default falls back to a free one when taken
    const wanted = Number(env.EXAMPLE_PROVIDER_PORT || 8090);
    const port = env.EXAMPLE_PROVIDER_PORT || (await isPortFree(wanted)) ? wanted : await freePort();
    const wallet = env.EXAMPLE_PROVIDER_PRIVATE_KEY ? 'EXAMPLE_PROVIDER_PRIVATE_KEY' : `dev account ${DEV_ROLES.provider}`;
    try {
      process.stdout.write(`  example provider (own process, onboards through the public API) ...`);
      const providerStarted = performance.now();
      exampleProvider = await spawnExampleProvider({
        gatewayUrl: gateway.url,
        privateKey: env.EXAMPLE_PROVIDER_PRIVATE_KEY || devPrivateKey(DEV_ROLES.provider),
        port,
        host: env.EXAMPLE_PROVIDER_HOST || undefined,
        rpcUrls: {
          base: http(env.EXAMPLE_PROVIDER_RPC_BASE || config.chains.base),
          ethereum: http(env.EXAMPLE_PROVIDER_RPC_ETHEREUM || config.chains.ethereum),
          arbitrum: http(env.EXAMPLE_PROVIDER_RPC_ARBITRUM || config.chains.arbitrum),
        },
        logLevel: config.logLevel,
        pretty,
      });
      // the first attempt answers at once (the gateway is up); later retries report below
      const outcome = await exampleProvider.firstOutcome(15_000);
      process.stdout.write(` ${seconds(providerStarted)}: ${exampleProvider.url}\n`);
      const who = `${wallet} ${exampleProvider.address}`;
      if (outcome?.event === 'registered') exampleProviderId = outcome.provider_id;
      exampleProviderLine =
        outcome?.event === 'registered'
          ? `${exampleProvider.url} (provider ${outcome.provider_id}, ${outcome.capabilities.map((c) => c.id).join(', ')}; ${who})`
          : `${exampleProvider.url} (${who}; onboarding ${outcome?.event === 'onboarding_failed' ? 'refused' : 'retrying'}: ${outcome?.detail ?? 'no answer yet'})`;
      exampleProvider.onMessage((m) => {
        if (m.event === 'registered') line('example provider', `${exampleProvider?.url} registered as provider ${m.provider_id}`);
      });
      void exampleProvider.process.exited.then((exit) => {
        if (!stopping) log.warn({ code: exit.code, signal: exit.signal }, 'the example provider exited');
      });
    } catch (e) {
      // the example provider is a demonstration: its failure does not stop the gateway
      exampleProviderLine = `not running: ${(e as Error).message}`;
    }
  }

  // a second provider (the same app, another wallet) joins one contract, cheaper and slower: /registry and the catalog page show two offers
  let secondProviderLine = 'off (runs with the dev payment chain and the example provider)';
  if (anvil && exampleProvider && !env.EXAMPLE_PROVIDER_PRIVATE_KEY) {
    try {
      process.stdout.write(`  second provider (joins ${SECOND_PROVIDER.capabilityId}) ...`);
      const providerStarted = performance.now();
      secondProvider = await spawnExampleProvider({
        gatewayUrl: gateway.url,
        privateKey: devPrivateKey(DEV_ROLES.secondProvider),
        // SECOND_PROVIDER_PORT was checked free before boot; else a free port
        port: envValues.SECOND_PROVIDER_PORT || (await freePort()),
        rpcUrls: { base: http(config.chains.base), ethereum: http(config.chains.ethereum), arbitrum: http(config.chains.arbitrum) },
        logLevel: config.logLevel,
        name: SECOND_PROVIDER.name,
        join: [SECOND_PROVIDER.capabilityId],
        priceUsdc: SECOND_PROVIDER.priceUsdc,
        delayMs: SECOND_PROVIDER.delayMs,
        label: 'second-provider',
        pretty,
      });
      const outcome = await secondProvider.firstOutcome(15_000);
      process.stdout.write(` ${seconds(providerStarted)}: ${secondProvider.url}\n`);
      const who = `dev account ${DEV_ROLES.secondProvider} ${secondProvider.address}`;
      secondProviderLine =
        outcome?.event === 'registered'
          ? `${secondProvider.url} (provider ${outcome.provider_id}, joins ${SECOND_PROVIDER.capabilityId} at ${SECOND_PROVIDER.priceUsdc} USDC, +${SECOND_PROVIDER.delayMs} ms; ${who})`
          : `${secondProvider.url} (${who}; onboarding ${outcome?.event === 'onboarding_failed' ? 'refused' : 'retrying'}: ${outcome?.detail ?? 'no answer yet'})`;
      void secondProvider.process.exited.then((exit) => {
        if (!stopping) log.warn({ code: exit.code, signal: exit.signal }, 'the second provider exited');
      });
    } catch (e) {
      secondProviderLine = `not running: ${(e as Error).message}`;
    }
  }

  const demoKeyIndex = DEV_ROLES.buyers[0];
  const demoAccount = devAccount(demoKeyIndex).address;
  // one-click dev sign-in links (dev chain only): the provider dashboard as the example provider's wallet, subscriptions as the demo account
  const devLinks: [string, string][] = [];
  if (anvil && !env.EXAMPLE_PROVIDER_PRIVATE_KEY) {
    try {
      if (exampleProviderId) {
        devLinks.push([
          'provider (dev)',
          `${gateway.url}/providers/${exampleProviderId}${await devSessionFragment(gateway.url, devAccount(DEV_ROLES.provider))}`,
        ]);
      }
      devLinks.push([
        'subscriptions',
        `${gateway.url}/subscriptions/<subscription_id>${await devSessionFragment(gateway.url, devAccount(demoKeyIndex))} (signed in as dev account ${demoKeyIndex}, which the demos pay with)`,
      ]);
    } catch (e) {
      devLinks.push(['dev sign-in', `unavailable: ${(e as Error).message}`]);
    }
  }
  process.stdout.write(`\nAgent capability gateway is up (ready in ${seconds(launchStarted)}):\n\n`);
  process.stdout.write('In a browser:\n');
  line('catalog', `${gateway.url}/`);
  line('status', `${gateway.url}/status`);
  line('providers', `${gateway.url}/providers/onboard (become a provider; each provider's dashboard is /providers/{id})`);
  if (devLinks.length > 0) {
    process.stdout.write('One-click dev sign-in (dev chain only; the token is in the link, keep it to yourself):\n');
    for (const [name, url] of devLinks) line(name, url);
  }
  process.stdout.write('APIs:\n');
  line('gateway', gateway.url);
  line('registry', `${gateway.url}/registry (also ${gateway.url}/gateway-catalog.json, /llms.txt)`);
  line('openapi', `${gateway.url}/openapi.json`);
  line('health', `${gateway.url}/status/health`);
  line('mcp', `${gateway.url}/mcp (Streamable HTTP; MCP host config: {"mcpServers": {"acg": {"url": "${gateway.url}/mcp"}}})`);
  line('builder', `${builder.rpcUrl} (eth_sendBundle, BLS ${builder.blsPublicKey.slice(0, 18)}…)`);
  line(
    'metrics',
    `${gateway.url}/metrics, ${builder.url}/metrics${worker.metrics.server ? `, ${worker.metrics.server.url}` : ' (worker: set WORKER_METRICS_PORT)'}${config.metrics.token ? ' (METRICS_TOKEN)' : ''}`,
  );
  process.stdout.write('Chains:\n');
  line('payment chain', `${config.payment.rpcUrl} (eip155:${config.payment.chain.id}${anvil ? ', local anvil' : ''})`);
  line('USDC', config.payment.asset);
  line(
    'x402 schemes',
    `${config.payment.schemes.join(', ')}${config.payment.schemes.includes('batch-settlement') ? '' : ' (PAYMENT_SCHEMES=exact,batch-settlement adds payment channels)'}; upto where the cost is known only afterwards`,
  );
  line('ethereum chain', `${config.chains.ethereum ?? 'not configured'}${ethereum ? ' (chain 1, local anvil)' : ''}`);
  line('arbitrum chain', `${config.chains.arbitrum ?? 'not configured'}${arbitrum ? ' (chain 42161, local anvil)' : ''}`);
  line('relays', relays ? `${relays.relays.length} local dev relays: ${relays.relayUrls}` : 'RELAY_URLS');
  if (lending)
    line(
      'lending',
      `Aave ${lending.deployment.aave.pool}, Spark ${lending.deployment.spark.pool}, Comet ${lending.deployment.comet.address}, Morpho ${lending.deployment.morpho.address} (${lending.positions.length} seeded positions)`,
    );
  process.stdout.write('Processes and state:\n');
  line(
    'worker',
    `in-process: ${worker.workers.map((w) => w.name).join(', ')}${worker.indexer ? ', liquidation indexer' : ''}${worker.walletMonitor ? `, wallet monitor (${worker.walletMonitor.watchers.length} chain watchers, webhook policy ${config.walletMonitor?.webhookPolicy})` : ''}`,
  );
  line(
    'payouts',
    worker.payouts
      ? `provider payouts every ${config.providers.payoutIntervalSeconds} s from the treasury (min ${Number(config.providers.payoutMinBaseUnits) / 1e6} USDC, fee ${config.providers.feeBps} bps, dispute window ${config.providers.disputeWindowSeconds} s)${config.adminToken ? '' : '; ADMIN_TOKEN unset: no admin routes'}`
      : 'off',
  );
  line('example provider', exampleProviderLine);
  line('second provider', secondProviderLine);
  line(
    'redis',
    `${config.redisClusterNodes ? `cluster ${config.redisClusterNodes.join(',')}` : redis.url}${redis.spawned ? ' (private, spawned)' : ''}, key prefix ${config.keyPrefix}${runPrefix && !redis.spawned ? ' (this run only: deleted at stop)' : ''}`,
  );
  line('store', storeLine(gateway.store));
  line('traces', tracing.enabled ? `${tracing.url} (OTLP/HTTP)` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)');
  if (anvil) {
    line('facilitator', `${devAccount(DEV_ROLES.facilitator).address} (dev account 0)`);
    line('treasury/payTo', `${config.payment.payTo} (dev account 1)`);
    process.stdout.write("Dev account (DEV CHAIN ONLY: a public test key from anvil's mnemonic; never send real funds to it):\n");
    line('address', `${demoAccount} (dev account ${demoKeyIndex}, 10,000 USDC; accounts 2-9 are funded alike)`);
    line('private key', devPrivateKey(demoKeyIndex));
  }
  const url = gateway.url;
  process.stdout.write('\nTry (each pays from the dev account above):\n');
  process.stdout.write(
    `  ${demoCommand(url, Boolean(anvil), 'demo', config.payment.rpcUrl)}      # JS SDK: 0.001 USDC for one call, 20 calls over a batch-settlement channel, then a job, an MCP task and a liquidation search (0.044 USDC in all)\n`,
  );
  process.stdout.write(`  ${demoCommand(url, Boolean(anvil), 'demo:mcp')}  # MCP: lists the tools, pays one tool call (0.001 USDC)\n`);
  if (anvil) {
    process.stdout.write(
      `  cd sdk-python-stub && ACG_PRIVATE_KEY=${devPrivateKey(demoKeyIndex)} python3 -m acg_gateway --base-url ${url} execute intelligence.wallet_balances '{"address": "${demoAccount}"}' --per-call-usdc 0.01\n`,
    );
  }
  process.stdout.write('Ctrl-C stops everything.\n');
} catch (e) {
  process.stderr.write(`\nstartup failed: ${(e as Error).message}\n`);
  await stop(1);
}
