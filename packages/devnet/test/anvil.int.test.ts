import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, webSocket } from 'viem';
import { devAccount, DEV_ACCOUNT_COUNT } from '../src/accounts.js';
import { probeChainId, startAnvil, type AnvilInstance } from '../src/anvil.js';
import { sleep } from '../src/ports.js';

const started: AnvilInstance[] = [];
afterAll(async () => {
  await Promise.all(started.map((a) => a.stop()));
});

/** Whether a node answers `eth_chainId` at `rpcUrl`. */
async function answers(rpcUrl: string): Promise<boolean> {
  return (await probeChainId(rpcUrl)) !== undefined;
}

/** Polls until `rpcUrl` stops answering; returns false if it still answers after ~10 s. */
async function goesAway(rpcUrl: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!(await answers(rpcUrl))) return true;
    await sleep(100);
  }
  return false;
}

describe('startAnvil', () => {
  it('starts a node with the requested chain id and the 10 dev accounts, and stop() ends it', async () => {
    const anvil = await startAnvil({ chainId: 4242 });
    started.push(anvil);
    expect(anvil.chainId).toBe(4242);
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`);
    expect(anvil.wsUrl).toBe(`ws://127.0.0.1:${anvil.port}`);

    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    expect(await client.getChainId()).toBe(4242);
    const accounts = (await client.request({ method: 'eth_accounts' } as never)) as string[];
    expect(accounts.map((a) => a.toLowerCase())).toEqual(Array.from({ length: DEV_ACCOUNT_COUNT }, (_, i) => devAccount(i).address.toLowerCase()));
    expect(await client.getBalance({ address: devAccount(9).address })).toBe(10_000n * 10n ** 18n);

    const ws = createPublicClient({ transport: webSocket(anvil.wsUrl) });
    expect(await ws.getChainId()).toBe(4242);
    await (await ws.transport.getRpcClient()).close();

    await anvil.stop();
    expect(await answers(anvil.rpcUrl)).toBe(false);
    await anvil.stop(); // idempotent
  });

  it('listens on an explicit port, and refuses a port that is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(startAnvil({ chainId: 1, port: taken })).rejects.toThrow(/already in use/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const anvil = await startAnvil({ chainId: 1, port: taken });
    started.push(anvil);
    expect(anvil.port).toBe(taken);
    expect(await createPublicClient({ transport: http(anvil.rpcUrl) }).getChainId()).toBe(1);
    await anvil.stop();
  });

  it('rejects a bad chain id before spawning anything', async () => {
    await expect(startAnvil({ chainId: 0 })).rejects.toThrow(/chainId must be a positive integer/);
    await expect(startAnvil({ chainId: 1.5 })).rejects.toThrow(/chainId/);
  });

  it('mines on an interval with blockTime', async () => {
    const anvil = await startAnvil({ chainId: 10, blockTime: 1 });
    started.push(anvil);
    const client = createPublicClient({ transport: http(anvil.rpcUrl) });
    const first = await client.getBlockNumber({ cacheTime: 0 });
    let later = first;
    for (let i = 0; i < 100 && later === first; i++) {
      await sleep(100);
      later = await client.getBlockNumber({ cacheTime: 0 });
    }
    expect(later).toBeGreaterThan(first);
    await anvil.stop();
  });

  it('leaves no orphan when the parent Node process is SIGKILLed', async () => {
    const require = createRequire(import.meta.url);
    const tsx = require.resolve('tsx');
    const fixture = fileURLToPath(new URL('./fixtures/anvil-child.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', tsx, fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.once('exit', (code) => reject(new Error(`fixture exited early (${code}): ${stderr}`)));
    });
    const { rpcUrl, pid } = JSON.parse(line) as { rpcUrl: string; pid: number };
    expect(await answers(rpcUrl)).toBe(true);

    child.kill('SIGKILL');
    const gone = await goesAway(rpcUrl);
    if (!gone) process.kill(pid, 'SIGKILL'); // the orphan this test just made; don't leave it running
    expect(gone).toBe(true);
  });
});
