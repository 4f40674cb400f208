import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  type Account,
  type Chain,
  type PublicClient,
  type TestClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { MULTICALL3_ADDRESS } from './constants.js';

/** Polling interval used by the dev clients (anvil mines instantly; viem's default is 4 s). */
export const DEV_POLLING_INTERVAL_MS = 50;

/**
 * A viem `Chain` for a dev node: the given id, ETH as native currency, `rpcUrl` as its only RPC URL and
 * Multicall3 at its canonical address (so viem `multicall` works once `installMulticall3` has run).
 *
 * @param chainId - Chain id reported by the node, e.g. 8453.
 * @param rpcUrl - HTTP JSON-RPC URL.
 * @returns A viem `Chain` named `devnet-<chainId>`.
 */
export function devChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `devnet-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  });
}

/** A public client and a wallet-client factory bound to one dev node. */
export type DevClients = {
  chain: Chain;
  publicClient: PublicClient<Transport, Chain>;
  /** anvil cheat-code client (`setCode`, `setStorageAt`, `impersonateAccount`, `mine` ...). */
  testClient: TestClient<'anvil', Transport, Chain>;
  /** A wallet client that signs locally with `account`. */
  walletFor(account: Account): WalletClient<Transport, Chain, Account>;
};

/**
 * Reads the node's chain id and builds viem clients for it (fast polling, see {@link DEV_POLLING_INTERVAL_MS}).
 *
 * @param rpcUrl - HTTP JSON-RPC URL of the node.
 * @returns {@link DevClients}.
 * @throws {Error} If `eth_chainId` fails (node not reachable).
 */
export async function devClients(rpcUrl: string): Promise<DevClients> {
  const probe = createPublicClient({ transport: http(rpcUrl) });
  const chainId = await probe.getChainId();
  const chain = devChain(chainId, rpcUrl);
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: DEV_POLLING_INTERVAL_MS });
  return {
    chain,
    publicClient,
    testClient: createTestClient({ mode: 'anvil', chain, transport, pollingInterval: DEV_POLLING_INTERVAL_MS }),
    walletFor: (account) => createWalletClient({ account, chain, transport, pollingInterval: DEV_POLLING_INTERVAL_MS }),
  };
}
