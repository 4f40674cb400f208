/**
 * `npm start`: the whole service on its embedded defaults, in one Node process (DESIGN 1).
 *
 * - Payment chain: `PAYMENT_RPC_URL`, else a local anvil with chain id 8453, real USDC at the Base
 *   address and Multicall3 (port `DEVNET_PAYMENT_PORT`, default 8545, or a free one if taken).
 * - Redis: `REDIS_URL`, else 127.0.0.1:6379 if it answers, else a private redis-server.
 * - Gateway on `GATEWAY_PORT` (default 8080) with the dev accounts: index 0 facilitator (pays gas),
 *   index 1 treasury (payTo, sends refunds), indexes 2-9 funded buyers.
 * Prints one line per service with its URL; Ctrl-C stops everything it started.
 */
import { configFromEnv, startGateway, type ConfigDefaults, type RunningGateway } from '@acg/gateway';
import { pino } from 'pino';
import { startAnvil, type AnvilInstance } from './anvil.js';
import { devAccount, devPrivateKey, DEV_ROLES } from './accounts.js';
import { BASE_CHAIN_ID } from './constants.js';
import { setupPaymentChain } from './paymentChain.js';
import { isPortFree } from './ports.js';
import { resolveRedis, type RedisHandle } from './redis.js';

const env = process.env;
const log = pino({ level: env.LOG_LEVEL ?? 'info', base: { service: 'launcher' } });
const line = (name: string, value: string) => process.stdout.write(`  ${name.padEnd(16)} ${value}\n`);

let anvil: AnvilInstance | undefined;
let redis: RedisHandle | undefined;
let gateway: RunningGateway | undefined;
let stopping = false;

async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    process.stdout.write('\nstopping...\n');
    await gateway?.close().catch(() => undefined);
    await anvil?.stop().catch(() => undefined);
    await redis?.stop().catch(() => undefined);
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  const defaults: ConfigDefaults = { payment: {} };
  if (!env.PAYMENT_RPC_URL) {
    const wanted = Number(env.DEVNET_PAYMENT_PORT ?? 8545);
    const port = (await isPortFree(wanted)) ? wanted : undefined;
    anvil = await startAnvil({ chainId: BASE_CHAIN_ID, port, quiet: true });
    const chain = await setupPaymentChain(anvil.rpcUrl);
    defaults.payment = {
      rpcUrl: anvil.rpcUrl,
      payTo: chain.treasury.address,
      facilitatorPrivateKey: devPrivateKey(DEV_ROLES.facilitator),
      treasuryPrivateKey: devPrivateKey(DEV_ROLES.treasury),
    };
  }
  redis = await resolveRedis({ url: env.REDIS_URL, log: (msg) => log.info(msg) });
  defaults.redisUrl = redis.url;
  const config = configFromEnv(env, defaults);
  gateway = await startGateway(config, { log: pino({ level: config.logLevel, base: { service: 'gateway' } }) });

  process.stdout.write('\nAgent capability gateway is up:\n');
  line('gateway', gateway.url);
  line('catalog', `${gateway.url}/gateway-catalog.json`);
  line('registry', `${gateway.url}/registry`);
  line('openapi', `${gateway.url}/openapi.json`);
  line('health', `${gateway.url}/status/health`);
  line('payment chain', `${config.payment.rpcUrl} (eip155:${config.payment.chain.id}${anvil ? ', local anvil' : ''})`);
  line('USDC', config.payment.asset);
  line('redis', `${redis.url}${redis.spawned ? ' (private, spawned)' : ''}`);
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
