import { describe, expect, it } from 'vitest';
import { liquidationsFromEnv } from '../src/liquidationsConfig.js';
import { OFFLINE_CONFIG } from './offlineConfig.js';

describe('liquidationsFromEnv', () => {
  it('is off without LIQUIDATION_DEPLOYMENTS', () => {
    expect(liquidationsFromEnv({}, OFFLINE_CONFIG)).toBeUndefined();
  });
  it('reads the deployments, feeds and native token', () => {
    const cfg = liquidationsFromEnv(
      {
        LIQUIDATION_DEPLOYMENTS: JSON.stringify([
          { protocol: 'aave_v3', pool: '0x87870bca3f3fd6335c3f4ce8392d69350b4fa4e2', startBlock: '16291127' },
          { protocol: 'morpho_blue', morpho: '0xBBBBBbbBBb9cC5e90e3b3Af64bdAF62C37EEFFCb', startBlock: 18883124 },
        ]),
        LIQUIDATION_NATIVE_TOKEN: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
      },
      OFFLINE_CONFIG,
    )!;
    expect(cfg.rpcUrl).toBe('http://127.0.0.1:8546');
    expect(cfg.deployments).toEqual([
      { protocol: 'aave_v3', pool: '0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2', startBlock: 16291127n },
      { protocol: 'morpho_blue', morpho: '0xBBBBBbbBBb9cC5e90e3b3Af64bdAF62C37EEFFCb', startBlock: 18883124n },
    ]);
    expect(cfg.nativeToken).toBe('0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2');
  });
  it('names the variable when malformed', () => {
    expect(() => liquidationsFromEnv({ LIQUIDATION_DEPLOYMENTS: 'nope' }, OFFLINE_CONFIG)).toThrow(/JSON array/);
    expect(() => liquidationsFromEnv({ LIQUIDATION_DEPLOYMENTS: '[{"protocol":"euler"}]' }, OFFLINE_CONFIG)).toThrow(/protocol/);
    expect(() => liquidationsFromEnv({ LIQUIDATION_DEPLOYMENTS: '[{"protocol":"aave_v3","pool":"0x12"}]' }, OFFLINE_CONFIG)).toThrow(/pool/);
  });
});
