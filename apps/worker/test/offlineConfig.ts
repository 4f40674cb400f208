import { configFromEnv, type GatewayConfig } from '@acg/config';

/**
 * A complete gateway configuration for unit tests that only read it (nothing connects): Redis at
 * 127.0.0.1:6379, the payment chain at 127.0.0.1:8545 with dev account 1 as `payTo` and a fixed
 * facilitator key, Ethereum at 127.0.0.1:8546; every other field has its default.
 */
export const OFFLINE_CONFIG: GatewayConfig = configFromEnv(
  {},
  {
    redisUrl: 'redis://127.0.0.1:6379',
    payment: { rpcUrl: 'http://127.0.0.1:8545', payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', facilitatorPrivateKey: `0x${'11'.repeat(32)}` },
    chains: { ethereum: 'http://127.0.0.1:8546' },
  },
);
