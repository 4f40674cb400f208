/**
 * The example provider's pure parts: reading an objective, the environment rules, the offers it
 * registers, and the onboarding retry policy (against a local server answering the gateway's
 * problem format: 404 while the routes are missing, then a 400 that needs a fix).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { exampleCapabilities, exampleOffers, exampleProviderConfig, onboardWithRetry, parseObjective } from '../src/index.js';

describe('parseObjective', () => {
  it('finds addresses in order, deduplicated case-insensitively, and the chains named', () => {
    const a = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
    const b = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
    expect(parseObjective(`Compare ${a.toLowerCase()} with ${b}, and ${a} again, on Arbitrum and mainnet.`)).toEqual({
      addresses: [a, b],
      chains: ['ethereum', 'arbitrum'],
    });
    expect(parseObjective(`${a} on base`).chains).toEqual(['base']);
    expect(parseObjective('database of 0x1234').addresses).toEqual([]); // too short; "database" is not "base"
    expect(parseObjective(`0x${'a'.repeat(41)}`).addresses).toEqual([]); // 41 hex digits is not an address
  });
});

describe('exampleProviderConfig', () => {
  it('names every missing or invalid variable, hiding the key', () => {
    const { config, problems } = exampleProviderConfig({
      EXAMPLE_PROVIDER_PORT: '99999',
      EXAMPLE_PROVIDER_PRIVATE_KEY: '0x12',
      EXAMPLE_PROVIDER_RPC_BASE: 'ftp://x',
    });
    expect(config).toBeUndefined();
    expect(problems).toEqual(
      expect.arrayContaining([
        'EXAMPLE_PROVIDER_PORT=99999: must be an integer port 0..65535',
        'EXAMPLE_PROVIDER_PRIVATE_KEY=(hidden): must be 0x followed by 64 hex characters',
        'EXAMPLE_PROVIDER_RPC_BASE=ftp://x: must be a http or https URL',
        expect.stringMatching(/^GATEWAY_URL: required/),
      ]),
    );
  });

  it('fills the defaults', () => {
    const { config } = exampleProviderConfig({
      GATEWAY_URL: 'http://127.0.0.1:8080',
      EXAMPLE_PROVIDER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
      EXAMPLE_PROVIDER_RPC_ARBITRUM: 'http://127.0.0.1:8547',
    });
    expect(config).toMatchObject({ port: 8090, host: '127.0.0.1', name: 'Example Provider', rpcUrls: { arbitrum: 'http://127.0.0.1:8547' }, logLevel: 'info' });
  });
});

describe('offers', () => {
  it('lists exactly the configured chains in each input schema, with prices and objective support', () => {
    const caps = exampleCapabilities({ base: 'http://127.0.0.1:1', arbitrum: 'http://127.0.0.1:2' });
    expect(caps.map((c) => [c.id, c.price_usdc, c.accepts_objective])).toEqual([
      ['mev.simulate_transaction', '0.005', false],
      ['intelligence.token_metadata', '0.002', false],
      ['intelligence.wallet_report', '0.003', true],
    ]);
    const schema = (caps[1].input as unknown as { toJSONSchema(): { properties: { chain: { enum: string[] } } } }).toJSONSchema();
    expect(schema.properties.chain.enum).toEqual(['base', 'arbitrum']);
    expect(() => exampleCapabilities({})).toThrow(/at least one chain/);
  });

  it('creates every contract by default, and with join offers only those contracts, by capability_id, at its own price and delay', () => {
    const caps = exampleCapabilities({ base: 'http://127.0.0.1:1' });
    const created = exampleOffers(caps);
    expect(created.offers.map((o) => [o.product, o.name, o.capability_id, o.price_usdc])).toEqual([
      ['mev', 'simulate_transaction', undefined, '0.005'],
      ['intelligence', 'token_metadata', undefined, '0.002'],
      ['intelligence', 'wallet_report', undefined, '0.003'],
    ]);

    const joined = exampleOffers(caps, { join: ['intelligence.token_metadata'], priceUsdc: '0.0015', delayMs: 30 });
    expect(joined.capabilities.map((c) => [c.id, c.price_usdc])).toEqual([['intelligence.token_metadata', '0.0015']]);
    expect(joined.offers).toHaveLength(1);
    expect(joined.offers[0]).toMatchObject({ capability_id: 'intelligence.token_metadata', price_usdc: '0.0015', example_request: caps[1].example_request });
    expect(joined.offers[0]).not.toHaveProperty('name');
    expect(joined.offers[0]).not.toHaveProperty('product');
    expect(joined.offers[0].input_schema).toEqual(created.offers[1].input_schema);

    // a delay wraps the capability's work; without one it is served as defined
    expect(joined.capabilities[0].run).not.toBe(caps[1].run);
    expect(exampleOffers(caps, { join: ['intelligence.token_metadata'] }).capabilities[0].run).toBe(caps[1].run);

    expect(() => exampleOffers(caps, { join: ['intelligence.nope'] })).toThrow(/EXAMPLE_PROVIDER_JOIN: no such capability here: intelligence.nope/);
  });

  it('reads EXAMPLE_PROVIDER_JOIN, EXAMPLE_PROVIDER_PRICE_USDC and EXAMPLE_PROVIDER_DELAY_MS, and rejects bad values', () => {
    const base = {
      GATEWAY_URL: 'http://127.0.0.1:8080',
      EXAMPLE_PROVIDER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
      EXAMPLE_PROVIDER_RPC_BASE: 'http://127.0.0.1:8545',
    };
    expect(
      exampleProviderConfig({
        ...base,
        EXAMPLE_PROVIDER_JOIN: 'intelligence.token_metadata, mev.simulate_transaction',
        EXAMPLE_PROVIDER_PRICE_USDC: '0.0015',
        EXAMPLE_PROVIDER_DELAY_MS: '250',
      }).config,
    ).toMatchObject({ join: ['intelligence.token_metadata', 'mev.simulate_transaction'], priceUsdc: '0.0015', delayMs: 250 });
    expect(exampleProviderConfig(base).config).toMatchObject({ join: undefined, priceUsdc: undefined, delayMs: 0 });
    const { problems } = exampleProviderConfig({ ...base, EXAMPLE_PROVIDER_JOIN: 'Token', EXAMPLE_PROVIDER_PRICE_USDC: '0', EXAMPLE_PROVIDER_DELAY_MS: '-1' });
    expect(problems).toEqual([
      'EXAMPLE_PROVIDER_JOIN=Token: must be comma-separated capability ids, e.g. intelligence.token_metadata',
      'EXAMPLE_PROVIDER_PRICE_USDC=0: must be a USDC amount > 0 with at most 6 decimals, e.g. 0.0025',
      'EXAMPLE_PROVIDER_DELAY_MS=-1: must be a number ≥ 0',
    ]);
  });
});

describe('onboardWithRetry', () => {
  it('retries while the gateway answers 404, and stops at a failure that needs a fix (400)', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      const status = hits <= 2 ? 404 : 400;
      res.writeHead(status, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          type: 'about:blank',
          title: 'x',
          status,
          detail: status === 404 ? 'no route' : 'invalid offer',
          code: status === 400 ? 'invalid_offer' : undefined,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const events: unknown[] = [];
    const log = { info: () => {}, warn: (o: object) => events.push(o), error: (o: object) => events.push(o) };
    try {
      const caps = exampleCapabilities({ base: 'http://127.0.0.1:1' });
      const result = await onboardWithRetry(
        {
          gatewayUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          account: privateKeyToAccount(`0x${'22'.repeat(32)}`),
          endpoint: 'http://127.0.0.1:9',
          name: 'X',
          capabilities: caps,
        },
        { log, initialDelayMs: 1 },
      );
      expect(result).toBeUndefined();
      expect(events).toEqual([
        expect.objectContaining({ event: 'onboarding_retry', status: 404, attempt: 1, retry_in_ms: 1 }),
        expect.objectContaining({ event: 'onboarding_retry', status: 404, attempt: 2, retry_in_ms: 2 }),
        expect.objectContaining({ event: 'onboarding_failed', status: 400, code: 'invalid_offer', attempt: 3 }),
      ]);
    } finally {
      server.close();
    }
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const log = { info: () => {}, warn: () => controller.abort(), error: () => {} };
    const result = await onboardWithRetry(
      { gatewayUrl: 'http://127.0.0.1:9', account: privateKeyToAccount(`0x${'22'.repeat(32)}`), endpoint: 'http://127.0.0.1:9', name: 'X', offers: [] },
      { log, initialDelayMs: 60_000, signal: controller.signal },
    );
    expect(result).toBeUndefined();
  });
});
