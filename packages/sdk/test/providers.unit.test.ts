import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { verifyMessage } from 'viem';
import { describe, expect, it } from 'vitest';
import { AcgError, GatewayError, createGatewayClient, type ProviderOffer } from '../src/index.js';
import { BASE, json, problem } from './fixtures.js';

/**
 * client.providers.onboard against a scripted gateway speaking docs/decisions.md "Providers": challenge,
 * EIP-191 (checked with viem verifyMessage), 201; 409 provider_exists → fresh challenge → PUT.
 */
const account = privateKeyToAccount(generatePrivateKey());
const offer: ProviderOffer = {
  name: 'echo',
  description: 'Echoes.',
  price_usdc: '0.002',
  input_schema: { type: 'object' },
  output_schema: { type: 'object' },
  example_request: {},
};

function providersGateway(existing?: string) {
  const seen: string[] = [];
  const issued = new Set<string>();
  let n = 0;
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    seen.push(`${req.method} ${path}`);
    const body = (await req.json()) as Record<string, unknown>;
    if (path === '/api/v1/providers/challenge') {
      const message = `gateway.test wants you to register ${body.address} (nonce ${++n})`;
      issued.add(message);
      return json(200, { message, nonce: String(n), expires_at: '2030-01-01T00:00:00.000Z' });
    }
    const message = body.message as string;
    if (!issued.delete(message) || !(await verifyMessage({ address: account.address, message, signature: body.signature as `0x${string}` }))) {
      return json(401, problem(401, 'bad challenge signature'));
    }
    const answer = (id: string) => ({
      provider_id: id,
      name: body.name,
      address: account.address,
      endpoint: body.endpoint,
      capabilities: [{ id: 'intelligence.echo', status: 'PILOT' }],
      signing_secret: `whsec_${btoa(`secret${n}`)}`,
    });
    if (req.method === 'POST' && path === '/api/v1/providers') {
      if (existing)
        return json(
          409,
          problem(409, 'this address is a provider', {
            reason: 'provider_exists',
            provider_id: existing,
          }),
        );
      return json(201, answer('prv_01JABCDEFGHJKMNPQRSTVWXYZ0'));
    }
    if (existing && req.method === 'PUT' && path === `/api/v1/providers/${existing}`) return json(200, answer(existing));
    return json(404, problem(404, 'no route'));
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

describe('client.providers.onboard', () => {
  it('registers with a signed challenge (201)', async () => {
    const gw = providersGateway();
    const c = createGatewayClient({ baseUrl: BASE, account, fetch: gw.fetch });
    const r = await c.providers.onboard({ name: 'Echo Labs', endpoint: 'https://echo.example/acg', offers: [offer] });
    expect(r).toMatchObject({
      created: true,
      provider_id: 'prv_01JABCDEFGHJKMNPQRSTVWXYZ0',
      name: 'Echo Labs',
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    expect(gw.seen).toEqual(['POST /api/v1/providers/challenge', 'POST /api/v1/providers']);
  });

  it('updates the address’s provider after 409 provider_exists (fresh challenge, PUT)', async () => {
    const id = 'prv_01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const gw = providersGateway(id);
    const c = createGatewayClient({ baseUrl: BASE, fetch: gw.fetch });
    const r = await c.providers.onboard({ account, name: 'Echo Labs', endpoint: 'https://echo.example/acg', offers: [offer] });
    expect(r).toMatchObject({ created: false, provider_id: id });
    expect(gw.seen).toEqual(['POST /api/v1/providers/challenge', 'POST /api/v1/providers', 'POST /api/v1/providers/challenge', `PUT /api/v1/providers/${id}`]);
  });

  it('throws GatewayError for other refusals and AcgError without an account', async () => {
    const refusing = (async () =>
      json(
        400,
        problem(400, 'invalid offer', {
          errors: [{ path: ['capabilities', 0, 'name'], message: 'bad' }],
        }),
      )) as typeof globalThis.fetch;
    const err = await createGatewayClient({ baseUrl: BASE, account, fetch: refusing })
      .providers.onboard({ name: 'x', endpoint: 'https://x.example', offers: [offer] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    await expect(
      createGatewayClient({ baseUrl: BASE }).providers.onboard({ name: 'x', endpoint: 'https://x.example', offers: [offer] }),
    ).rejects.toBeInstanceOf(AcgError);
  });
});
