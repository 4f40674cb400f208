import { METHODS } from 'node:http';
import { unsafeJsonNumber } from '@acg/schemas';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flashbotsSignature, httpRequest, startTestBuilder, type Reply, type TestBuilder } from './harness.js';

// Property-based fuzz of `POST /rpc` (JSON-RPC 2.0 over node:http): every input, signed or not,
// gets an HTTP answer (no 5xx, no dropped connection, no hang before a generous 10 s timeout),
// every JSON-RPC error uses a standard code, and a batch gets one entry per call that is not a
// notification. The builder trusts X-Forwarded-For here so each input has its own rate-limit
// bucket (10/s, burst 20, unchanged); one test checks that 429 still comes as -32005.
//
// Reproduce a run with FUZZ_SEED=<seed printed on failure>.

let t: TestBuilder;
beforeAll(async () => {
  t = await startTestBuilder({ trustProxy: true });
});

const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
/** JSON-RPC error codes the builder may answer with (JSON-RPC 2.0 §5.1; EIP-1474 -32005; docs/decisions.md "Errors"). */
const STANDARD_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32005]);
const MAX_BATCH = 20;
const MAX_DEPTH = 64;
const MAX_BODY_BYTES = 1024 * 1024;
const HANG_TIMEOUT_MS = 10_000;

interface Tally {
  inputs: number;
  failures: { input: string; problem: string }[];
}
const tallies = new Map<string, Tally>();
afterAll(async () => {
  for (const [category, { inputs, failures }] of tallies) console.log(`rpc fuzz: ${inputs} inputs, ${failures.length} failures (${category}, seed ${seed})`);
  await t?.close();
});

let ipCounter = 0;
/** A source address of its own for every request (X-Forwarded-For, trusted here). */
const nextIp = () => {
  const n = ipCounter++;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

/** An HTTP request the fuzz sends. */
interface Input {
  method: string;
  path: string;
  body: string;
  contentType: string | undefined;
  signed: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A valid JSON-RPC 2.0 request without `id`: the server answers nothing for it (JSON-RPC 2.0 §4.1). */
const isNotification = (v: unknown) =>
  isPlainObject(v) &&
  v.jsonrpc === '2.0' &&
  typeof v.method === 'string' &&
  (v.params === undefined || (typeof v.params === 'object' && v.params !== null)) &&
  !('id' in v);
/** Array/object nesting of a parsed value, computed without recursion. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    max = Math.max(max, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** What is wrong with `reply` to `input`, or null: the oracle, from JSON-RPC 2.0 and the README's wire format. */
function problemWith(input: Input, reply: Reply): string | null {
  if (reply.status >= 500) return `HTTP ${reply.status}`;
  const path = input.path.split('?')[0];
  if (input.method === 'CONNECT') return reply.status === 405 && reply.headers.allow === 'POST' ? null : `CONNECT → HTTP ${reply.status}`;
  if (path !== '/rpc') return reply.status === 404 ? null : `unknown path → HTTP ${reply.status}, not 404`;
  if (input.method !== 'POST')
    return reply.status === 405 && reply.headers.allow === 'POST'
      ? null
      : `${input.method} → HTTP ${reply.status} allow ${reply.headers.allow}, not 405 with Allow: POST`;
  if (Buffer.byteLength(input.body) > MAX_BODY_BYTES)
    return reply.status === 413 && reply.json?.error?.code === -32600 ? null : `oversize body → HTTP ${reply.status}`;

  const errors = (Array.isArray(reply.json) ? reply.json : [reply.json]).filter((r) => isPlainObject(r) && 'error' in r);
  for (const r of errors) if (!STANDARD_CODES.has(r.error?.code)) return `non-standard error code ${JSON.stringify(r.error?.code)}`;
  const single = (code: number, id: unknown = null) =>
    reply.status === 200 && !Array.isArray(reply.json) && reply.json?.error?.code === code && reply.json.id === id
      ? null
      : `expected one ${code} with id ${JSON.stringify(id)}, got HTTP ${reply.status} ${reply.text.slice(0, 200)}`;

  let parsed: unknown;
  try {
    parsed = JSON.parse(input.body);
  } catch {
    return single(-32700);
  }
  // a number literal that does not round-trip exactly (1e400, integers past 2^53 − 1) is refused
  // before anything else reads the body (README "Payments, money under attack": strict JSON numbers)
  if (unsafeJsonNumber(input.body) !== undefined)
    return single(-32602) ?? (reply.json.error.data?.reason === 'number_not_representable' ? null : 'unsafe number but not number_not_representable');
  if (depthOf(parsed) > MAX_DEPTH) return single(-32600);
  if (!input.signed) {
    // the signature error keeps a string or number id of a single request
    const id = isPlainObject(parsed) && (typeof parsed.id === 'string' || typeof parsed.id === 'number') ? parsed.id : null;
    return single(-32600, id) ?? (reply.json.error.data?.reason === 'signature_missing' ? null : 'unsigned but not signature_missing');
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0 || parsed.length > MAX_BATCH) return single(-32600);
    const calls = parsed.filter((e) => !isNotification(e)).length;
    if (calls === 0) return reply.status === 204 && reply.text === '' ? null : `notification-only batch → HTTP ${reply.status} ${reply.text.slice(0, 100)}`;
    if (reply.status !== 200 || !Array.isArray(reply.json)) return `batch → HTTP ${reply.status} ${reply.text.slice(0, 200)}`;
    if (reply.json.length !== calls) return `batch of ${parsed.length} with ${calls} calls → ${reply.json.length} responses`;
    for (const r of reply.json)
      if (!isPlainObject(r) || r.jsonrpc !== '2.0' || 'error' in r === 'result' in r) return `malformed batch entry ${JSON.stringify(r).slice(0, 200)}`;
    return null;
  }
  if (isNotification(parsed)) return reply.status === 204 && reply.text === '' ? null : `notification → HTTP ${reply.status}`;
  if (reply.status !== 200 || !isPlainObject(reply.json) || reply.json.jsonrpc !== '2.0')
    return `single call → HTTP ${reply.status} ${reply.text.slice(0, 200)}`;
  if (!isPlainObject(parsed)) return single(-32600);
  return null;
}

/** Sends `input` (signed by a fresh key when asked) and records the outcome under `category`. */
async function probe(category: string, input: Input): Promise<void> {
  const tally = tallies.get(category) ?? { inputs: 0, failures: [] };
  tallies.set(category, tally);
  tally.inputs++;
  const headers: Record<string, string> = { 'x-forwarded-for': nextIp() };
  if (input.contentType !== undefined) headers['content-type'] = input.contentType;
  if (input.signed) headers['x-bundle-signature'] = await flashbotsSignature(privateKeyToAccount(generatePrivateKey()), input.body);
  let problem: string | null;
  try {
    const withBody = !['GET', 'HEAD', 'CONNECT'].includes(input.method) || input.body !== '';
    problem = problemWith(
      input,
      await httpRequest(`${t.builder.url}${input.path}`, {
        method: input.method,
        body: withBody ? input.body : undefined,
        headers,
        timeoutMs: HANG_TIMEOUT_MS,
      }),
    );
  } catch (e) {
    problem = `no answer: ${(e as Error).message}`;
  }
  if (problem) tally.failures.push({ input: `${input.method} ${input.path} signed=${input.signed} ${JSON.stringify(input.body.slice(0, 120))}`, problem });
}

/** Runs `numRuns` inputs of `arb` and expects no failures (the first few are shown). */
async function fuzz(category: string, arb: fc.Arbitrary<Input>, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(arb, async (input) => probe(category, input)),
    { numRuns, seed, endOnFailure: true },
  );
  expect(tallies.get(category)?.failures.slice(0, 5) ?? [], `seed ${seed}`).toEqual([]);
}

const post = (body: fc.Arbitrary<string>, contentType: fc.Arbitrary<string | undefined> = fc.constant('application/json')): fc.Arbitrary<Input> =>
  fc.record({ method: fc.constant('POST'), path: fc.constant('/rpc'), body, contentType, signed: fc.boolean() });

const anyJson = fc.jsonValue({ maxDepth: 4 });
const rpcMethod = fc.oneof(
  fc.constantFrom('eth_sendBundle', 'eth_cancelBundle', 'eth_callBundle', 'eth_nope', '', 'constructor', '__proto__', 'toString'),
  fc.string({ maxLength: 20 }),
  anyJson,
);
/** Objects shaped like a request, each member present or not and of the right type or not. */
const requestLike = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constantFrom('1.0', 2, null), anyJson),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.double(), anyJson),
    method: rpcMethod,
    params: fc.oneof(fc.constant([]), fc.array(anyJson, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }), anyJson),
  },
  { requiredKeys: [] },
);
const element = fc.oneof(requestLike, anyJson, fc.array(anyJson, { maxLength: 3 }));

describe('POST /rpc answers every input (fast-check)', () => {
  it('malformed JSON → -32700', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.string({ unit: 'grapheme-ascii', maxLength: 3 })).map(([j, at, junk]) => {
        const i = at % (j.length + 1);
        return j.slice(0, i) + junk + j.slice(i + (at % 2));
      }),
      fc.json({ maxDepth: 3 }).map((j) => j.slice(0, Math.max(0, j.length - 1))),
    );
    await fuzz('malformed JSON', post(text), 200);
  });

  it('arbitrary JSON values (fc.jsonValue) and request-shaped objects', async () => {
    await fuzz('JSON values and request-like objects', post(fc.oneof(anyJson, requestLike).map((v) => JSON.stringify(v))), 300);
  });

  it('batches of arbitrary elements (arrays, notifications, calls), up to and over the batch limit', async () => {
    const notification = fc.record({
      jsonrpc: fc.constant('2.0'),
      method: rpcMethod.filter((m) => typeof m === 'string') as fc.Arbitrary<string>,
      params: fc.constant([]),
    });
    const batch = fc.array(fc.oneof(element, notification), { maxLength: MAX_BATCH + 2 });
    await fuzz('batches', post(batch.map((b) => JSON.stringify(b))), 300);
  });

  it('deep nesting, as the body and inside params, closed or not', async () => {
    const deep = fc
      .record({ depth: fc.integer({ min: 1, max: 30_000 }), open: fc.constantFrom('[', '{"a":'), closed: fc.boolean(), inParams: fc.boolean() })
      .map(({ depth, open, closed, inParams }) => {
        const close = open === '[' ? ']' : '}';
        const inner = `${open.repeat(depth)}${open === '[' ? '' : '1'}${closed ? close.repeat(depth) : ''}`;
        return inParams ? `{"jsonrpc":"2.0","id":1,"method":"eth_sendBundle","params":[${inner}]}` : inner;
      });
    await fuzz('deep nesting', post(deep), 80);
  });

  it('huge strings in method, id, params or keys, up to and over the body limit', async () => {
    const huge = fc
      .record({ size: fc.integer({ min: 1, max: 1_100_000 }), where: fc.constantFrom('method', 'id', 'param', 'key', 'top') })
      .map(({ size, where }) => {
        const s = 'a'.repeat(size);
        if (where === 'top') return JSON.stringify(s);
        if (where === 'key') return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendBundle', params: [{ [s]: 1 }] });
        return JSON.stringify({
          jsonrpc: '2.0',
          id: where === 'id' ? s : 1,
          method: where === 'method' ? s : 'eth_cancelBundle',
          params: where === 'param' ? [{ replacementUuid: s }] : [],
        });
      });
    await fuzz('huge strings', post(huge), 24);
  });

  it('odd content types', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        undefined,
        '',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json-rpc',
        '*/*',
      ),
      fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    );
    await fuzz(
      'content types',
      post(
        fc.oneof(requestLike, anyJson).map((v) => JSON.stringify(v)),
        contentType,
      ),
      100,
    );
  });

  it('every HTTP method node:http knows, on /rpc and other paths', async () => {
    const input = fc.record({
      method: fc.constantFrom(...METHODS),
      path: fc.oneof(
        fc.constantFrom('/rpc', '/rpc?x=1', '/', '/rpc/', '/RPC', '/health'),
        fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
      ),
      body: fc.oneof(
        fc.constant(''),
        requestLike.map((v) => JSON.stringify(v)),
      ),
      contentType: fc.constant('application/json'),
      signed: fc.boolean(),
    });
    await fuzz('HTTP methods and paths', input, 200);
  });
});

describe('rate limit under the fuzz configuration', () => {
  it('25 instant requests from one client: the ones over the burst get HTTP 429 with a JSON-RPC -32005', async () => {
    const ip = nextIp();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_cancelBundle', params: [] });
    const replies = await Promise.all(
      Array.from({ length: 25 }, () => httpRequest(t.builder.rpcUrl, { body, headers: { 'content-type': 'application/json', 'x-forwarded-for': ip } })),
    );
    const limited = replies.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005 } });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });
});
