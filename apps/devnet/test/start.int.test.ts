import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, resolveRedis, sleep, type RedisHandle } from '@acg/devnet';
import { descendants, isListening, runNpmStart, stillRunning, type Launcher } from './launcher.js';

let redis: RedisHandle | undefined;
const launchers: Launcher[] = [];
const spawned: number[] = [];

beforeAll(async () => {
  redis = await resolveRedis({ preferPrivate: true });
});

afterAll(async () => {
  // whatever a failing run left behind
  for (const pid of [...stillRunning(spawned), ...launchers.map((l) => l.child.pid!)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await redis?.stop();
});

describe('npm start', () => {
  // SIGTERM: npm forwards it to its child; SIGHUP and SIGKILL: npm dies alone and the launcher notices
  it.each(['SIGTERM', 'SIGHUP', 'SIGKILL'] as const)('%s to npm stops every process it started and closes every port', { timeout: 300_000 }, async (signal) => {
    const ports = {
      GATEWAY_PORT: await freePort(),
      BUILDER_PORT: await freePort(),
      DEVNET_PAYMENT_PORT: await freePort(),
      DEVNET_ETHEREUM_PORT: await freePort(),
      DEVNET_ARBITRUM_PORT: await freePort(),
    };
    const launcher = runNpmStart({ ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])), REDIS_URL: redis!.url, LOG_LEVEL: 'warn' });
    launchers.push(launcher);
    await launcher.waitFor('Ctrl-C stops everything', 240_000);

    const tree = descendants(launcher.child.pid!);
    spawned.push(...tree.map((r) => r.pid));
    expect(tree.filter((r) => /\banvil\b/.test(r.args))).toHaveLength(3);
    const relayPorts = [...launcher.output().matchAll(/=http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
    expect(relayPorts).toHaveLength(4);
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
    if (signal === 'SIGTERM') expect(launcher.output()).toContain('stopping...'); // npm's pipe is gone with npm otherwise
  });
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
