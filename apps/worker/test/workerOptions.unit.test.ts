import { describe, expect, it } from 'vitest';
import { reconcileConfirmations, workerOptionsFromEnv } from '../src/worker.js';
import { OFFLINE_CONFIG } from './offlineConfig.js';

// the one function both worker entries (node dist/worker.js and the npm start launcher) build their options with
describe('workerOptionsFromEnv', () => {
  it('reads the chain reconciliation settings', () => {
    const opts = workerOptionsFromEnv(
      { PAYMENT_RECONCILE_INTERVAL_MS: '5000', PAYMENT_RECONCILE_CONFIRMATIONS: '0', PAYMENT_RECONCILE_LOOKBACK_BLOCKS: '300' },
      OFFLINE_CONFIG,
    );
    expect(opts.chainReconciliation).toEqual({ intervalMs: 5000, confirmations: 0, lookbackBlocks: 300 });
  });

  it('reads the crash-recovery timing and the liquidation deployments', () => {
    const opts = workerOptionsFromEnv(
      {
        PAYMENT_RECOVERY_INTERVAL_MS: '1000',
        PAYMENT_RECOVERY_AFTER_MS: '4000',
        LIQUIDATION_DEPLOYMENTS: '[{"protocol":"morpho_blue","morpho":"0xBBBBBbbBBb9cC5e90e3b3Af64bdAF62C37EEFFCb","startBlock":"1"}]',
      },
      OFFLINE_CONFIG,
    );
    expect(opts.paymentRecovery).toEqual({ intervalMs: 1000, olderThanMs: 4000 });
    expect(opts.liquidations).toMatchObject({ chain: 'ethereum', rpcUrl: 'http://127.0.0.1:8546', deployments: [{ protocol: 'morpho_blue', startBlock: 1n }] });
  });

  it('leaves the defaults when unset, and names a malformed variable', () => {
    expect(workerOptionsFromEnv({}, OFFLINE_CONFIG)).toEqual({ paymentRecovery: {}, chainReconciliation: {} });
    expect(() => workerOptionsFromEnv({ PAYMENT_RECOVERY_AFTER_MS: '-5' }, OFFLINE_CONFIG)).toThrow(/PAYMENT_RECOVERY_AFTER_MS/);
    expect(() => workerOptionsFromEnv({ PAYMENT_RECONCILE_CONFIRMATIONS: 'x' }, OFFLINE_CONFIG)).toThrow(
      /PAYMENT_RECONCILE_CONFIRMATIONS must be a non-negative integer/,
    );
    expect(() => workerOptionsFromEnv({ PAYMENT_RECONCILE_INTERVAL_MS: '0' }, OFFLINE_CONFIG)).toThrow(
      /PAYMENT_RECONCILE_INTERVAL_MS must be a positive integer/,
    );
  });

  it("the reconciliation's confirmations follow PAYMENT_FINALITY's depth (npm start's dev chain: 2), else 12", () => {
    expect(reconcileConfirmations({ depth: 2 })).toBe(2);
    expect(reconcileConfirmations({ depth: 0 })).toBe(0);
    expect(reconcileConfirmations({ tag: 'finalized' })).toBe(12);
    expect(reconcileConfirmations({ tag: 'safe' })).toBe(12);
  });
});
