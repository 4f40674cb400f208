/**
 * `onboard()` against a local stand-in of the gateway's provider routes (test/gatewayStandIn.ts,
 * the real wire format): challenge → EIP-191 → 201, then for an address that already has a
 * provider 409 `provider_exists` → fresh challenge → PUT → rotated secret. After each, the
 * stand-in's secret signs a call the provider accepts, and a superseded secret is refused.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProvider, defineProviderCapability, onboard, problemCode, ProviderOnboardingError, type Provider, type RunningProvider } from '../src/index.js';
import { startStandInGateway, type StandInGateway } from './gatewayStandIn.js';
import { signedCall } from './helpers.js';

const account = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const ping = defineProviderCapability({
  name: 'ping',
  description: 'Answers pong.',
  price_usdc: '0.001',
  input: z.object({ n: z.int() }),
  output: z.object({ pong: z.int() }),
  example_request: { n: 1 },
  run: async ({ n }) => ({ pong: n }),
});
const call = (execution_id: string) => ({ capability_id: 'intelligence.ping', execution_id, input: { n: 7 } });

let gateway: StandInGateway;
let provider: Provider;
let running: RunningProvider;

beforeAll(async () => {
  gateway = await startStandInGateway();
  provider = createProvider({ capabilities: [ping], account });
  running = await provider.listen(0);
});
afterAll(async () => {
  await running?.close();
  await gateway?.close();
});

describe('onboard', () => {
  let firstSecret: string;

  it('registers a new provider (challenge, EIP-191, POST → 201) and wires the signing secret into the provider', async () => {
    expect(provider.hasSigningSecret()).toBe(false);
    const registered = await onboard({ gatewayUrl: `${gateway.url}/`, account, endpoint: running.url, name: 'Ping Labs', provider });
    expect(registered).toMatchObject({
      created: true,
      name: 'Ping Labs',
      address: account.address,
      endpoint: running.url,
      capabilities: [{ id: 'intelligence.ping', status: 'PILOT' }],
    });
    expect(registered.provider_id).toMatch(/^prv_/);
    expect(gateway.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /api/v1/providers/challenge', 'POST /api/v1/providers']);
    // the offer reached the gateway with its JSON Schemas
    expect(gateway.providers.get(account.address)?.offers).toEqual([
      expect.objectContaining({ name: 'ping', input_schema: expect.objectContaining({ type: 'object' }) }),
    ]);
    firstSecret = registered.signing_secret;
    const r = await signedCall(running.url, firstSecret, call('exe_1'));
    expect(r.status).toBe(200);
    expect(r.json.result).toEqual({ pong: 7 });
  });

  it('updates an existing provider (409 provider_exists → fresh challenge → PUT) and rotates the secret', async () => {
    gateway.requests.length = 0;
    const before = gateway.providers.get(account.address)!.provider_id;
    const updated = await onboard({ gatewayUrl: gateway.url, account, endpoint: running.url, name: 'Ping Labs 2', provider });
    expect(updated).toMatchObject({ created: false, provider_id: before, name: 'Ping Labs 2' });
    expect(updated.signing_secret).not.toBe(firstSecret);
    expect(gateway.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v1/providers/challenge',
      'POST /api/v1/providers',
      'POST /api/v1/providers/challenge',
      `PUT /api/v1/providers/${before}`,
    ]);
    expect((await signedCall(running.url, updated.signing_secret, call('exe_2'))).status).toBe(200);
    expect((await signedCall(running.url, firstSecret, call('exe_3'))).status).toBe(401);
  });

  it('accepts offers or capabilities instead of a provider (and then sets no secret)', async () => {
    const other = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');
    const registered = await onboard({ gatewayUrl: gateway.url, account: other, endpoint: running.url, name: 'Other', offers: provider.offers() });
    expect(registered.created).toBe(true);
    const again = await onboard({ gatewayUrl: gateway.url, account: other, endpoint: running.url, name: 'Other', capabilities: [ping] });
    expect(again).toMatchObject({ created: false, provider_id: registered.provider_id });
    await expect(onboard({ gatewayUrl: gateway.url, account: other, endpoint: running.url, name: 'Other' })).rejects.toThrow(TypeError);
  });

  it('reads a problem code from `reason` (the gateway) or `code`', () => {
    expect(problemCode({ reason: 'provider_exists' })).toBe('provider_exists');
    expect(problemCode({ code: 'provider_exists' })).toBe('provider_exists');
    // the gateway's problems carry both: the specific reason wins over the generic code
    expect(problemCode({ code: 'CONFLICT', reason: 'provider_exists' })).toBe('provider_exists');
    expect(problemCode({ detail: 'x' })).toBeUndefined();
  });

  it('reports a refused registration with its problem, not retryable (400 invalid offer)', async () => {
    const err = await onboard({ gatewayUrl: gateway.url, account, endpoint: running.url, name: '!bad name', provider }).catch((e) => e);
    expect(err).toBeInstanceOf(ProviderOnboardingError);
    expect(err).toMatchObject({ step: 'register', status: 400, retryable: false });
    expect(err.problem.errors[0].path).toEqual(['name']);
  });

  it('reports a missing route (404) and an unreachable gateway as retryable', async () => {
    gateway.failWith = { status: 404, code: 'not_found' };
    const missing = await onboard({ gatewayUrl: gateway.url, account, endpoint: running.url, name: 'Ping Labs', provider }).catch((e) => e);
    gateway.failWith = undefined;
    expect(missing).toMatchObject({ name: 'ProviderOnboardingError', step: 'register', status: 404, retryable: true });
    const closed = await startStandInGateway();
    await closed.close();
    const unreachable = await onboard({ gatewayUrl: closed.url, account, endpoint: running.url, name: 'Ping Labs', provider }).catch((e) => e);
    expect(unreachable).toMatchObject({ name: 'ProviderOnboardingError', status: undefined, retryable: true });
  });
});
