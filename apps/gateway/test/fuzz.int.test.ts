import { LiquidationIndexStore } from '@acg/liquidations';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../src/http/body.js';
import { RouteTable } from '../src/http/routes.js';
import { appRouter } from '../src/routers/index.js';
import { WEB_PATHS } from '../src/web/routes.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { isProblem, rawRequest, type RawResult } from './rawHttp.js';

/**
 * Property-based fuzzing of every REST route and /trpc procedure (bounded in count; each request
 * has a hang-detection bound, not a speed limit). Asserts: an answer (no dropped connection, no
 * hang), no 5xx, and every error an RFC 9457 problem object (the 402 is the x402 challenge).
 */

let t: TestGateway;
beforeAll(async () => {
  // no rate limit: the fuzz is about inputs, not about the limiter (tested elsewhere)
  t = await startTestGateway({ config: { rateLimitPerSecond: 0 } });
  // an indexed (empty) block per chain, so liquidation searches reach validation and payment
  // instead of the 503 "index not ready" they rightly answer before the first block
  const { redis, keys } = t.gateway.services;
  for (const chain of ['ethereum', 'base', 'arbitrum'] as const) {
    await new LiquidationIndexStore(redis, keys, chain).writeBlock(
      { block_number: 1, block_timestamp: Math.floor(Date.now() / 1000), base_fee_wei: '1000000000', eth_usd: 3000, updated_at: new Date().toISOString() },
      {},
      [],
    );
  }
});
afterAll(async () => {
  await t?.close();
  const rows = [...stats].sort(([a], [b]) => (a < b ? -1 : 1));
  const total = rows.reduce((n, [, s]) => n + s.tried, 0);
  const failed = rows.reduce((n, [, s]) => n + s.failed, 0);
  console.log(
    `REST fuzz: ${total} inputs, ${failed} failures\n${rows.map(([k, s]) => `  ${k.padEnd(52)} ${String(s.tried).padStart(5)} tried ${String(s.failed).padStart(3)} failed`).join('\n')}`,
  );
});

// the documents and the web pages' paths (API clients get the 404 problem+json on a page path, the files are served)
const routes = new RouteTable(appRouter, ['/openapi.json', '/registry', '/gateway-catalog.json', '/status/health', '/llms.txt', '/sitemap.xml', ...WEB_PATHS]);
const stats = new Map<string, { tried: number; failed: number }>();

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'] as const;
const CONTENT_TYPES = [
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/jsonx',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '%%%',
  'application/problem+json',
];

/** A path segment: id-shaped, random text, or hostile (encoded slashes, dots, unicode). */
const segment = fc.oneof(
  fc.constantFrom('job_01J00000000000000000000000', 'exe_01J00000000000000000000000', 'sub_01J00000000000000000000000', '..', '%2F', '%00', 'x'.repeat(300)),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
);

const restPath = fc
  .tuple(fc.constantFrom(...routes.list().map((r) => r.template)), fc.array(segment, { minLength: 3, maxLength: 3 }))
  .map(([template, segs]) => {
    let i = 0;
    return { label: template, path: template.replace(/\{[^}]+\}/g, () => segs[i++]) };
  });
const trpcPath = fc.constantFrom(...routes.procedureNames()).map((name) => ({ label: `/trpc/${name}`, path: `/trpc/${name}` }));
const randomPath = fc.string({ maxLength: 60 }).map((s) => ({ label: '(random path)', path: `/${encodeURI(s)}` }));

/** A body made when sent; prints as a short description (fast-check reports counterexamples with it). */
class LazyBody {
  constructor(
    readonly label: string,
    readonly make: () => string,
  ) {}
  [fc.toStringMethod](): string {
    return `LazyBody(${this.label})`;
  }
}
const lazy = (label: string, make: () => string) => new LazyBody(label, make);

/** Bodies: valid JSON of any shape, spec-shaped with wrong types, malformed, deep, huge. */
const body = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)) },
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          capability_id: fc.oneof(fc.constantFrom('intelligence.wallet_balances', 'mev.liquidation_search', 'nope'), fc.jsonValue()),
          input: fc.jsonValue({ maxDepth: 4 }),
          objective: fc.jsonValue({ maxDepth: 2 }),
          budget_usdc: fc.oneof(fc.constantFrom('1.00', '-1', '1e309', '0.0000001', 'NaN'), fc.double(), fc.string()),
          capabilities: fc.jsonValue({ maxDepth: 2 }),
          addresses: fc.jsonValue({ maxDepth: 2 }),
          webhook_url: fc.oneof(fc.webUrl(), fc.constantFrom('http://169.254.169.254/', 'https://[::ffff:127.0.0.1]/'), fc.string()),
          message: fc.string(),
          signature: fc.string(),
          amount_usdc: fc.oneof(fc.string(), fc.double()),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 20_000 })
      .map((n) => lazy(`${n} nested arrays`, () => `{"capability_id":"x","input":${'['.repeat(n)}${']'.repeat(n)}}`)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => lazy(`${n} nested objects`, () => '{"a":'.repeat(n) + '1' + '}'.repeat(n))) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 10_000, max: MAX_BODY_BYTES + 50_000 })
      .map((n) => lazy(`string of ${n} bytes`, () => JSON.stringify({ capability_id: 'x'.repeat(n), input: {} }))),
  },
  { weight: 1, arbitrary: fc.constant('') },
);

/** Headers: content type, and sometimes a bearer token or a payment header with garbage. */
const headers = fc
  .record(
    {
      ct: fc.constantFrom(...CONTENT_TYPES),
      auth: fc.oneof(
        fc.constant(undefined),
        fc.string({ maxLength: 80 }).map((s) => `Bearer ${s.replace(/[^\x21-\x7e]/g, 'x')}`),
      ),
      pay: fc.oneof(
        fc.constant(undefined),
        fc.base64String({ maxLength: 400 }),
        fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v)).toString('base64')),
      ),
      idem: fc.oneof(
        fc.constant(undefined),
        fc.string({ maxLength: 300 }).map((s) => s.replace(/[^\x21-\x7e]/g, 'k')),
      ),
    },
    { requiredKeys: ['ct'] },
  )
  .map(({ ct, auth, pay, idem }) => {
    const h: Record<string, string> = {};
    if (ct) h['content-type'] = ct;
    if (auth) h.authorization = auth;
    if (pay) h['payment-signature'] = pay;
    if (idem) h['idempotency-key'] = idem;
    return h;
  });

/** What is wrong with one exchange, or undefined when it is acceptable. */
function fault(method: string, r: RawResult): string | undefined {
  if (r.kind === 'dropped') return `dropped connection: ${r.error}`;
  if (r.kind === 'hang') return 'no answer within the hang bound';
  if (r.status >= 500) return `${r.status}: ${r.text.slice(0, 200)}`;
  if (r.status < 400 || method === 'HEAD') return undefined;
  if (r.text.startsWith('[')) {
    // a /trpc batch: each element is a result or a problem object
    const items = JSON.parse(r.text) as Record<string, unknown>[];
    const bad = items.find((i) => !('result' in i) && !isProblem(JSON.stringify(i), Number(i.status)));
    return bad ? `batch element is not a problem object: ${JSON.stringify(bad).slice(0, 200)}` : undefined;
  }
  if (r.status === 402) {
    const b = JSON.parse(r.text) as Record<string, unknown>;
    return b.x402Version === 2 && Array.isArray(b.accepts) ? undefined : `402 without an x402 challenge: ${r.text.slice(0, 200)}`;
  }
  return isProblem(r.text, r.status) ? undefined : `${r.status} is not a problem object: ${r.text.slice(0, 200)}`;
}

async function exchange(label: string, method: string, path: string, h: Record<string, string>, lazyOrText: LazyBody | string | undefined) {
  const b = lazyOrText instanceof LazyBody ? lazyOrText.make() : lazyOrText;
  const r = await rawRequest(t.url, { method, path, headers: h, body: b, timeoutMs: 20_000 });
  const s = stats.get(label) ?? { tried: 0, failed: 0 };
  s.tried++;
  const f = fault(method, r);
  if (f) s.failed++;
  stats.set(label, s);
  expect(f, `${method} ${path.slice(0, 120)} ${JSON.stringify(h).slice(0, 200)} body=${String(b).slice(0, 120)}`).toBeUndefined();
}

describe('REST and /trpc fuzz', () => {
  it('every documented route, with bodies, methods and content types of every kind', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(restPath, trpcPath), fc.constantFrom(...METHODS), body, headers, async (p, method, b, h) => {
        await exchange(p.label, method, p.path, h, method === 'GET' || method === 'HEAD' ? undefined : b);
      }),
      { numRuns: 2_000, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
  });

  it('each route with the method it documents (the paths that reach the handlers)', async () => {
    for (const route of routes.list()) {
      const method = [...route.methods].find((m) => m !== 'HEAD' && m !== 'OPTIONS') ?? 'GET';
      await fc.assert(
        fc.asyncProperty(
          fc.array(segment, { minLength: 3, maxLength: 3 }),
          body,
          headers,
          fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 60 }), { maxKeys: 4 }),
          async (segs, b, h, query) => {
            let i = 0;
            const qs = new URLSearchParams(query).toString();
            const path = route.template.replace(/\{[^}]+\}/g, () => segs[i++]) + (qs ? `?${qs}` : '');
            await exchange(route.template, method, path, h, method === 'GET' ? undefined : b);
          },
        ),
        { numRuns: 60 },
      );
    }
  });

  it('random paths and the native tRPC query encoding', async () => {
    await fc.assert(
      fc.asyncProperty(randomPath, fc.constantFrom(...METHODS), async (p, method) => {
        await exchange(p.label, method, p.path, {}, undefined);
      }),
      { numRuns: 150 },
    );
    await fc.assert(
      fc.asyncProperty(
        trpcPath,
        fc.oneof(
          fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)),
          fc.string({ maxLength: 100 }),
        ),
        fc.boolean(),
        async (p, input, batch) => {
          const path = `${p.path}?${batch ? 'batch=1&' : ''}input=${encodeURIComponent(batch ? `{"0":${input}}` : input)}`;
          await exchange(`${p.label} (query)`, 'GET', path, {}, undefined);
        },
      ),
      { numRuns: 150 },
    );
  });
});
