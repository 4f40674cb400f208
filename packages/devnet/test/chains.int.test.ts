import { createPublicClient, erc20Abi, http } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { devAccount, DEV_CHAINS, startDevChain, type DevChain } from '../src/index.js';

const started: DevChain[] = [];
afterAll(async () => {
  await Promise.all(started.map((c) => c.stop()));
});

describe('startDevChain', () => {
  for (const name of ['ethereum', 'arbitrum'] as const) {
    it(`starts ${name} with its chain id, Multicall3 and USDC at the canonical address`, async () => {
      const chain = await startDevChain(name);
      started.push(chain);
      const client = createPublicClient({ transport: http(chain.rpcUrl) });
      expect(await client.getChainId()).toBe(DEV_CHAINS[name].chainId);
      expect(await client.getCode({ address: '0xcA11bde05977b3631167028862bE2a173976CA11' })).toMatch(/^0x[0-9a-f]{100,}/);
      expect(await client.readContract({ address: chain.usdc, abi: erc20Abi, functionName: 'symbol' })).toBe('USDC');
      expect(await client.readContract({ address: chain.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [devAccount(2).address] })).toBe(10_000_000_000n);
    });
  }
});
