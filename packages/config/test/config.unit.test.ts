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
