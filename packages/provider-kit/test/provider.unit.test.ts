/**
 * The provider endpoint (docs/decisions.md "Providers"): the gateway's Standard Webhooks signature over the
 * exact body, input validation, unknown capabilities, failures, and the EIP-191 result signature
 * over `acg-result:<execution_id>:<sha256 of RFC 8785 canonical JSON>`, checked here with
 * `canonicalize` and viem's `verifyMessage` independently of the kit. The endpoint listens on a
 * loopback port; the gateway side is played by `fetch` with `standardwebhooks` signatures.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { verifyMessage, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createProvider,
  defineProviderCapability,
  InvalidProviderCapabilityError,
  ProviderRunError,
  resultSha256,
  verifyResultSignature,
  type Provider,
  type RunningProvider,
} from '../src/index.js';
import { newSecret, signedCall } from './helpers.js';

const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const seen: { executionId: string }[] = [];

const echo = defineProviderCapability({
  name: 'echo',
  description: 'Returns its text, upper-cased, with its length.',
  price_usdc: '0.001',
  input: z.strictObject({ text: z.string().min(1), repeat: z.int().min(1).max(3).default(1) }),
  output: z.object({ text: z.string(), length: z.int(), unicode: z.string() }),
  example_request: { text: 'hi' },
  run: async ({ text, repeat }, ctx) => {
    seen.push({ executionId: ctx.executionId });
    return { text: text.toUpperCase().repeat(repeat), length: text.length, unicode: 'é€😀' };
  },
});
const broken = defineProviderCapability({
  name: 'broken',
  product: 'mev',
  description: 'Always fails.',
  price_usdc: '0.002',
  input: z.object({ kind: z.enum(['crash', 'refuse', 'bad_result', 'slow']) }),
  output: z.object({ ok: z.boolean() }),
  example_request: { kind: 'crash' },
  timeout_ms: 1000,
  run: async ({ kind }, ctx) => {
    if (kind === 'refuse') throw new ProviderRunError('not_erc20', 'The address is not an ERC-20 token.', 422);
    if (kind === 'bad_result') return { ok: 'yes' } as unknown as { ok: boolean };
    if (kind === 'slow') {
      await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    }
    throw new Error('secret upstream detail https://rpc.example/key123');
  },
});

let provider: Provider;
let running: RunningProvider;
let secret: string;
const call = (capability_id: string, input: unknown, execution_id = `exe_${Math.random().toString(36).slice(2)}`) => ({ capability_id, execution_id, input });

beforeAll(async () => {
  provider = createProvider({ capabilities: [echo, broken], account, maxBodyBytes: 64 * 1024 });
  running = await provider.listen(0);
  secret = newSecret();
});
afterAll(async () => running?.close());

describe('defineProviderCapability', () => {
  it('ids the capability <product>.<name> and fills the defaults', () => {
    expect(echo.id).toBe('intelligence.echo');
    expect(broken.id).toBe('mev.broken');
    expect(echo.timeout_ms).toBe(30_000);
    expect(echo.accepts_objective).toBe(false);
  });

  it('builds offers with JSON Schema 2020-12 (input as a caller may send it)', () => {
    const [offer] = provider.offers();
    expect(offer).toMatchObject({
      name: 'echo',
      product: 'intelligence',
      price_usdc: '0.001',
      example_request: { text: 'hi' },
      timeout_ms: 30_000,
      accepts_objective: false,
    });
    expect(offer.input_schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['text'] });
    expect(offer.output_schema).toMatchObject({ required: ['text', 'length', 'unicode'] });
    // what the gateway does at registration: strict Ajv 2020-12 compiles both, the example is a valid input
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    expect(ajv.compile(offer.input_schema)(offer.example_request)).toBe(true);
    expect(ajv.compile(offer.output_schema)({ text: 'HI', length: 2, unicode: 'x' })).toBe(true);
  });

  it.each([
    ['a bad name', { name: 'Echo' }],
    ['a product outside intelligence and mev', { product: 'gateway' }],
    ['a zero price', { price_usdc: '0' }],
    ['a price with 7 decimals', { price_usdc: '0.0000001' }],
    ['a timeout over 120 s', { timeout_ms: 200_000 }],
    ['an example that is not a valid input', { example_request: { text: '' } }],
    ['accepts_objective with an input that refuses {objective}', { accepts_objective: true }],
    ['a schema with no JSON Schema form', { output: z.object({ n: z.bigint() }) }],
  ])('refuses %s', (_, change) => {
    const base = {
      name: 'echo',
      description: 'd',
      price_usdc: '0.001',
      input: z.strictObject({ text: z.string().min(1) }),
      output: z.object({}),
      example_request: { text: 'x' },
      run: async () => ({}),
    };
    expect(() => defineProviderCapability({ ...base, ...change } as never)).toThrow(InvalidProviderCapabilityError);
  });
});

describe('the endpoint', () => {
  it('answers GET with its capabilities (the gateway reachability check), before and after a secret is set', async () => {
    const r = await fetch(`${running.url}/any/path`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, capabilities: ['intelligence.echo', 'mev.broken'] });
  });

  it('answers 503 not_registered to signed calls until a signing secret is set', async () => {
    const r = await signedCall(running.url, secret, call('intelligence.echo', { text: 'hi' }));
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.json).toMatchObject({ status: 503, code: 'not_registered', title: 'Service Unavailable' });
    provider.setSigningSecret(secret);
    expect(provider.hasSigningSecret()).toBe(true);
  });

  it('runs a correctly signed call and signs the result (EIP-191 over acg-result:<execution_id>:<sha256 of JCS>)', async () => {
    const body = call('intelligence.echo', { text: 'abc', repeat: 2 });
    const r = await signedCall(running.url, secret, body);
    expect(r.status).toBe(200);
    expect(r.json.result).toEqual({ text: 'ABCABC', length: 3, unicode: 'é€😀' });
    // independent of the kit: canonical JSON from the RFC 8785 reference package, hash, viem verify
    const canonical = canonicalize(r.json.result)!;
    expect(canonical).toBe('{"length":3,"text":"ABCABC","unicode":"é€😀"}');
    const hash = createHash('sha256').update(canonical, 'utf8').digest('hex');
    expect(resultSha256(r.json.result)).toBe(hash);
    const message = `acg-result:${body.execution_id}:${hash}`;
    expect(await verifyMessage({ address: account.address, message, signature: r.json.signature as Hex })).toBe(true);
    expect(await verifyResultSignature({ address: account.address, executionId: body.execution_id, result: r.json.result, signature: r.json.signature })).toBe(
      true,
    );
    // the signature binds the execution id and the result
    expect(await verifyResultSignature({ address: account.address, executionId: 'exe_other', result: r.json.result, signature: r.json.signature })).toBe(false);
    expect(
      await verifyResultSignature({
        address: account.address,
        executionId: body.execution_id,
        result: { ...r.json.result, length: 4 },
        signature: r.json.signature,
      }),
    ).toBe(false);
  });

  it('refuses a tampered body (401), even one that parses to the same JSON', async () => {
    const body = call('intelligence.echo', { text: 'abc' });
    const tampered = await signedCall(running.url, secret, body, { sendBody: JSON.stringify({ ...body, input: { text: 'abd' } }) });
    expect(tampered.status).toBe(401);
    expect(tampered.json).toMatchObject({ code: 'invalid_signature' });
    const reformatted = await signedCall(running.url, secret, body, { sendBody: JSON.stringify(body, null, 1) });
    expect(reformatted.status).toBe(401);
  });

  it('refuses a wrong secret, missing headers and an old or future timestamp (401)', async () => {
    const body = call('intelligence.echo', { text: 'abc' });
    expect((await signedCall(running.url, newSecret(), body)).status).toBe(401);
    expect((await signedCall(running.url, secret, body, { unsigned: true })).status).toBe(401);
    const old = await signedCall(running.url, secret, body, { at: new Date(Date.now() - 10 * 60_000) });
    expect(old.status).toBe(401);
    expect(old.json.detail).toMatch(/too old/);
    expect((await signedCall(running.url, secret, body, { at: new Date(Date.now() + 10 * 60_000) })).status).toBe(401);
  });

  it('refuses input invalid against the capability schema (400 with issue paths from the body root)', async () => {
    const r = await signedCall(running.url, secret, call('intelligence.echo', { text: '', extra: 1 }));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_input', status: 400 });
    expect(r.json.errors.map((e: { path: unknown[] }) => e.path)).toEqual(expect.arrayContaining([['input', 'text'], ['input']]));
  });

  it('answers 404 for a capability it does not serve', async () => {
    const r = await signedCall(running.url, secret, call('intelligence.nope', {}));
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ code: 'unknown_capability' });
  });

  it('answers 400 for signed bodies that are not JSON or not a provider call, and for a webhook-id other than the execution id', async () => {
    expect((await signedCall(running.url, secret, 'not json', { webhookId: 'exe_1' })).json).toMatchObject({ status: 400, code: 'invalid_json' });
    const notCall = await signedCall(running.url, secret, { capability_id: 'Echo', execution_id: 'exe_1' });
    expect(notCall.json).toMatchObject({ status: 400, code: 'invalid_request' });
    const mismatch = await signedCall(running.url, secret, call('intelligence.echo', { text: 'a' }, 'exe_a'), { webhookId: 'exe_b' });
    expect(mismatch.json).toMatchObject({ status: 400, code: 'webhook_id_mismatch' });
  });

  it('knows no probe id: a webhook-id other than the execution id is refused, probe_ prefix or not (probes look like paid calls)', async () => {
    const id = 'probe_01JABCDEFGHJKMNPQRSTVWXYZ0';
    const r = await signedCall(running.url, secret, call('intelligence.echo', { text: 'p' }, 'exe_01JABCDEFGHJKMNPQRSTVWXYZ0'), { webhookId: id });
    expect(r.json).toMatchObject({ status: 400, code: 'webhook_id_mismatch' });
    const paid = await signedCall(running.url, secret, call('intelligence.echo', { text: 'p' }, 'exe_paid'));
    expect(paid.status).toBe(200);
    expect(seen.at(-1)).toEqual({ executionId: 'exe_paid' });
  });

  it('turns failures of run into problems without leaking their text', async () => {
    const crash = await signedCall(running.url, secret, call('mev.broken', { kind: 'crash' }));
    expect(crash.status).toBe(500);
    expect(crash.json).toMatchObject({ code: 'capability_failed' });
    expect(JSON.stringify(crash.json)).not.toContain('key123');
    const refused = await signedCall(running.url, secret, call('mev.broken', { kind: 'refuse' }));
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({ code: 'not_erc20', detail: 'The address is not an ERC-20 token.' });
    const bad = await signedCall(running.url, secret, call('mev.broken', { kind: 'bad_result' }));
    expect(bad.status).toBe(500);
    expect(bad.json).toMatchObject({ code: 'invalid_result' });
  });

  it('aborts a run that passes its timeout_ms (504)', async () => {
    const r = await signedCall(running.url, secret, call('mev.broken', { kind: 'slow' }));
    expect(r.status).toBe(504);
    expect(r.json).toMatchObject({ code: 'timeout' });
  });

  it('refuses a body over the size limit (413) and keeps serving', async () => {
    const big = call('intelligence.echo', { text: 'x'.repeat(70 * 1024) });
    const r = await signedCall(running.url, secret, big);
    expect(r.status).toBe(413);
    expect((await signedCall(running.url, secret, call('intelligence.echo', { text: 'ok' }))).status).toBe(200);
  });

  it('answers 405 to other methods', async () => {
    const r = await fetch(running.url, { method: 'PUT' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('verifies with the rotated secret only after setSigningSecret', async () => {
    const rotated = newSecret();
    provider.setSigningSecret(rotated);
    expect((await signedCall(running.url, secret, call('intelligence.echo', { text: 'a' }))).status).toBe(401);
    expect((await signedCall(running.url, rotated, call('intelligence.echo', { text: 'a' }))).status).toBe(200);
    expect(() => provider.setSigningSecret('not-a-secret')).toThrow(/whsec_/);
    secret = rotated;
  });
});
