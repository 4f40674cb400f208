import { createPublicClient, http, type PublicClient } from 'viem';
import { arbitrum, base, mainnet } from 'viem/chains';
import type { ChainName, GatewayConfig } from './config.js';

const VIEM_CHAINS = { ethereum: mainnet, base, arbitrum } as const;

/**
 * One viem public client per chain that capabilities may read (`config.chains`: ETHEREUM_RPC_URL,
 * BASE_RPC_URL, ARBITRUM_RPC_URL), keyed by spec chain name: what `CapabilityDeps.chainClient` of
 * @acg/capabilities hands to a capability's `run`. `base` uses the payment chain's definition (its
 * id may differ on a dev chain). Each request is bounded by 10 s with one retry; no multicall batching.
 *
 * @example
 * const clients = chainClients(config)
 * const capabilityDeps = { chainClient: (chain) => clients.get(chain), redis, keys }
 */
export function chainClients(config: Pick<GatewayConfig, 'chains' | 'payment'>): Map<ChainName, PublicClient> {
  const clients = new Map<ChainName, PublicClient>();
  for (const [name, url] of Object.entries(config.chains) as [ChainName, string][]) {
    const chain = name === 'base' ? config.payment.chain : VIEM_CHAINS[name];
    clients.set(name, createPublicClient({ chain, transport: http(url, { timeout: 10_000, retryCount: 1 }), batch: { multicall: false } }) as PublicClient);
  }
  return clients;
}
