import { monitorEventLoopDelay } from 'node:perf_hooks';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderCredit } from '@acg/provider-directory';
import { startTestGateway, type TestGateway } from '../harness.js';
import { registerProvider, startTestProvider } from '../providerServer.js';
import { post, usdcReader } from '../x402.js';

/**
 * Attack (issue 23 item 4): a provider JSON Schema with `pattern: "^(a|a)*$"` and an input of 29
 * `a` and a `b` took V8's backtracking engine seconds, blocking every request: once with a fake
 * signature on POST /api/v1/providers (the schema was checked before the signature), and on every
 * unpaid execute once such a schema was registered. Now the signature is checked first and every
 * user pattern runs on RE2 (linear time). Asserted behaviourally: the event loop of the gateway
 * (this process) is never held for long while the attacks run, a concurrent GET /registry is
 * answered, nothing is paid or credited, and each attack gets a clear refusal.
 */

const EVIL = '^(a|a)*$';
const ATTACK = `${'a'.repeat(29)}b`;
const evilOffer = (name: string, example: unknown) => ({
  name,
  description: 'Matches a pattern.',
  price_usdc: '0.002',
  input_schema: {
    type: 'object',
    properties: { s: { type: 'string', pattern: EVIL } },
    patternProperties: { '^(x|x)*$': { type: 'number' } },
    required: ['s'],
  },
  output_schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  example_request: example,
  timeout_ms: 1000,
});

let t: TestGateway;
let provider: Awaited<ReturnType<typeof startTestProvider>>;
const credits: ProviderCredit[] = [];

beforeAll(async () => {
  provider = await startTestProvider(() => ({ status: 200, body: { result: { ok: true } } }));
  t = await startTestGateway({ config: { walletMonitor: { webhookPolicy: 'development' } }, earnings: { credit: async (c) => void credits.push(c) } });
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

/** Runs `attack` while sampling this process's event-loop delay and fetching /registry alongside; returns the longest stall (ms). */
async function whileWatching(attack: () => Promise<void>): Promise<{ maxStallMs: number; registryStatus: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const registry = fetch(`${t.url}/registry`, { headers: { 'cache-control': 'no-cache' } }).then((r) => r.status);
  await attack();
  const registryStatus = await registry;
  h.disable();
  return { maxStallMs: h.max / 1e6, registryStatus };
}

describe('a catastrophic-backtracking pattern', () => {
  it('with a fake signature: refused 401 before any schema work; the gateway never stalls', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const forger = privateKeyToAccount(generatePrivateKey());
    const body = { name: 'Evil Co', endpoint: provider.url, capabilities: [evilOffer('evil_fake', { s: ATTACK })] };
    const c = await post(`${t.url}/api/v1/providers/challenge`, { address: owner.address, action: 'register', ...body });
    expect(c.status).toBe(200);
    let answers: { status: number; body: any }[] = [];
    const watched = await whileWatching(async () => {
      answers = await Promise.all(
        Array.from({ length: 3 }, async () =>
          post(`${t.url}/api/v1/providers`, {
            address: owner.address,
            message: c.body.message,
            signature: await forger.signMessage({ message: c.body.message }),
            ...body,
          }),
        ),
      );
    });
    // one burns the nonce as a bad signature; the others find it used: none reached the schema
    expect(answers.map((a) => a.status).sort()).toEqual([401, 401, 401]);
    expect(answers.map((a) => a.body.reason)).toContain('bad_signature');
    expect(watched.registryStatus).toBe(200);
    expect(watched.maxStallMs).toBeLessThan(1_000); // the backtracking engine held it for seconds
  });

  it('with a valid signature: the pattern runs in linear time; an example that does not match is refused 400', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    let r: { status: number; body: any } = { status: 0, body: undefined };
    const watched = await whileWatching(async () => {
      r = await registerProvider(t.url, owner, { name: 'Evil Co', endpoint: provider.url, capabilities: [evilOffer('evil_example', { s: ATTACK })] });
    });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('invalid_example');
    expect(watched.registryStatus).toBe(200);
    expect(watched.maxStallMs).toBeLessThan(1_000);
  });

  it('once registered, unpaid executes with the attack input are refused 400 without a stall; nothing is paid or credited', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const r = await registerProvider(t.url, owner, { name: 'Pattern Co', endpoint: provider.url, capabilities: [evilOffer('evil_live', { s: 'aaaa' })] });
    expect(r.status).toBe(201);
    await t.gateway.services.providers.directory.reload();
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const buyer = t.stack.payment.buyers[0].address;
    const [buyerBefore, treasuryBefore] = await Promise.all([balanceOf(buyer), balanceOf(t.stack.payment.treasury.address)]);

    let answers: { status: number; body: any }[] = [];
    const watched = await whileWatching(async () => {
      answers = await Promise.all([
        post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.evil_live', input: { s: ATTACK } }),
        post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.evil_live', input: { s: 'a', ['x'.repeat(40)]: 'y', [`${'x'.repeat(29)}z`]: 'y' } }),
        post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.evil_live', input: { s: `${'a'.repeat(5000)}b` } }),
      ]);
    });
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body.type ?? a.body.title).toBeDefined();
    }
    // a matching input still reaches the paywall: the schema works, it is only linear now
    const fine = await post(`${t.url}/api/v1/execute`, { capability_id: 'intelligence.evil_live', input: { s: 'aaaa' } });
    expect(fine.status).toBe(402);
    expect(watched.registryStatus).toBe(200);
    expect(watched.maxStallMs).toBeLessThan(1_000);
    expect(credits).toEqual([]);
    // only probes (sent like paid calls, with the example_request {s: 'aaaa'}) reached the provider
    expect(provider.calls.filter((c) => c.body.capability_id === 'intelligence.evil_live' && (c.body.input as { s?: string }).s !== 'aaaa')).toEqual([]);
    expect(await balanceOf(buyer)).toBe(buyerBefore);
    expect(await balanceOf(t.stack.payment.treasury.address)).toBe(treasuryBefore);
  });
});
