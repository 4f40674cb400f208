import { randomBytes } from 'node:crypto';
import { devPrivateKey, startDevStack, type DevStack } from '@acg/devnet';
import { ulid } from 'ulid';
import { devReceiptKeys } from '@acg/receipts';
import { configFromEnv, type ConfigDefaults, type GatewayConfig } from '@acg/config';
import { startGateway, type RunningGateway, type StartGatewayOptions } from '../src/app.js';

/** A gateway on a fresh dev chain and a private Redis that this test run started (and stops). */
export interface TestGateway {
  stack: DevStack;
  gateway: RunningGateway;
  url: string;
  config: GatewayConfig;
  close(): Promise<void>;
}

/**
 * Starts anvil (chain id 8453, real USDC, Multicall3), a private redis-server, and the gateway on
 * a free port with the dev accounts (0 facilitator, 1 treasury). Keys carry a unique prefix.
 */
export async function startTestGateway(opts: StartGatewayOptions & { config?: ConfigDefaults } = {}): Promise<TestGateway> {
  const stack = await startDevStack({ quiet: true, preferPrivateRedis: true });
  try {
    const config = configFromEnv(
      {},
      {
        port: 0,
        redisUrl: stack.redis.url,
        keyPrefix: `acg:test:${ulid()}:`,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        probeIntervalSeconds: 0,
        receipts: devReceiptKeys(),
        payment: {
          rpcUrl: stack.payment.rpcUrl,
          payTo: stack.payment.treasury.address,
          facilitatorPrivateKey: devPrivateKey(0),
          treasuryPrivateKey: devPrivateKey(1),
        },
        ...opts.config,
        // webhook signing secrets are encrypted at rest in every test stack
        walletMonitor: { webhookPolicy: 'production', webhookSecretKey: randomBytes(32).toString('hex'), ...opts.config?.walletMonitor },
      },
    );
    const gateway = await startGateway(config, opts);
    return {
      stack,
      gateway,
      url: gateway.url,
      config,
      async close() {
        await gateway.close();
        await stack.stop();
      },
    };
  } catch (e) {
    await stack.stop();
    throw e;
  }
}
