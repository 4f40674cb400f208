import { defineProviderCapability, ProviderRunError } from '@acg/provider-kit';
import { erc20Abi, formatUnits, getAddress, hexToString, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { onChain, servedChains, type ChainName, type ChainReader } from '../chains.js';
import { AddressInput, AddressOutput, chainEnum, DecimalString, UintString } from '../primitives.js';

/** Some early tokens (MKR, SAI) return `bytes32` from `name()`/`symbol()` instead of `string`. */
const bytes32MetadataAbi = [
  { type: 'function', name: 'name', stateMutability: 'view', inputs: [], outputs: [{ type: 'bytes32' }] },
  { type: 'function', name: 'symbol', stateMutability: 'view', inputs: [], outputs: [{ type: 'bytes32' }] },
] as const;

/**
 * `intelligence.token_metadata`: ERC-20 metadata read from the chain at one block with one
 * Multicall3 call: `name`, `symbol` (string or bytes32 tokens; null when absent), `decimals`,
 * `total_supply` (integer string, token base units) and `total_supply_formatted` (decimal, token
 * units). Errors (422): `not_a_contract` (no code at the address), `not_erc20` (no `decimals()` or
 * `totalSupply()`); 503 `chain_unavailable`.
 */
export function tokenMetadataCapability(readers: ReadonlyMap<ChainName, ChainReader>) {
  const { names, first } = servedChains(readers);
  const input = z.strictObject({
    chain: chainEnum(names).describe('chain to read'),
    token: AddressInput.describe('ERC-20 contract address'),
  });
  const output = z.object({
    chain: chainEnum(names),
    chain_id: z.int().positive(),
    block_number: UintString,
    token: AddressOutput.describe('EIP-55 checksummed'),
    name: z.string().nullable(),
    symbol: z.string().nullable(),
    decimals: z.int().min(0).max(255),
    total_supply: UintString.describe('token base units'),
    total_supply_formatted: DecimalString.describe('token units (total_supply / 10^decimals)'),
  });
  return defineProviderCapability({
    name: 'token_metadata',
    product: 'intelligence',
    description: 'Reads an ERC-20 token’s name, symbol, decimals and total supply from the chain at the latest block.',
    price_usdc: '0.002',
    timeout_ms: 10_000,
    input,
    output,
    example_request: { chain: first.name, token: first.usdc },
    run: async ({ chain, token }) => {
      const reader = readers.get(chain)!;
      const address = getAddress(token);
      return onChain(reader, async () => {
        const blockNumber = await reader.client.getBlockNumber();
        const code = await reader.client.getCode({ address, blockNumber });
        if (!code || code === '0x') throw new ProviderRunError('not_a_contract', `${address} has no contract code on ${chain}.`, 422);
        const erc20 = { address, abi: erc20Abi } as const;
        const [name, symbol, decimals, totalSupply] = await reader.client.multicall({
          contracts: [
            { ...erc20, functionName: 'name' },
            { ...erc20, functionName: 'symbol' },
            { ...erc20, functionName: 'decimals' },
            { ...erc20, functionName: 'totalSupply' },
          ],
          allowFailure: true,
          blockNumber,
        });
        if (decimals.status !== 'success' || totalSupply.status !== 'success') {
          throw new ProviderRunError('not_erc20', `${address} on ${chain} is a contract but not an ERC-20 token (no decimals() or totalSupply()).`, 422);
        }
        const text = async (r: typeof name, fn: 'name' | 'symbol') => (r.status === 'success' ? r.result : await bytes32Text(reader, address, fn, blockNumber));
        return {
          chain,
          chain_id: reader.chainId,
          block_number: blockNumber.toString(),
          token: address,
          name: await text(name, 'name'),
          symbol: await text(symbol, 'symbol'),
          decimals: decimals.result,
          total_supply: totalSupply.result.toString(),
          total_supply_formatted: formatUnits(totalSupply.result, decimals.result),
        };
      });
    },
  });
}

async function bytes32Text(reader: ChainReader, address: Address, fn: 'name' | 'symbol', blockNumber: bigint): Promise<string | null> {
  try {
    const raw = (await reader.client.readContract({ address, abi: bytes32MetadataAbi, functionName: fn, blockNumber })) as Hex;
    const text = hexToString(raw, { size: 32 }).replace(/\0+$/, '');
    return text === '' ? null : text;
  } catch {
    return null;
  }
}
