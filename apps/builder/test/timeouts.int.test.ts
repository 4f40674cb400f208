import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';

// issue 36 item 10: the builder answers a request that never finishes with node's 408 and closes the
// connection (apps/builder README "Timeouts"); the timeouts are shortened here, the defaults are 10 s / 30 s
const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 4_000;

const t = useTestBuilder({}, { http: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS } });

type Reply = { statusLine: string; closed: boolean } | 'hang';

/**
 * Sends `data` on a raw TCP socket and never sends the rest; resolves with the first line the builder
 * answers once the connection closes, or 'hang' when nothing came within `hangMs` (hang detection
 * only, no speed check).
 */
function stall(data: string, hangMs: number): Promise<Reply> {
  const { port } = new URL(t.builder.rpcUrl);
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('hang');
    }, hangMs);
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ statusLine: received.split('\r\n')[0] ?? '', closed: true });
    });
    socket.write(data);
  });
}

describe('builder: slow requests get 408 within the HTTP timeouts', () => {
  it('a body that never finishes gets 408 after the request timeout, and the connection is closed', async () => {
    const head = 'POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n';
    const started = Date.now();
    const r = await stall(`${head}{"jsonrpc":"2.0",`, REQUEST_TIMEOUT_MS + 15_000);
    expect(r).not.toBe('hang');
    expect((r as Exclude<Reply, 'hang'>).statusLine).toBe('HTTP/1.1 408 Request Timeout');
    // answered because of the request timeout, not earlier (the head had arrived at once)
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
  });

  it('a head that never finishes gets 408', async () => {
    const r = await stall('POST /rpc HTTP/1.1\r\nHost: x\r\nX-Slow: ', HEADERS_TIMEOUT_MS + 15_000);
    expect(r).not.toBe('hang');
    expect((r as Exclude<Reply, 'hang'>).statusLine).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('keeps answering JSON-RPC afterwards', async () => {
    const res = await fetch(t.builder.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: 1 });
  });
});
