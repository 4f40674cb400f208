import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { flashbotsSignature, freshIp, httpRequest, type Reply } from './harness.js';

// Every JSON-RPC 2.0 input gets an answer (JSON-RPC 2.0 §5, §6): bodies that used to hold the
// socket open or went to the wrong place, sent again. A hang shows as a rejection after 10 s.
const t = useTestBuilder();

/** POSTs `body` signed by a fresh key (a new searcher each time), from a fresh source IP. */
async function signedFresh(body: string, headers: Record<string, string> = {}): Promise<Reply> {
  const account = privateKeyToAccount(generatePrivateKey());
  return httpRequest(t.builder.rpcUrl, {
    body,
    headers: { 'content-type': 'application/json', 'X-Bundle-Signature': await flashbotsSignature(account, body), ...headers },
    localAddress: freshIp(),
  });
}

const invalidRequest = { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) };

describe('batches holding arrays or other non-objects', () => {
  it.each([
    ['[[]]', 1],
    ['[[1]]', 1],
    ['[[],[]]', 2],
    ['[1,2,3]', 3],
    ['[null,"x",true,{}]', 4],
  ])('%s → one -32600 with id null per element', async (body, n) => {
    const res = await signedFresh(body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(Array.from({ length: n }, () => invalidRequest));
  });

  it('answers a mixed batch in element order, skipping only the notification', async () => {
    const body = JSON.stringify([
      [],
      { jsonrpc: '2.0', id: 1, method: 'eth_nope', params: [] },
      { jsonrpc: '2.0', method: 'eth_nope', params: [] },
      7,
      { jsonrpc: '2.0', id: null, method: 'eth_nope' },
    ]);
    const res = await signedFresh(body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual([
      invalidRequest,
      { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ code: -32601 }) },
      invalidRequest,
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32601 }) },
    ]);
  });

  it('an empty batch [] → a single -32600 object', async () => {
    const res = await signedFresh('[]');
    expect(res.status).toBe(200);
    expect(res.json).toEqual(invalidRequest);
  });

  it('a batch of only notifications → HTTP 204 with an empty body', async () => {
    const res = await signedFresh(
      JSON.stringify([
        { jsonrpc: '2.0', method: 'eth_nope' },
        { jsonrpc: '2.0', method: 'eth_nope', params: {} },
      ]),
    );
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });
});

describe('top-level values that are not requests', () => {
  it.each(['1', '"x"', 'null', 'true', '0.5'])('%s → -32600', async (body) => {
    const res = await signedFresh(body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(invalidRequest);
  });

  it('a JSON string holding a request is not parsed a second time and run', async () => {
    const inner = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'eth_nope' });
    const res = await signedFresh(JSON.stringify(inner));
    expect(res.json).toEqual(invalidRequest);
  });

  it('a number that does not round-trip (1e400, -1e400, 1e-400, 2^53 + 1) → -32602 before anything runs or is charged', async () => {
    for (const n of ['1e400', '-1e400', '1e-400', '9007199254740993']) {
      const res = await signedFresh(`{"jsonrpc":"2.0","id":3,"method":"eth_sendBundle","params":[{"txs":[],"blockNumber":${n}}]}`);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ id: null, error: { code: -32602, data: { reason: 'number_not_representable' } } });
      expect(res.json.error.message).toContain(n);
    }
  });

  it('invalid JSON → -32700', async () => {
    for (const body of ['', '{', '[1,]', 'nul', '\u0000']) expect((await signedFresh(body)).json).toMatchObject({ id: null, error: { code: -32700 } });
  });
});

describe('deep nesting and huge strings', () => {
  it('10,000 levels of [ ] or { } → -32600 (HTTP 200); 10,000 unclosed [ → -32700', async () => {
    for (const body of [
      '['.repeat(10_000) + ']'.repeat(10_000),
      '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000),
      `[{"jsonrpc":"2.0","id":1,"method":"eth_sendBundle","params":${'['.repeat(10_000)}${']'.repeat(10_000)}}]`,
    ]) {
      const res = await signedFresh(body);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ id: null, error: { code: -32600, data: { reason: 'nesting_too_deep' } } });
    }
    const unclosed = await signedFresh('['.repeat(10_000));
    expect(unclosed.status).toBe(200);
    expect(unclosed.json.error.code).toBe(-32700);
  });

  it('brackets inside strings do not count as nesting', async () => {
    const res = await signedFresh(JSON.stringify({ jsonrpc: '2.0', id: 2, method: `eth_${'['.repeat(1000)}\\"{`, params: [] }));
    expect(res.json).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it('a 900 kB method name or id is answered', async () => {
    const big = 'x'.repeat(900_000);
    expect((await signedFresh(JSON.stringify({ jsonrpc: '2.0', id: 3, method: big }))).json).toMatchObject({ id: 3, error: { code: -32601 } });
    const res = await signedFresh(JSON.stringify({ jsonrpc: '2.0', id: big, method: 'eth_nope' }));
    expect(res.json.error.code).toBe(-32601);
    expect(res.json.id).toHaveLength(900_000);
  });
});

describe('HTTP methods and paths', () => {
  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'MKCOL'])('%s /rpc → 405 with Allow: POST', async (method) => {
    const res = await httpRequest(t.builder.rpcUrl, { method, localAddress: freshIp() });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it.each(['/', '/rpc/', '/rpcx', '/health', '/%00'])('POST %s → 404', async (path) => {
    const res = await httpRequest(`${t.builder.url}${path}`, { body: '{}', localAddress: freshIp() });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe(-32600);
  });
});
