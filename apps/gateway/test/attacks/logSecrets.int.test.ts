import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@acg/observability';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.js';
import { bearerToken } from '../x402.js';

/**
 * Attack (issue 23 item 12): read secrets from the logs. RPC providers put the API key in the URL
 * path, and viem writes the request URL into its error text; so a failing RPC call logged as it
 * was leaked the key. Every line must show such a URL as scheme + host only and mask secret
 * values, while a 500's line still carries its real cause (class, message, stack) and the request
 * id of the answer (it used to say only that an internal error occurred).
 */
const KEY = 'SECRETKEY0123456789abcdef';
const ENV_SECRET = 'env-secret-value-9876543210';
let t: TestGateway;
let rpc: Server;
let badUrl: string;
const lines: string[] = [];

beforeAll(async () => {
  // an RPC node that answers every call with HTTP 500: viem's HttpRequestError names the URL
  rpc = createServer((req, res) => {
    req.resume();
    res.statusCode = 500;
    res.end('upstream exploded');
  });
  await new Promise<void>((resolve) => rpc.listen(0, '127.0.0.1', resolve));
  badUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}/v2/${KEY}`;
  process.env.ACG_TEST_LOG_API_KEY = ENV_SECRET;
  const log = createLogger({ service: 'gateway', level: 'info', destination: { write: (s: string) => void lines.push(s) } });
  delete process.env.ACG_TEST_LOG_API_KEY;
  t = await startTestGateway({ log });
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => rpc?.close(() => resolve()));
});

/** A real viem failure against the key-carrying RPC URL. */
async function failingRpcCall(): Promise<never> {
  await createPublicClient({ transport: http(badUrl, { retryCount: 0 }) }).getBlockNumber();
  throw new Error('the RPC call was expected to fail');
}

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

describe('secrets in logs, and the cause of a 500', () => {
  it('logs a failing RPC call of a plain route with the URL cut to its host and the cause kept', async () => {
    const discovery = t.gateway.services.discovery;
    const original = discovery.registry;
    discovery.registry = failingRpcCall;
    try {
      const res = await fetch(`${t.url}/registry`);
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(body).not.toContain(KEY);
      const requestId = res.headers.get('x-request-id');
      await new Promise((r) => setTimeout(r, 50));
      const line = parsed().find((l) => l.msg === 'unhandled request error' && l.request_id === requestId);
      expect(line, lines.join('')).toBeDefined();
      expect(line!.err.type).toBe('HttpRequestError');
      expect(line!.err.message).toContain(`http://127.0.0.1:${(rpc.address() as AddressInfo).port}/…`);
      expect(line!.err.stack).toMatch(/HttpRequestError[\s\S]*at /);
    } finally {
      discovery.registry = original;
    }
    expect(lines.join('')).not.toContain(KEY);
  });

  it('logs a 500 of a tRPC route with its request id, class, sanitized message and stack', async () => {
    const token = await bearerToken(t.url, t.stack.payment.buyers[0]);
    const ledger = t.gateway.services.ledger;
    const original = ledger.view;
    ledger.view = failingRpcCall;
    try {
      const res = await fetch(`${t.url}/v1/account`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(500);
      const requestId = res.headers.get('x-request-id');
      await new Promise((r) => setTimeout(r, 50));
      const line = parsed().find((l) => l.msg === 'internal error' && l.request_id === requestId);
      expect(line, lines.join('')).toBeDefined();
      expect(line!.err.type).toBe('HttpRequestError');
      expect(line!.err.message).toContain('HTTP request failed');
      expect(line!.err.stack).toContain('at ');
    } finally {
      ledger.view = original;
    }
    const all = lines.join('');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(token);
  });

  it('masks the values of secret environment variables and secret-named fields in every line', () => {
    const log = t.gateway.services.log;
    log.error({ err: new Error(`boom with ${ENV_SECRET} inside`), authorization: `Bearer ${KEY}`, config: { privateKey: KEY } }, `url ${badUrl}`);
    log.warn(`redis at redis://user:${KEY}@127.0.0.1:6379/0 and ws://rpc.example.com/ws/${KEY}?x=1`);
    const all = lines.join('');
    expect(all).not.toContain(ENV_SECRET);
    expect(all).not.toContain(KEY);
    const [error, warn] = parsed().slice(-2);
    expect(error.err.message).toBe('boom with [redacted] inside');
    expect(error.authorization).toBe('[redacted]');
    expect(error.config.privateKey).toBe('[redacted]');
    expect(warn.msg).toBe('redis at redis://127.0.0.1:6379/… and ws://rpc.example.com/…');
  });
});
