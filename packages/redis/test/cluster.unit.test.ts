import { describe, expect, it } from 'vitest';
import { hashTag, parseClusterNodes, RedisKeys } from '../src/index.js';
import { accountKeys } from '@acg/accounts/commands';
import { liquidationKeys } from '@acg/liquidations/commands';
import { paymentKeys } from '@acg/payments/commands';
import { providerLedgerKeys } from '@acg/provider-ledger/commands';
import { walletMonitorKeys } from '@acg/wallet-monitor/commands';

describe('parseClusterNodes (REDIS_CLUSTER_NODES)', () => {
  it('parses host:port entries, IPv6 in brackets, spaces ignored', () => {
    expect(parseClusterNodes('10.0.0.1:7000, redis-a.internal:7001,[::1]:7002')).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-a.internal', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(parseClusterNodes(['127.0.0.1:1'])).toEqual([{ host: '127.0.0.1', port: 1 }]);
  });

  it('names the malformed entry', () => {
    expect(() => parseClusterNodes('10.0.0.1')).toThrow('"10.0.0.1" is not host:port');
    expect(() => parseClusterNodes('10.0.0.1:0')).toThrow('"10.0.0.1:0" is not host:port');
    expect(() => parseClusterNodes('a:70000')).toThrow('"a:70000" is not host:port');
    expect(() => parseClusterNodes(' , ')).toThrow('no host:port entry');
  });
});

describe('hashTag (Redis Cluster key hashing)', () => {
  it('is the text between the first { and the next }, when not empty', () => {
    expect(hashTag('{acg}:exe:exe_1')).toBe('acg');
    expect(hashTag('acg:liq:{base}:meta')).toBe('base');
    expect(hashTag('{acg}:liq:{base}:meta')).toBe('acg');
    expect(hashTag('acg:{}:x{y}')).toBeUndefined();
    expect(hashTag('acg:exe:1')).toBeUndefined();
    expect(hashTag('a{b')).toBeUndefined();
  });

  it('a hash-tagged prefix puts every key of RedisKeys, BullMQ prefix included, under one tag', () => {
    const keys = new RedisKeys('{acg}:');
    const all = [
      paymentKeys.authorization(keys, 'eip155:8453', '0xA', '0xB', '0x1'),
      paymentKeys.authorizationsInFlight(keys),
      accountKeys.account(keys, '0xB'),
      accountKeys.accountUsage(keys, '0xB'),
      walletMonitorKeys.walletMonitor(keys, 'sub', 'x'),
      liquidationKeys.liquidationIndex(keys, 'base', 'meta'),
      keys.providers('p', 'prv_1'),
      providerLedgerKeys.providerLedgerEntry(keys, 'exe_1'),
      `${keys.bullPrefix()}:jobs:wait`,
    ];
    expect(new Set(all.map(hashTag))).toEqual(new Set(['acg']));
  });
});
