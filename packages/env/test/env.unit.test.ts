import net from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  BUILDER_ENV,
  devDefaultsProblems,
  DEVNET_ENV,
  EnvError,
  GATEWAY_ENV,
  LOG_LEVELS,
  portProblems,
  readEnv,
  redisKeyPrefix,
  redisProblem,
} from '../src/index.js';

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

  it('PAYMENT_FINALITY is a block tag (safe, finalized) or a depth in blocks', () => {
    expect(readEnv(ALL, { PAYMENT_FINALITY: 'finalized' }).values).toEqual({ PAYMENT_FINALITY: { tag: 'finalized' } });
    expect(readEnv(ALL, { PAYMENT_FINALITY: 'safe' }).values).toEqual({ PAYMENT_FINALITY: { tag: 'safe' } });
    expect(readEnv(ALL, { PAYMENT_FINALITY: '12' }).values).toEqual({ PAYMENT_FINALITY: { depth: 12 } });
    for (const bad of ['latest', '-1', '1.5', '012', 'Finalized']) {
      expect(readEnv(ALL, { PAYMENT_FINALITY: bad }).problems).toEqual([
        `PAYMENT_FINALITY=${bad}: must be safe, finalized or a depth in blocks (a non-negative integer)`,
      ]);
    }
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

  it('operations: LOG_PRETTY is a switch, WORKER_METRICS_PORT a port, METRICS_TOKEN a header-safe secret (never echoed)', () => {
    expect(readEnv(ALL, { LOG_PRETTY: '1', WORKER_METRICS_PORT: '9464', METRICS_TOKEN: 'abcdefghijklmnop' }).values).toMatchObject({
      LOG_PRETTY: true,
      WORKER_METRICS_PORT: 9464,
      METRICS_TOKEN: 'abcdefghijklmnop',
    });
    expect(readEnv(ALL, { LOG_PRETTY: 'false' }).values.LOG_PRETTY).toBe(false);
    const { problems } = readEnv(ALL, { LOG_PRETTY: 'yes please', WORKER_METRICS_PORT: '99999', METRICS_TOKEN: 'short secret' });
    expect(problems).toEqual([
      'LOG_PRETTY=yes please: must be 1, true, 0 or false',
      'METRICS_TOKEN=(hidden): must be 16 to 512 visible ASCII characters without spaces',
      'WORKER_METRICS_PORT=99999: must be an integer port 0..65535',
    ]);
    expect(readEnv(BUILDER_ENV, { METRICS_TOKEN: 'x'.repeat(15) }).problems).toHaveLength(1);
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

describe('REDIS_CLUSTER_NODES and the key prefix on a cluster', () => {
  it('parses host:port entries and names a malformed list', () => {
    expect(readEnv(ALL, { REDIS_CLUSTER_NODES: '10.0.0.1:7000, [::1]:7001,redis-b:7002' }).values.REDIS_CLUSTER_NODES).toEqual([
      '10.0.0.1:7000',
      '[::1]:7001',
      'redis-b:7002',
    ]);
    for (const bad of ['10.0.0.1', '10.0.0.1:70000', 'a:1,b', ' , '])
      expect(readEnv(ALL, { REDIS_CLUSTER_NODES: bad }).problems).toEqual([
        `REDIS_CLUSTER_NODES=${bad}: must be comma-separated host:port entries, e.g. 10.0.0.1:7000,10.0.0.2:7000`,
      ]);
  });

  it('defaults the prefix to {acg}: on a cluster and acg: otherwise; an untagged prefix on a cluster is a problem', () => {
    const problems: string[] = [];
    expect(redisKeyPrefix({}, undefined, ['h:1'], problems)).toBe('{acg}:');
    expect(redisKeyPrefix({}, undefined, undefined, problems)).toBe('acg:');
    expect(redisKeyPrefix({ REDIS_KEY_PREFIX: 'prod{eu}:' }, 'x:', ['h:1'], problems)).toBe('prod{eu}:');
    expect(redisKeyPrefix({}, 'acg:dev:1:', undefined, problems)).toBe('acg:dev:1:');
    expect(problems).toEqual([]);
    expect(redisKeyPrefix({ REDIS_KEY_PREFIX: 'acg:{}:' }, undefined, ['h:1'], problems)).toBe('acg:{}:');
    expect(problems).toEqual([
      'REDIS_KEY_PREFIX=acg:{}:: must contain a hash tag when REDIS_CLUSTER_NODES is set, e.g. {acg}: (every key of the deployment in one cluster slot)',
    ]);
  });
});
