import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { BUILDER_ENV, devDefaultsProblems, DEVNET_ENV, EnvError, GATEWAY_ENV, LOG_LEVELS, portProblems, readEnv, redisProblem } from '../src/index.js';

const ALL = { ...GATEWAY_ENV, ...BUILDER_ENV, ...DEVNET_ENV };

function listen(): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => void sockets.add(socket));
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      const close = () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          server.close(() => r());
        });
      resolve({ port, close });
    });
  });
}

describe('readEnv', () => {
  it('parses valid values and skips unset or empty ones', () => {
    const { values, problems } = readEnv(ALL, { GATEWAY_PORT: '19080', PROBE_INTERVAL_SECONDS: '0', LOG_LEVEL: 'debug', BUILDER_PORT: '' });
    expect(problems).toEqual([]);
    expect(values).toEqual({ GATEWAY_PORT: 19080, PROBE_INTERVAL_SECONDS: 0, LOG_LEVEL: 'debug' });
  });

  it.each(['70000', '-1', '80.5', 'abc', '0x50', ' '])('rejects GATEWAY_PORT=%s', (port) => {
    expect(readEnv(ALL, { GATEWAY_PORT: port }).problems).toEqual([`GATEWAY_PORT=${port}: must be an integer port 0..65535`]);
  });

  it('accepts the port range ends 0 and 65535', () => {
    expect(readEnv(ALL, { GATEWAY_PORT: '0', BUILDER_PORT: '65535' }).problems).toEqual([]);
  });

  it.each(['-5', 'often', 'NaN', 'Infinity'])('rejects PROBE_INTERVAL_SECONDS=%s', (value) => {
    expect(readEnv(ALL, { PROBE_INTERVAL_SECONDS: value }).problems).toEqual([`PROBE_INTERVAL_SECONDS=${value}: must be a number ≥ 0`]);
  });

  it('rejects an unknown LOG_LEVEL and lists the pino levels', () => {
    expect(LOG_LEVELS).toEqual(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
    expect(readEnv(ALL, { LOG_LEVEL: 'loud' }).problems).toEqual(['LOG_LEVEL=loud: must be one of fatal, error, warn, info, debug, trace, silent']);
  });

  it('lists every invalid variable at once, not only the first', () => {
    const { problems } = readEnv(ALL, {
      LOG_LEVEL: 'loud',
      GATEWAY_PORT: '70000',
      PROBE_INTERVAL_SECONDS: '-1',
      REDIS_URL: 'http://127.0.0.1:6379',
      PAY_TO_ADDRESS: '0x12',
      DEVNET_PAYMENT_PORT: 'x',
    });
    expect(problems.map((p) => p.split('=')[0]).sort()).toEqual([
      'DEVNET_PAYMENT_PORT',
      'GATEWAY_PORT',
      'LOG_LEVEL',
      'PAY_TO_ADDRESS',
      'PROBE_INTERVAL_SECONDS',
      'REDIS_URL',
    ]);
    const err = new EnvError(problems);
    expect(err.message.split('\n')).toHaveLength(problems.length + 1);
    expect(err.message).not.toMatch(/\bat .*\.ts:\d+/); // no stack in the message
  });

  it('never echoes a key, and hides a URL password', () => {
    const { problems } = readEnv(ALL, { FACILITATOR_PRIVATE_KEY: '0xsecretsecret', REDIS_URL: 'ftp://user:hunter2@host' });
    expect(problems).toContain('FACILITATOR_PRIVATE_KEY=(hidden): must be 0x followed by 64 hex characters');
    expect(problems).toContain('REDIS_URL=ftp://user:***@host: must be a redis or rediss URL');
    expect(problems.join('\n')).not.toMatch(/secretsecret|hunter2/);
  });
});

describe('devDefaultsProblems', () => {
  it('PAYMENT_RPC_URL without PAY_TO_ADDRESS says the dev defaults are off and what is then required', () => {
    const problems = devDefaultsProblems({ PAYMENT_RPC_URL: 'http://127.0.0.1:8545' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^PAY_TO_ADDRESS: required when PAYMENT_RPC_URL is set/);
    expect(problems[0]).toMatch(/turns off the dev defaults/);
    expect(problems[0]).toMatch(/FACILITATOR_PRIVATE_KEY or FACILITATOR_URL/);
    expect(problems[1]).toMatch(/^FACILITATOR_PRIVATE_KEY or FACILITATOR_URL: required/);
  });

  it('holds with PAY_TO_ADDRESS and a facilitator, and without PAYMENT_RPC_URL', () => {
    expect(devDefaultsProblems({ PAYMENT_RPC_URL: 'http://x', PAY_TO_ADDRESS: `0x${'1'.repeat(40)}`, FACILITATOR_URL: 'https://f' })).toEqual([]);
    expect(devDefaultsProblems({})).toEqual([]);
  });
});

describe('portProblems', () => {
  it('names the variable of a port in use, and passes a free port and port 0', async () => {
    const busy = await listen();
    const free = await listen();
    await free.close();
    try {
      expect(
        await portProblems([
          { name: 'GATEWAY_PORT', port: busy.port },
          { name: 'BUILDER_PORT', port: free.port },
          { name: 'DEVNET_PAYMENT_PORT', port: 0 },
        ]),
      ).toEqual([`GATEWAY_PORT=${busy.port}: port already in use`]);
    } finally {
      await busy.close();
    }
  });
});

describe('redisProblem', () => {
  it('connects once and names the variable and the cause when nothing listens', async () => {
    const closed = await listen();
    await closed.close();
    const url = `redis://127.0.0.1:${closed.port}`;
    expect(await redisProblem('REDIS_URL', url, 2000)).toBe(`REDIS_URL=${url}: cannot connect (ECONNREFUSED)`);
  });

  it('reports a server that does not speak Redis instead of hanging', async () => {
    const silent = await listen(); // accepts and never answers
    try {
      const problem = await redisProblem('REDIS_URL', `redis://127.0.0.1:${silent.port}`, 300);
      expect(problem).toBe(`REDIS_URL=redis://127.0.0.1:${silent.port}: cannot connect (ETIMEDOUT)`);
    } finally {
      await silent.close();
    }
  });
});
