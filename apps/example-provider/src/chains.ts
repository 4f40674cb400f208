import { ProviderRunError } from '@acg/provider-kit';
import { BaseError, createPublicClient, defineChain, HttpRequestError, http, RpcRequestError, TimeoutError, type Address, type PublicClient } from 'viem';

/** Multicall3, at the same address on every chain this provider reads (and on the dev chains). */
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/**
 * The chains this provider can read, by name: chain id and Circle's USDC contract (the dev chains
 * use the same ids and put real USDC at the same addresses).
 */
export const CHAINS = {
  base: { chainId: 8453, usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address },
  ethereum: { chainId: 1, usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' as Address },
  arbitrum: { chainId: 42161, usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' as Address },
} as const;

export type ChainName = keyof typeof CHAINS;
export const CHAIN_NAMES = Object.keys(CHAINS) as ChainName[];

/** RPC URL of each chain the provider serves (at least one). */
export type ChainRpcUrls = Partial<Record<ChainName, string>>;

/** One configured chain: its name, id, USDC and a viem client (8 s per request, one retry). */
export interface ChainReader {
  name: ChainName;
  chainId: number;
  usdc: Address;
  client: PublicClient;
}

/** Readers for the configured chains, in {@link CHAIN_NAMES} order. */
export function chainReaders(rpcUrls: ChainRpcUrls): Map<ChainName, ChainReader> {
  const out = new Map<ChainName, ChainReader>();
  for (const name of CHAIN_NAMES) {
    const url = rpcUrls[name];
    if (!url) continue;
    const spec = CHAINS[name];
    const chain = defineChain({
      id: spec.chainId,
      name,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [url] } },
      contracts: { multicall3: { address: MULTICALL3 } },
    });
    const client = createPublicClient({ chain, transport: http(url, { timeout: 8_000, retryCount: 1 }) }) as PublicClient;
    out.set(name, { name, chainId: spec.chainId, usdc: spec.usdc, client });
  }
  return out;
}

/**
 * The served chains of `readers`: their names in order (each capability's `chain` input lists
 * exactly those) and the first one's reader, whose chain the capabilities' example requests use.
 * `readers` is never empty (`exampleCapabilities` refuses no chain).
 */
export function servedChains(readers: ReadonlyMap<ChainName, ChainReader>): { names: ChainName[]; first: ChainReader } {
  const names = [...readers.keys()];
  return { names, first: readers.get(names[0])! };
}

/**
 * Runs `read` against a chain and turns transport failures (unreachable node, timeout, JSON-RPC
 * error) into a 503 `chain_unavailable` the buyer may see, without the RPC URL (which may carry a key).
 */
export async function onChain<T>(reader: ChainReader, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof ProviderRunError) throw e;
    const transport = e instanceof BaseError && e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError || x instanceof RpcRequestError);
    if (transport) throw new ProviderRunError('chain_unavailable', `The ${reader.name} node did not answer; try again later.`, 503, e);
    throw e;
  }
}
