import { describe, expect, it } from 'vitest';
import { useTestGateway } from './useTestGateway.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../src/http/body.js';
import { isProblem, rawRequest, type RawResult } from './rawHttp.js';
import { bearerToken } from './x402.js';

const t = useTestGateway({ config: { rateLimitPerSecond: 0 } });

const send = (method: string, path: string, o: { body?: string | Buffer; headers?: Record<string, string>; chunked?: boolean } = {}) =>
  rawRequest(t.url, { method, path, ...o });

function answer(r: RawResult) {
  if (r.kind !== 'answer') throw new Error(`no answer: ${JSON.stringify(r)}`);
  return r;
}

/** The gateway still answers (a crash would refuse the connection). */
async function stillServing() {
  const r = answer(await send('GET', '/registry'));
  expect(r.status).toBe(200);
}

describe('every method and path gets an answer', () => {
  it('TRACE on /trpc answers 404/405 problem+json and the process keeps serving', async () => {
    const unknown = answer(await send('TRACE', '/trpc/x'));
    expect(unknown.status).toBe(404);
    expect(isProblem(unknown.text, 404)).toBe(true);
    const known = answer(await send('TRACE', '/trpc/discovery.registry'));
    expect(known.status).toBe(405);
    expect(known.headers.allow).toBe('GET, OPTIONS');
    expect(isProblem(known.text, 405)).toBe(true);
    await stillServing();
  });

  it('answers 405 with Allow on a known REST path and 404 on an unknown one, for any method', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE', 'TRACE', 'PROPFIND', 'MKCOL']) {
      const known = answer(await send(method, '/api/v1/execute'));
      expect(known.status, method).toBe(405);
      expect(known.headers.allow).toBe('POST, OPTIONS');
      expect(known.headers['content-type']).toBe('application/problem+json');
      expect(isProblem(known.text, 405)).toBe(true);
      const templated = answer(await send(method, '/api/v1/jobs/job_01ABC'));
      expect(templated.status, method).toBe(405);
      expect(templated.headers.allow).toBe('GET, HEAD, OPTIONS');
      const unknown = answer(await send(method, '/nope'));
      expect(unknown.status, method).toBe(404);
      expect(isProblem(unknown.text, 404)).toBe(true);
    }
    expect(answer(await send('GET', '/api/v1/execute')).status).toBe(405);
    expect(answer(await send('POST', '/registry', { body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(405);
    await stillServing();
  });

  it('CORS: every answer lets any origin read it and exposes the x402 headers; the preflight names the methods and request headers', async () => {
    const origin = { origin: 'https://agent.example' };
    const get = answer(await send('GET', '/registry', { headers: origin }));
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe('*');
    expect(String(get.headers['access-control-expose-headers']).split(', ')).toEqual(
      expect.arrayContaining(['PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'X-Request-Id']),
    );
    // request-side permissions belong to the preflight only
    expect(get.headers['access-control-allow-methods']).toBeUndefined();
    expect(get.headers['access-control-allow-headers']).toBeUndefined();
    const preflight = answer(
      await send('OPTIONS', '/api/v1/execute', {
        headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, payment-signature' },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods']).split(', ')).toContain('POST');
    expect(String(preflight.headers['access-control-allow-headers']).split(', ')).toEqual(expect.arrayContaining(['Content-Type', 'PAYMENT-SIGNATURE']));
    expect(preflight.headers['access-control-max-age']).toBe('600');
  });

  it('answers HEAD on an unknown path with 404, and HEAD on a document like GET without a body', async () => {
    const unknown = answer(await send('HEAD', '/does-not-exist'));
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe('');
    const doc = answer(await send('HEAD', '/registry'));
    expect(doc.status).toBe(200);
    expect(doc.text).toBe('');
    // a job is read by its payer only: an unknown job answers a signed-in wallet 404
    const token = await bearerToken(t.url, t.stack.payment.buyers[0]);
    const rest = answer(await send('HEAD', '/api/v1/jobs/job_01J00000000000000000000000', { headers: { authorization: `Bearer ${token}` } }));
    expect(rest.status).toBe(404);
  });

  it('answers CONNECT with 405 and a method node cannot parse with 400, instead of dropping the connection', async () => {
    const r = answer(await send('CONNECT', '127.0.0.1:1'));
    expect(r.status).toBe(405);
    const foo = answer(await send('FOO', '/api/v1/execute'));
    expect(foo.status).toBe(400);
    expect(isProblem(foo.text, 400)).toBe(true);
    await stillServing();
  });
});

describe('input limits', () => {
  const nested = (levels: number) => `{"capability_id":"intelligence.wallet_balances","input":${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it('refuses deep nesting with 400 before parsing or validation, on every POST endpoint', async () => {
    for (const path of ['/api/v1/execute', '/api/v1/jobs', '/v1/auth/token', '/v1/wallet-monitor', '/trpc/execute.execute']) {
      for (const levels of [5_000, 100_000]) {
        const r = answer(await send('POST', path, { body: nested(levels), headers: { 'content-type': 'application/json' } }));
        expect(r.status, `${path} ${levels}`).toBe(400);
        expect(isProblem(r.text, 400)).toBe(true);
        expect(JSON.parse(r.text).detail).toContain(`${MAX_JSON_DEPTH} levels`);
      }
    }
    // within the limit, nesting is the schema's business (402 challenge here: the input is not checked before payment)
    const ok = answer(await send('POST', '/api/v1/execute', { body: nested(MAX_JSON_DEPTH - 2), headers: { 'content-type': 'application/json' } }));
    expect(ok.status).not.toBe(500);
    expect(ok.status).toBeLessThan(500);
  });

  it('refuses deep nesting in a /trpc query string with 400', async () => {
    const input = encodeURIComponent('['.repeat(1_000) + ']'.repeat(1_000));
    const r = answer(await send('GET', `/trpc/discovery.registry?input=${input}`));
    expect(r.status).toBe(400);
  });

  it('answers 413 to a body over the limit, with Content-Length and sent chunked', async () => {
    const big = Buffer.alloc(MAX_BODY_BYTES + 100_000, 0x20);
    for (const chunked of [false, true]) {
      const r = answer(await send('POST', '/api/v1/execute', { body: big, chunked, headers: { 'content-type': 'application/json' } }));
      expect(r.status, `chunked=${chunked}`).toBe(413);
      expect(isProblem(r.text, 413)).toBe(true);
    }
    await stillServing();
  });

  it('refuses bodies that are not UTF-8 JSON with 415', async () => {
    for (const ct of ['application/jsonx', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', '%%%']) {
      const r = answer(await send('POST', '/api/v1/execute', { body: '{}', headers: { 'content-type': ct } }));
      expect(r.status, ct).toBe(415);
      expect(isProblem(r.text, 415)).toBe(true);
    }
    const none = answer(await send('POST', '/api/v1/execute', { body: '{}' }));
    expect(none.status).toBe(415);
    for (const ct of ['application/json', 'application/json; charset=UTF-8', 'application/problem+json']) {
      const r = answer(await send('POST', '/api/v1/execute', { body: '{}', headers: { 'content-type': ct } }));
      expect(r.status, ct).toBe(400); // schema error, not a media-type error
    }
  });

  it('accepts a bodiless POST without Content-Type (curl -X POST .../cancel)', async () => {
    const r = answer(await send('POST', '/v1/wallet-monitor/sub_01J00000000000000000000000/cancel'));
    expect(r.status).toBe(401); // a bearer token is missing: the empty body itself is accepted
    expect(isProblem(r.text, 401)).toBe(true);
    const job = answer(await send('POST', '/api/v1/jobs/job_01J00000000000000000000000/cancel'));
    expect(job.status).toBe(404);
  });

  it('refuses invalid JSON and invalid UTF-8 with 400', async () => {
    for (const body of ['{', '{"a":1,}', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
      const r = answer(await send('POST', '/api/v1/execute', { body, headers: { 'content-type': 'application/json' } }));
      expect(r.status).toBe(400);
      expect(isProblem(r.text, 400)).toBe(true);
    }
  });
});

describe('query strings', () => {
  it('answers query names that exist on Object.prototype like any other name', async () => {
    const authorization = `Bearer ${await bearerToken(t.url, t.stack.payment.buyers[0])}`;
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const r = answer(await send('GET', `/api/v1/jobs/job_01J00000000000000000000000?${name}=1&${name}=2`, { headers: { authorization } }));
      expect(r.status, name).toBeLessThan(500);
      expect(isProblem(r.text, r.status), name).toBe(true);
    }
  });
});

describe('/trpc errors are problem objects', () => {
  it('answers an unknown procedure, a bad input and a wrong method with problem+json that @trpc/client still reads', async () => {
    const bad = answer(await send('POST', '/trpc/execute.execute', { body: '{"capability_id":1}', headers: { 'content-type': 'application/json' } }));
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toBe('application/problem+json');
    expect(isProblem(bad.text, 400)).toBe(true);
    const body = JSON.parse(bad.text);
    expect(body.error).toMatchObject({ code: -32600, data: { code: 'BAD_REQUEST', httpStatus: 400 } });
    const unknown = answer(await send('GET', '/trpc/nothing.here'));
    expect(unknown.status).toBe(404);
    expect(isProblem(unknown.text, 404)).toBe(true);
    const ok = answer(await send('GET', '/trpc/discovery.health?input=%7B%7D'));
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).result).toBeDefined();
  });

  it('never sends a server stack trace, whatever NODE_ENV says (tRPC adds one outside production by default)', async () => {
    expect(process.env.NODE_ENV).not.toBe('production');
    const bad = answer(await send('POST', '/trpc/execute.execute', { body: '{"capability_id":1}', headers: { 'content-type': 'application/json' } }));
    expect(bad.status).toBe(400);
    const body = JSON.parse(bad.text);
    expect(body.error.data).toBeDefined();
    expect(body.error.data).not.toHaveProperty('stack');
    expect(bad.text).not.toMatch(/\bat [^\s]+ \(|node_modules|\.ts:\d+/);
    const rest = answer(await send('POST', '/api/v1/execute', { body: '{"capability_id":1}', headers: { 'content-type': 'application/json' } }));
    expect(rest.status).toBe(400);
    expect(rest.text).not.toMatch(/\bat [^\s]+ \(|node_modules|\.ts:\d+/);
  });
});
