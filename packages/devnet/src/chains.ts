import type { Address } from 'viem';
import { devAccount, DEV_ROLES } from './accounts.js';
import { startAnvil, type AnvilInstance } from './anvil.js';
import { BUYER_USDC_FUNDING } from './constants.js';
import { installMulticall3 } from './multicall3.js';
import { installUsdc, mintUsdcBatch } from './usdc.js';

/** The dev chains besides the payment chain (docs/decisions.md "The dev chain"): spec chain name → chain id and USDC. */
export const DEV_CHAINS = {
  ethereum: { chainId: 1, usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' as Address },
  arbitrum: { chainId: 42161, usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831' as Address },
} as const;

export type DevChainName = keyof typeof DEV_CHAINS;

/** A running dev chain: its anvil, chain id and where USDC is. */
export type DevChain = {
  name: DevChainName;
  chainId: number;
  rpcUrl: string;
  wsUrl: string;
  usdc: Address;
  anvil: AnvilInstance;
  stop(): Promise<void>;
};

/**
 * Starts an anvil for `name` (`ethereum` chain id 1, `arbitrum` chain id 42161) with Multicall3 and
 * real USDC (FiatTokenV2_2) at that chain's canonical Circle address; dev accounts 2-9 get
 * 10,000 USDC each, as on the payment chain. Used by the wallet monitor, the builder and the
 * lending dev data. `port` defaults to a free one.
 * @throws {Error} from `startAnvil` or contract installation.
 */
export async function startDevChain(
  name: DevChainName,
  opts: { port?: number; quiet?: boolean; blockTime?: number; extraArgs?: string[] } = {},
): Promise<DevChain> {
  const spec = DEV_CHAINS[name];
  const anvil = await startAnvil({ chainId: spec.chainId, port: opts.port, quiet: opts.quiet ?? true, blockTime: opts.blockTime, extraArgs: opts.extraArgs });
  try {
    const owner = devAccount(DEV_ROLES.facilitator);
    await Promise.all([installMulticall3(anvil.rpcUrl), installUsdc(anvil.rpcUrl, { address: spec.usdc, owner })]);
    await mintUsdcBatch(
      anvil.rpcUrl,
      DEV_ROLES.buyers.map((i) => ({ to: devAccount(i).address, amount: BUYER_USDC_FUNDING })),
      { address: spec.usdc, minter: owner },
    );
  } catch (e) {
    await anvil.stop();
    throw e;
  }
  return { name, chainId: spec.chainId, rpcUrl: anvil.rpcUrl, wsUrl: anvil.wsUrl, usdc: spec.usdc, anvil, stop: () => anvil.stop() };
}
