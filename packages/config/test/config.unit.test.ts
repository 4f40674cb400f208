import { describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv } from '../src/index.js';

describe('configFromEnv', () => {
  it('lists every invalid and missing variable at once', () => {
    let error: unknown;
    try {
      configFromEnv({ GATEWAY_PORT: '70000', LOG_LEVEL: 'loud', PROBE_INTERVAL_SECONDS: '-1' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'GATEWAY_PORT=70000: must be an integer port 0..65535',
      'PROBE_INTERVAL_SECONDS=-1: must be a number ≥ 0',
      'LOG_LEVEL=loud: must be one of fatal, error, warn, info, debug, trace, silent',
      'PAYMENT_RPC_URL: required (or start the embedded defaults with `npm start`)',
      'REDIS_URL: required (or start the embedded defaults with `npm start`)',
      'PAY_TO_ADDRESS: required',
      'FACILITATOR_PRIVATE_KEY or FACILITATOR_URL: required',
    ]);
  });

  it('parses valid values over the defaults', () => {
    const c = configFromEnv(
      { GATEWAY_PORT: '19080', PROBE_INTERVAL_SECONDS: '0', LOG_LEVEL: 'warn', PAY_TO_ADDRESS: `0x${'a'.repeat(40)}` },
      { redisUrl: 'redis://127.0.0.1:6379', payment: { rpcUrl: 'http://127.0.0.1:8545', facilitatorUrl: 'https://f' } },
    );
    expect([c.port, c.probeIntervalSeconds, c.logLevel, c.payment.payTo]).toEqual([19080, 0, 'warn', `0x${'a'.repeat(40)}`]);
  });
});

describe('configFromEnv providers', () => {
  const base = { PAY_TO_ADDRESS: `0x${'a'.repeat(40)}` };
  const defaults = { redisUrl: 'redis://127.0.0.1:6379', payment: { rpcUrl: 'http://127.0.0.1:8545', facilitatorUrl: 'https://f' } };

  it('defaults to docs/decisions.md "Providers" values, without an admin token', () => {
    const c = configFromEnv(base, defaults);
    expect(c.providers).toEqual({
      feeBps: 1000,
      disputeWindowSeconds: 86_400,
      payoutIntervalSeconds: 3600,
      payoutMinBaseUnits: '1000000',
      disputeAutoResolveSeconds: 604_800,
      quoteTtlSeconds: 60,
    });
    expect(c.adminToken).toBeUndefined();
    // the configuration crosses process boundaries as JSON (worker fixtures)
    expect(JSON.parse(JSON.stringify(c.providers))).toEqual(c.providers);
  });

  it('reads the variables, over ConfigDefaults overrides', () => {
    const c = configFromEnv(
      {
        ...base,
        PROVIDER_FEE_BPS: '250',
        PROVIDER_DISPUTE_WINDOW_SECONDS: '1',
        PROVIDER_PAYOUT_MIN_USDC: '0.5',
        PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS: '30',
        QUOTE_TTL_SECONDS: '15',
        ADMIN_TOKEN: 'x'.repeat(16),
      },
      { ...defaults, providers: { payoutIntervalSeconds: 5, feeBps: 9 } },
    );
    expect(c.providers).toEqual({
      feeBps: 250,
      disputeWindowSeconds: 1,
      payoutIntervalSeconds: 5,
      payoutMinBaseUnits: '500000',
      disputeAutoResolveSeconds: 30,
      quoteTtlSeconds: 15,
    });
    expect(c.adminToken).toBe('x'.repeat(16));
  });

  it('refuses out-of-range values and a short admin token without echoing it', () => {
    let error: unknown;
    try {
      configFromEnv(
        {
          ...base,
          PROVIDER_FEE_BPS: '10001',
          PROVIDER_DISPUTE_WINDOW_SECONDS: '-1',
          PROVIDER_PAYOUT_INTERVAL_SECONDS: '0',
          PROVIDER_PAYOUT_MIN_USDC: '1.0000001',
          PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS: 'week',
          ADMIN_TOKEN: 'short',
        },
        defaults,
      );
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual([
      'PROVIDER_FEE_BPS=10001: must be an integer 0..10000',
      'PROVIDER_DISPUTE_WINDOW_SECONDS=-1: must be a number ≥ 0',
      'PROVIDER_PAYOUT_INTERVAL_SECONDS=0: must be a number > 0',
      'PROVIDER_PAYOUT_MIN_USDC=1.0000001: must be a USDC amount ≥ 0 with at most 6 decimals, e.g. 1.00',
      'PROVIDER_DISPUTE_AUTO_RESOLVE_SECONDS=week: must be a number ≥ 0',
      'ADMIN_TOKEN=(hidden): must be 16 to 512 visible ASCII characters without spaces',
    ]);
  });
});

describe('configFromEnv on a Redis Cluster (REDIS_CLUSTER_NODES)', () => {
  const base = { PAY_TO_ADDRESS: `0x${'a'.repeat(40)}`, PAYMENT_RPC_URL: 'http://127.0.0.1:8545', FACILITATOR_URL: 'https://f' };

  it('carries the nodes, takes REDIS_URL from the first node when unset, and hash-tags the default prefix', () => {
    const c = configFromEnv({ ...base, REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000' });
    expect([c.redisClusterNodes, c.redisUrl, c.keyPrefix]).toEqual([['10.0.0.1:7000', '10.0.0.2:7000'], 'redis://10.0.0.1:7000', '{acg}:']);
    // the configuration crosses process boundaries as JSON (worker fixtures)
    expect(JSON.parse(JSON.stringify(c)).redisClusterNodes).toEqual(c.redisClusterNodes);
    const single = configFromEnv({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' });
    expect([single.redisClusterNodes, single.keyPrefix]).toEqual([undefined, 'acg:']);
  });

  it('refuses a prefix without a hash tag on a cluster', () => {
    expect(() => configFromEnv({ ...base, REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_KEY_PREFIX: 'acg:prod:' })).toThrow(
      'REDIS_KEY_PREFIX=acg:prod:: must contain a hash tag when REDIS_CLUSTER_NODES is set',
    );
  });
});

describe('configFromEnv store (docs/durability.md)', () => {
  const base = { PAY_TO_ADDRESS: `0x${'a'.repeat(40)}` };
  const defaults = { redisUrl: 'redis://127.0.0.1:6379', payment: { rpcUrl: 'http://127.0.0.1:8545', facilitatorUrl: 'https://f' } };

  it('requires a durable store and issues no WAIT by default', () => {
    expect(configFromEnv(base, defaults).store).toEqual({ devDefaults: false, allowNonDurable: false, waitReplicas: 0, waitTimeoutMs: 500 });
  });

  it('reads ALLOW_NON_DURABLE_STORE, REDIS_WAIT_REPLICAS and REDIS_WAIT_TIMEOUT_MS; the dev defaults come from the launcher only', () => {
    const c = configFromEnv(
      { ...base, ALLOW_NON_DURABLE_STORE: 'true', REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '250' },
      { ...defaults, store: { devDefaults: true } },
    );
    expect(c.store).toEqual({ devDefaults: true, allowNonDurable: true, waitReplicas: 2, waitTimeoutMs: 250 });
  });

  it('refuses a WAIT timeout beyond 1000 ms and a non-boolean override, naming each variable', () => {
    expect(() => configFromEnv({ ...base, ALLOW_NON_DURABLE_STORE: 'yes', REDIS_WAIT_TIMEOUT_MS: '5000' }, defaults)).toThrow(
      /ALLOW_NON_DURABLE_STORE=yes: must be 1, true, 0 or false[\s\S]*REDIS_WAIT_TIMEOUT_MS=5000: must be an integer 1..1000/,
    );
  });
});
