import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseAbi, type Chain, type PublicClient, type Transport } from 'viem';
import { devAccount } from '../src/accounts.js';
import { startAnvil, type AnvilInstance } from '../src/anvil.js';
import { devChain } from '../src/clients.js';
import { MULTICALL3_ADDRESS } from '../src/constants.js';
import { installMulticall3, multicall3CreationCode } from '../src/multicall3.js';

// Multicall3's own view helpers (viem's exported multicall3Abi only has aggregate3 and a few others).
const multicall3Abi = parseAbi([
  'function getChainId() view returns (uint256 chainid)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
  'function getBlockNumber() view returns (uint256 blockNumber)',
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

let anvil: AnvilInstance;
let client: PublicClient<Transport, Chain>;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 1 });
  client = createPublicClient({ chain: devChain(1, anvil.rpcUrl), transport: http(anvil.rpcUrl) });
});
afterAll(async () => {
  await anvil?.stop();
});

describe('installMulticall3', () => {
  it('reads the creation code from viem', () => {
    const code = multicall3CreationCode();
    expect(code).toMatch(/^0x[0-9a-f]+$/);
    expect(code.length).toBeGreaterThan(10_000);
  });

  it('is absent on a fresh anvil, so viem multicall fails there', async () => {
    expect(await client.getCode({ address: MULTICALL3_ADDRESS })).toBeUndefined();
    await expect(
      client.multicall({
        allowFailure: false,
        contracts: [{ address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getChainId' }],
      }),
    ).rejects.toThrow(/"aggregate3" returned no data/);
  });

  it('places Multicall3 at 0xcA11…CA11 and aggregate3 works through viem multicall', async () => {
    expect(await installMulticall3(anvil.rpcUrl)).toBe(MULTICALL3_ADDRESS);
    expect((await client.getCode({ address: MULTICALL3_ADDRESS }))?.length).toBeGreaterThan(2);

    const block = await client.getBlockNumber({ cacheTime: 0 });
    const [chainId, balance, blockNumber] = await client.multicall({
      allowFailure: false,
      contracts: [
        { address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getChainId' },
        { address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getEthBalance', args: [devAccount(4).address] },
        { address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getBlockNumber' },
      ],
    });
    expect(chainId).toBe(1n);
    expect(balance).toBe(10_000n * 10n ** 18n);
    expect(blockNumber).toBe(block);
  });

  it('reports per-call failures with allowFailure (aggregate3 semantics)', async () => {
    const results = await client.multicall({
      contracts: [
        { address: MULTICALL3_ADDRESS, abi: multicall3Abi, functionName: 'getChainId' },
        // aggregate3 with a failing inner call that does not allow failure reverts the nested multicall
        {
          address: MULTICALL3_ADDRESS,
          abi: multicall3Abi,
          functionName: 'aggregate3',
          args: [[{ target: MULTICALL3_ADDRESS, allowFailure: false, callData: '0xdeadbeef' }]],
        },
      ],
    });
    expect(results[0]).toEqual({ status: 'success', result: 1n });
    expect(results[1].status).toBe('failure');
  });

  it('is idempotent', async () => {
    const before = await client.getCode({ address: MULTICALL3_ADDRESS });
    await installMulticall3(anvil.rpcUrl);
    expect(await client.getCode({ address: MULTICALL3_ADDRESS })).toBe(before);
  });
});
