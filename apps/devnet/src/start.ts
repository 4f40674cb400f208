/**
 * `npm start`: the whole service on its embedded defaults, in one Node process (DESIGN 1).
 *
 * - Payment chain: `PAYMENT_RPC_URL`, else a local anvil with chain id 8453, real USDC at the Base
 *   address and Multicall3 (port `DEVNET_PAYMENT_PORT`, default 8545, or a free one if taken).
 * - Redis: `REDIS_URL`, else 127.0.0.1:6379 if it answers, else a private redis-server.
 * - Gateway on `GATEWAY_PORT` (default 8080) with the dev accounts: index 0 facilitator (pays gas),
 *   index 1 treasury (payTo, sends refunds), indexes 2-9 funded buyers.
 * Prints one line per service with its URL. Ctrl-C (SIGINT), SIGTERM and SIGHUP stop everything it
 * started and exit with 128 + the signal number (130, 143, 129); so does the death of the parent
 * process (e.g. `npm` killed), noticed within a second. A second signal exits at once (the managed
 * children are then SIGKILLed by the exit hook of `spawnManaged`).
 */
import {
  BUILDER_ENV,
  devDefaultsProblems,
  DEVNET_ENV,
  EnvError,
  GATEWAY_ENV,
  guardProcess,
  portProblems,
  readEnv,
  redisProblem,
  type PortCheck,
} from '@acg/env';
import { builderConfigFromEnv, parseRelayUrls, startBuilder, startDevRelays, type DevRelays, type RunningBuilder } from '@acg/builder';
import { configFromEnv, type ConfigDefaults } from '@acg/config';
import { startGateway, type RunningGateway } from '@acg/gateway';
import { webhookPolicyFromEnv } from '@acg/wallet-monitor';
import { startWorker, type RunningWorker } from '@acg/worker';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { pino } from 'pino';
import { ulid } from 'ulid';
import {
  BASE_CHAIN_ID,
  devAccount,
  devPrivateKey,
  DEV_ROLES,
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

const env = process.env;

/**
 * Every problem of the environment, found before anything boots: each variable's format (zod,
 * @acg/env), the `PAYMENT_RPC_URL` rule, then the ports this process will listen on and a set
 * `REDIS_URL` (one connection attempt, short timeout). One line per problem, naming the variable.
 */
async function environmentProblems(): Promise<string[]> {
  const { values: v, problems } = readEnv({ ...GATEWAY_ENV, ...BUILDER_ENV, ...DEVNET_ENV }, env);
  problems.push(...devDefaultsProblems(env));
  try {
    if (env.RELAY_URLS) parseRelayUrls(env.RELAY_URLS);
  } catch (e) {
    problems.push(...(e as EnvError).problems);
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
  // a dev chain's default port falls back to a free one when taken; a port set explicitly must be free
  if (!env.PAYMENT_RPC_URL && v.DEVNET_PAYMENT_PORT !== undefined) ports.push({ name: 'DEVNET_PAYMENT_PORT', port: v.DEVNET_PAYMENT_PORT });
  if (!env.ETHEREUM_RPC_URL && v.DEVNET_ETHEREUM_PORT !== undefined) ports.push({ name: 'DEVNET_ETHEREUM_PORT', port: v.DEVNET_ETHEREUM_PORT });
  if (!env.ARBITRUM_RPC_URL && v.DEVNET_ARBITRUM_PORT !== undefined) ports.push({ name: 'DEVNET_ARBITRUM_PORT', port: v.DEVNET_ARBITRUM_PORT });
  const [portIssues, redisIssue] = await Promise.all([
    portProblems(ports.filter((p, i) => ports.findIndex((q) => q.port === p.port) === i)),
    v.REDIS_URL ? redisProblem('REDIS_URL', v.REDIS_URL) : undefined,
  ]);
  return [...problems, ...portIssues, ...(redisIssue ? [redisIssue] : [])];
}

const problems = await environmentProblems();
if (problems.length > 0) {
  process.stderr.write(`npm start: ${new EnvError(problems).message}\n`);
  process.exit(2);
}

const log = pino({ level: env.LOG_LEVEL || 'info', base: { service: 'launcher' } });
const line = (name: string, value: string) => process.stdout.write(`  ${name.padEnd(16)} ${value}\n`);

let anvil: AnvilInstance | undefined;
let redis: RedisHandle | undefined;
let gateway: RunningGateway | undefined;
let worker: RunningWorker | undefined;
let ethereum: DevChain | undefined;
let relays: DevRelays | undefined;
let builder: RunningBuilder | undefined;
let lending: LendingDevnet | undefined;
let arbitrum: DevChain | undefined;
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    process.stdout.write('\nstopping...\n');
    await gateway?.close().catch(() => undefined);
    await worker?.close().catch(() => undefined);
    await builder?.close().catch(() => undefined);
    await relays?.close().catch(() => undefined);
    await ethereum?.stop().catch(() => undefined);
    await arbitrum?.stop().catch(() => undefined);
    await anvil?.stop().catch(() => undefined);
    await redis?.stop().catch(() => undefined);
  }
  process.exit(code);
}
// an unhandled rejection (a library's unawaited call while a chain is down) is logged, not fatal
guardProcess(log, () => stop(1));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => void stop(128 + osConstants.signals[signal]));
}
// `npm start` runs this process directly (`exec` in the script); if npm is killed outright, stop too
watchParent(() => void stop(128 + osConstants.signals.SIGHUP));

try {
  const defaults: ConfigDefaults = { payment: {} };
  if (!env.PAYMENT_RPC_URL) {
    const wanted = Number(env.DEVNET_PAYMENT_PORT || 8545);
    const port = (await isPortFree(wanted)) ? wanted : undefined;
    anvil = await startAnvil({ chainId: BASE_CHAIN_ID, port, quiet: true });
    const chain = await setupPaymentChain(anvil.rpcUrl);
    // State only means something with this chain: a fresh key prefix per run, so a shared Redis
    // never replays an earlier run's jobs or refunds onto a new chain (REDIS_KEY_PREFIX overrides).
    defaults.keyPrefix = `acg:dev:${ulid()}:`;
    defaults.payment = {
      rpcUrl: anvil.rpcUrl,
      payTo: chain.treasury.address,
      facilitatorPrivateKey: devPrivateKey(DEV_ROLES.facilitator),
      treasuryPrivateKey: devPrivateKey(DEV_ROLES.treasury),
    };
  }
  if (!env.ETHEREUM_RPC_URL) {
    // Ethereum dev chain (chain id 1): bundles target it (FIFO ordering so a sealed block keeps bundle order)
    const ethereumPort = Number(env.DEVNET_ETHEREUM_PORT || 8546);
    ethereum = await startDevChain('ethereum', { port: (await isPortFree(ethereumPort)) ? ethereumPort : undefined, extraArgs: ['--order', 'fifo'] });
    defaults.chains = { ...defaults.chains, ethereum: ethereum.rpcUrl };
    // lending dev data for the liquidation search: Aave v3 (as Aave and as Spark), Morpho Blue, a Comet market, seeded positions
    process.stdout.write('deploying the lending dev data (the first run compiles Morpho Blue with solc-js, about 40 s)...\n');
    lending = await setupLendingDevnet(ethereum.rpcUrl);
  }
  if (!env.ARBITRUM_RPC_URL) {
    // Arbitrum dev chain (chain id 42161) for the wallet monitor; Base is the payment chain itself
    const arbitrumPort = Number(env.DEVNET_ARBITRUM_PORT || 8547);
    arbitrum = await startDevChain('arbitrum', { port: (await isPortFree(arbitrumPort)) ? arbitrumPort : undefined });
    defaults.chains = { ...defaults.chains, arbitrum: arbitrum.rpcUrl };
  }
  if (anvil) {
    // embedded defaults are a development setup: webhooks may go to http://127.0.0.1 receivers (WEBHOOK_POLICY overrides)
    // a key per run encrypts webhook signing secrets at rest (WEBHOOK_SECRET_KEY overrides; production must set one)
    defaults.walletMonitor = { webhookPolicy: 'development', webhookSecretKey: randomBytes(32).toString('hex') };
  }
  redis = await resolveRedis({ url: env.REDIS_URL, log: (msg) => log.info(msg) });
  defaults.redisUrl = redis.url;
  if (!env.RELAY_URLS) relays = await startDevRelays();
  const builderPort = Number(env.BUILDER_PORT || 8081);
  defaults.builderUrl = env.BUILDER_URL ?? `http://127.0.0.1:${builderPort}`;
  const config = configFromEnv(env, defaults);
  builder = await startBuilder(
    builderConfigFromEnv(env, {
      redisUrl: redis.url,
      keyPrefix: config.keyPrefix,
      ethereumRpcUrl: config.chains.ethereum,
      ...(relays ? { relays: relays.relays } : {}),
      devMining: Boolean(ethereum),
      slotMs: 12_000,
    }),
    { log: pino({ level: config.logLevel, base: { service: 'builder' } }) },
  );
  // one process (DESIGN 1): the worker runs the job runner and the refunds; the gateway serves HTTP
  worker = await startWorker(config, {
    log: pino({ level: config.logLevel, base: { service: 'worker' } }),
    ...(lending && config.chains.ethereum
      ? { liquidations: { chain: 'ethereum' as const, rpcUrl: config.chains.ethereum, ...lendingIndexerConfig(lending.deployment) } }
      : {}),
  });
  gateway = await startGateway(config, { log: pino({ level: config.logLevel, base: { service: 'gateway' } }), refundWorker: false });

  process.stdout.write('\nAgent capability gateway is up:\n');
  line('gateway', gateway.url);
  line('catalog', `${gateway.url}/gateway-catalog.json`);
  line('registry', `${gateway.url}/registry`);
  line('openapi', `${gateway.url}/openapi.json`);
  line('health', `${gateway.url}/status/health`);
  line('builder', `${builder.rpcUrl} (eth_sendBundle, BLS ${builder.blsPublicKey.slice(0, 18)}…)`);
  line('relays', relays ? `${relays.relays.length} local dev relays: ${relays.relayUrls}` : 'RELAY_URLS');
  line('ethereum chain', `${config.chains.ethereum ?? 'not configured'}${ethereum ? ' (chain 1, local anvil)' : ''}`);
  line('payment chain', `${config.payment.rpcUrl} (eip155:${config.payment.chain.id}${anvil ? ', local anvil' : ''})`);
  line('USDC', config.payment.asset);
  line('redis', `${redis.url}${redis.spawned ? ' (private, spawned)' : ''}, key prefix ${config.keyPrefix}`);
  line(
    'worker',
    `in-process: ${worker.workers.map((w) => w.name).join(', ')}${worker.indexer ? ', liquidation indexer' : ''}${worker.walletMonitor ? `, wallet monitor (${worker.walletMonitor.watchers.length} chain watchers, webhook policy ${config.walletMonitor?.webhookPolicy})` : ''}`,
  );
  line('arbitrum chain', `${config.chains.arbitrum ?? 'not configured'}${arbitrum ? ' (chain 42161, local anvil)' : ''}`);
  if (lending)
    line(
      'lending',
      `Aave ${lending.deployment.aave.pool}, Spark ${lending.deployment.spark.pool}, Comet ${lending.deployment.comet.address}, Morpho ${lending.deployment.morpho.address} (${lending.positions.length} seeded positions)`,
    );
  if (anvil) {
    line('facilitator', `${devAccount(DEV_ROLES.facilitator).address} (dev account 0)`);
    line('treasury/payTo', `${config.payment.payTo} (dev account 1)`);
    line('funded buyers', `dev accounts 2-9 of the anvil test mnemonic, 10,000 USDC each (e.g. ${devAccount(2).address})`);
  }
  process.stdout.write('\nTry: npm run demo    (pays 0.001 USDC for intelligence.wallet_balances)\nCtrl-C stops everything.\n');
} catch (e) {
  process.stderr.write(`\nstartup failed: ${(e as Error).message}\n`);
  await stop(1);
}
