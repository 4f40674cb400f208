import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assertJsonContentType, BodyRefused, jsonTooDeep, parseJsonBody } from '../src/http/body.js';
import { RouteTable } from '../src/http/routes.js';
import { trpcEnvelopeToProblem } from '../src/http/trpcProblem.js';
import { appRouter } from '../src/routers/index.js';

describe('RouteTable', () => {
  const routes = new RouteTable(appRouter, ['/registry']);
  it('resolves documented paths, templates, documents and /trpc procedures', () => {
    expect(routes.match('POST', '/api/v1/execute')).toEqual({ kind: 'ok', template: '/api/v1/execute' });
    expect(routes.match('GET', '/api/v1/jobs/job_1')).toEqual({ kind: 'ok', template: '/api/v1/jobs/{job_id}' });
    expect(routes.match('HEAD', '/api/v1/jobs/job_1')).toEqual({ kind: 'ok', template: '/api/v1/jobs/{job_id}' });
    expect(routes.match('GET', '/api/v1/jobs/a/b')).toEqual({ kind: 'not_found' });
    expect(routes.match('DELETE', '/api/v1/jobs/job_1')).toEqual({
      kind: 'method_not_allowed',
      allow: 'GET, HEAD, OPTIONS',
      template: '/api/v1/jobs/{job_id}',
    });
    expect(routes.match('POST', '/registry')).toEqual({ kind: 'method_not_allowed', allow: 'GET, HEAD, OPTIONS', template: '/registry' });
    expect(routes.match('GET', '/trpc/discovery.health')).toEqual({ kind: 'ok', template: '/trpc/discovery.health' });
    expect(routes.match('POST', '/trpc/discovery.health')).toEqual({ kind: 'method_not_allowed', allow: 'GET, OPTIONS', template: '/trpc/discovery.health' });
    expect(routes.match('POST', '/trpc/execute.execute')).toEqual({ kind: 'ok', template: '/trpc/execute.execute' });
    expect(routes.match('TRACE', '/trpc/x')).toEqual({ kind: 'not_found' });
    expect(routes.match('GET', '/trpc/discovery.health,discovery.registry')).toEqual({ kind: 'ok', template: '/trpc/{batch}' });
  });
  it('never throws, whatever the method and path', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (method, path) => {
        expect(['ok', 'not_found', 'method_not_allowed']).toContain(routes.match(method, `/${path}`).kind);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('request bodies', () => {
  it('measures nesting without recursion, skipping brackets inside strings', () => {
    expect(jsonTooDeep('[[[]]]', 3)).toBe(false);
    expect(jsonTooDeep('[[[[]]]]', 3)).toBe(true);
    expect(jsonTooDeep('["[[[[[[", "\\"[[[["]', 1)).toBe(false);
    expect(jsonTooDeep('['.repeat(1_000_000), 64)).toBe(true);
  });
  it('agrees with JSON.parse on valid JSON: depth counted by the scanner equals the real depth', () => {
    const depth = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depth)) : 0);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        const text = JSON.stringify(v);
        const d = depth(v);
        expect(jsonTooDeep(text, d)).toBe(false);
        if (d > 0) expect(jsonTooDeep(text, d - 1)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
  it('accepts application/json in UTF-8 and +json types, refuses everything else with 415', () => {
    for (const ok of ['application/json', 'application/json; charset=utf-8', 'Application/JSON; charset="UTF-8"', 'application/problem+json']) {
      expect(() => assertJsonContentType(ok), ok).not.toThrow();
    }
    for (const bad of [undefined, '', 'application/jsonx', 'application/json; charset=utf-16', 'text/json', 'multipart/form-data', ';;;']) {
      const e = (() => {
        try {
          assertJsonContentType(bad);
        } catch (err) {
          return err;
        }
      })();
      expect(e, String(bad)).toBeInstanceOf(BodyRefused);
      expect((e as BodyRefused).status).toBe(415);
    }
  });
  it('refuses invalid UTF-8, invalid JSON and deep nesting with 400', () => {
    for (const raw of [Buffer.from([0xff]), Buffer.from('{'), Buffer.from('['.repeat(100) + ']'.repeat(100))]) {
      expect(() => parseJsonBody(raw)).toThrow(BodyRefused);
    }
    expect(parseJsonBody(Buffer.from('{"a":[1]}'))).toEqual({ a: [1] });
  });
});

describe('/trpc problem bodies', () => {
  it('lifts the problem members of a tRPC error envelope and keeps the envelope under `error`', () => {
    const shape = {
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'No such job.',
      message: 'No such job.',
      code: -32004,
      data: { code: 'NOT_FOUND', httpStatus: 404 },
    };
    expect(trpcEnvelopeToProblem({ error: shape })).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'No such job.',
      error: { message: 'No such job.', code: -32004, data: { code: 'NOT_FOUND', httpStatus: 404 } },
    });
    // tRPC's own fallback shape (no problem members) still becomes a problem
    expect(
      trpcEnvelopeToProblem({ error: { message: 'Internal server error', code: -32603, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 } } }),
    ).toMatchObject({
      type: 'about:blank',
      status: 500,
      title: 'Internal Server Error',
    });
    expect(trpcEnvelopeToProblem({ result: { data: 1 } })).toEqual({ result: { data: 1 } });
  });
});
