import { configFromEnv } from '@acg/config';
import { describe, expect, it } from 'vitest';
import { workerOptionsFromEnv } from '../src/worker.js';

const base = configFromEnv(
  {},
  {
    redisUrl: 'redis://127.0.0.1:6379',
    payment: { rpcUrl: 'http://127.0.0.1:8545', payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', facilitatorPrivateKey: `0x${'11'.repeat(32)}` },
    chains: { ethereum: 'http://127.0.0.1:8546' },
  },
);

// the one function both worker entries (node dist/worker.js and the npm start launcher) build their options with
describe('workerOptionsFromEnv', () => {
  it('reads the crash-recovery timing and the liquidation deployments', () => {
    const opts = workerOptionsFromEnv(
      {
        PAYMENT_RECOVERY_INTERVAL_MS: '1000',
        PAYMENT_RECOVERY_AFTER_MS: '4000',
        LIQUIDATION_DEPLOYMENTS: '[{"protocol":"morpho_blue","morpho":"0xBBBBBbbBBb9cC5e90e3b3Af64bdAF62C37EEFFCb","startBlock":"1"}]',
      },
      base,
    );
    expect(opts.paymentRecovery).toEqual({ intervalMs: 1000, olderThanMs: 4000 });
    expect(opts.liquidations).toMatchObject({ chain: 'ethereum', rpcUrl: 'http://127.0.0.1:8546', deployments: [{ protocol: 'morpho_blue', startBlock: 1n }] });
  });

  it('leaves the defaults when unset, and names a malformed variable', () => {
    expect(workerOptionsFromEnv({}, base)).toEqual({ paymentRecovery: {} });
    expect(() => workerOptionsFromEnv({ PAYMENT_RECOVERY_AFTER_MS: '-5' }, base)).toThrow(/PAYMENT_RECOVERY_AFTER_MS/);
  });
});
