import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devPrivateKey, freePort, resolveRedis, sleep, type RedisHandle } from '@acg/devnet';
import { Redis } from 'ioredis';
import { descendants, isListening, keysUnder, killLeftovers, runNpmStart, stillRunning, type Launcher } from './launcher.js';

let redis: RedisHandle | undefined;
let client: Redis | undefined;
const launchers: Launcher[] = [];
const spawned: number[] = [];

/** Keys of other deployments on the same Redis, written before any run: a run's stop must leave them as they are. */
const FOREIGN = { 'acg:dev:01J0THERRUN0000000000000000:exe:x': 'another run', 'acg:keep': 'production-like prefix', 'other:acg:dev:x': 'unrelated' };

beforeAll(async () => {
  redis = await resolveRedis({ preferPrivate: true });
  client = new Redis(redis.url);
  for (const [k, v] of Object.entries(FOREIGN)) await client.set(k, v);
});

afterAll(async () => {
  // whatever a failing run left behind
  killLeftovers(spawned, launchers);
  client?.disconnect();
  await redis?.stop();
});

describe('npm start', () => {
  // SIGINT (Ctrl-C) and SIGTERM: npm forwards them to its child; SIGHUP and SIGKILL: npm dies alone and the launcher notices
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGKILL'] as const)(
    "%s to npm stops every process it started, closes every port and deletes the run's keys",
    { timeout: 300_000 },
    async (signal) => {
      const ports = {
        GATEWAY_PORT: await freePort(),
        BUILDER_PORT: await freePort(),
        DEVNET_PAYMENT_PORT: await freePort(),
        DEVNET_ETHEREUM_PORT: await freePort(),
        DEVNET_ARBITRUM_PORT: await freePort(),
        EXAMPLE_PROVIDER_PORT: await freePort(),
        SECOND_PROVIDER_PORT: await freePort(),
      };
      // every other port npm start binds can be set too: the four dev relays
      const relayPortsSet = [await freePort(), await freePort(), await freePort(), await freePort()];
      const launcher = runNpmStart({
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        DEVNET_RELAY_PORTS: relayPortsSet.join(','),
        REDIS_URL: redis!.url,
        LOG_LEVEL: 'warn',
      });
      launchers.push(launcher);
      await launcher.waitFor('Ctrl-C stops everything', 240_000);

      // this run's own key prefix, on a Redis the launcher did not spawn: it holds the run's state now
      const prefix = launcher.output().match(/key prefix (acg:dev:[0-9A-Z]{26}:) \(this run only: deleted at stop\)/)?.[1];
      expect(prefix, launcher.output()).toBeDefined();
      expect((await keysUnder(client!, prefix!)).length).toBeGreaterThan(10);

      const tree = descendants(launcher.child.pid!);
      spawned.push(...tree.map((r) => r.pid));
      expect(tree.filter((r) => /\banvil\b/.test(r.args))).toHaveLength(3);
      // the example provider is its own process, listening on its port, with its dev wallet (account 10);
      // the second provider is the same app again (account 11) on its own port
      expect(tree.filter((r) => /example-provider/.test(r.args))).toHaveLength(2);
      // ... onboarded through the gateway's public API (challenge, EIP-191, POST /api/v1/providers)
      expect(launcher.output()).toMatch(
        new RegExp(
          `example provider +http://127\\.0\\.0\\.1:${ports.EXAMPLE_PROVIDER_PORT} \\(provider prv_[0-9A-Z]{26}, .*0xBcd4042DE499D14e55001CcbB24a551F3b954096`,
        ),
      );
      // the second provider joined the example provider's contract through the same public API: one contract, two offers
      const second = launcher.output().match(/second provider +http:\/\/127\.0\.0\.1:(\d+) \(provider (prv_[0-9A-Z]{26}), joins intelligence\.token_metadata/);
      expect(second, launcher.output()).not.toBeNull();
      const registry = (await (await fetch(`http://127.0.0.1:${ports.GATEWAY_PORT}/registry`)).json()) as {
        capabilities: { id: string; offers?: { provider_id: string; provider: string; price: string }[] }[];
      };
      const contract = registry.capabilities.find((c) => c.id === 'intelligence.token_metadata');
      expect(contract?.offers?.map((o) => [o.provider, o.price]).sort(), JSON.stringify(contract)).toEqual([
        ['Example Provider', '0.002'],
        ['Second Provider', '0.0015'],
      ]);
      expect(contract?.offers?.map((o) => o.provider_id)).toContain(second![2]);
      if (signal === 'SIGTERM') {
        // once, end to end: a buyer pays the gateway (x402), which routes the signed call to the provider's process
        const client = new x402Client();
        registerExactEvmScheme(client, { signer: privateKeyToAccount(devPrivateKey(6)) });
        const r = await wrapFetchWithPayment(fetch, client)(`http://127.0.0.1:${ports.GATEWAY_PORT}/api/v1/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ capability_id: 'intelligence.token_metadata', input: { chain: 'base', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' } }),
        });
        const body = (await r.json()) as { status: string; result: Record<string, unknown>; payment: { amount: string } };
        expect(r.status, JSON.stringify(body)).toBe(200);
        expect(body).toMatchObject({ status: 'SUCCEEDED', result: { name: 'USD Coin', symbol: 'USDC', decimals: 6 }, payment: { amount: '2000' } });
      }
      // the banner's own lines: the relays, and the demo command for this gateway port (not 8080)
      const bannerLine = (name: string) =>
        launcher
          .output()
          .split('\n')
          .find((l) => l.trimStart().startsWith(`${name} `)) ?? '';
      // while preparing, one line per step with the time it took
      expect(launcher.output()).toMatch(/ {2}payment chain \(anvil, chain id 8453\) \.\.\. \d+\.\d s: http:\/\/127\.0\.0\.1:\d+/);
      expect(launcher.output()).toMatch(/ {2}lending dev data: .* \.\.\. \d+\.\d s: \d+ positions/);
      // both demos for this gateway port (not 8080), and a funded dev-chain-only key
      // (the JS demo also names the payment chain, not on its default port here: its channel reads)
      expect(launcher.output()).toContain(
        `  GATEWAY_URL=http://127.0.0.1:${ports.GATEWAY_PORT} DEMO_RPC_URL=http://127.0.0.1:${ports.DEVNET_PAYMENT_PORT} npm run demo `,
      );
      expect(launcher.output()).toContain(`  GATEWAY_URL=http://127.0.0.1:${ports.GATEWAY_PORT} npm run demo:mcp `);
      expect(launcher.output()).toContain('DEV CHAIN ONLY');
      expect(bannerLine('private key')).toContain(devPrivateKey(2));
      // the dev defaults take x402 batch-settlement beside exact (the demo's channel burst)
      expect(bannerLine('x402 schemes')).toMatch(/^\s*x402 schemes\s+exact, batch-settlement;/);
      // one-click dev sign-in: the example provider's dashboard, its session in the URL fragment
      expect(bannerLine('provider (dev)')).toMatch(/\/providers\/prv_[0-9A-Z]{26}#dev-session=acg_[A-Za-z0-9_-]{43}\.0x[0-9a-fA-F]{40}\.\d+$/);
      // the store's durability as the gateway read it at start (this test's private Redis: appendfsync always)
      expect(bannerLine('store')).toMatch(/appendonly yes, appendfsync always: every acknowledged write is on disk before it is answered$/);
      const relayPorts = [...bannerLine('relays').matchAll(/=http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
      expect(relayPorts).toEqual(relayPortsSet);
      expect(Number(second![1])).toBe(ports.SECOND_PROVIDER_PORT);
      const allPorts = [...Object.values(ports), ...relayPorts];
      for (const port of allPorts) expect(await isListening(port), `port ${port}`).toBe(true);

      launcher.child.kill(signal);
      const exit = await launcher.exited;
      expect(exit.code === 0 && exit.signal === null).toBe(false); // a signal stop is not a success

      // a generous bound that only detects leftovers (each anvil gets 3 s of SIGTERM grace)
      const pids = tree.map((r) => r.pid);
      for (let i = 0; i < 300 && stillRunning(pids).length > 0; i++) await sleep(100);
      expect(stillRunning(pids).map((pid) => tree.find((r) => r.pid === pid)?.args)).toEqual([]);
      for (const port of allPorts) expect(await isListening(port), `port ${port}`).toBe(false);
      if (signal === 'SIGTERM' || signal === 'SIGINT') {
        expect(launcher.output()).toContain('stopping...'); // npm's pipe is gone with npm otherwise
        expect(launcher.output()).toContain(`Redis keys of this run (prefix ${prefix})`);
        expect(launcher.output()).toMatch(/removed [1-9]\d* Redis keys of this run/);
      }
      // nothing of the run is left in Redis (BullMQ queues included), and nothing else was touched
      expect(await keysUnder(client!, prefix!)).toEqual([]);
      for (const [k, v] of Object.entries(FOREIGN)) expect(await client!.get(k), k).toBe(v);
    },
  );
});

describe('npm start with an invalid environment', () => {
  it('exits non-zero before booting any chain, naming every invalid variable', { timeout: 120_000 }, async () => {
    const launcher = runNpmStart({
      LOG_LEVEL: 'loud',
      GATEWAY_PORT: '70000',
      BUILDER_PORT: String(await freePort()),
      DEVNET_PAYMENT_PORT: String(await freePort()),
      DEVNET_ETHEREUM_PORT: String(await freePort()),
      DEVNET_ARBITRUM_PORT: String(await freePort()),
      REDIS_URL: redis!.url,
    });
    launchers.push(launcher);
    const exit = await launcher.exited; // the suite's timeout detects a hang; no speed is asserted
    const out = launcher.output();
    expect(exit.code).not.toBe(0);
    expect(out).toContain('GATEWAY_PORT=70000: must be an integer port 0..65535');
    expect(out).toContain('LOG_LEVEL=loud: must be one of fatal, error, warn, info, debug, trace, silent');
    // nothing booted: no chain lines, no lending deployment, no stack trace
    expect(out).not.toMatch(/anvil|chain id|deploying the lending|ethereum chain|payment chain/);
    expect(out).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });
});
