import type { Address } from 'viem';
import { installBatchSettlement } from './batchSettlement.js';
import { installExactPermit2Proxy } from './exactPermit2Proxy.js';
import { installUptoPermit2Proxy } from './uptoPermit2Proxy.js';

export {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  erc3009DepositCollectorAbi,
  erc3009DepositCollectorRuntimeCode,
  installBatchSettlement,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  permit2DepositCollectorAbi,
  permit2DepositCollectorRuntimeCode,
  X402_BATCH_SETTLEMENT_ADDRESS,
  x402BatchSettlementAbi,
} from './batchSettlement.js';
export { exactPermit2ProxyRuntimeCode, installExactPermit2Proxy, X402_EXACT_PERMIT2_PROXY_ADDRESS, x402ExactPermit2ProxyAbi } from './exactPermit2Proxy.js';
export { fillImmutables, setRuntimeCode, type RuntimeArtifact } from './runtimeCode.js';
export {
  installUptoPermit2Proxy,
  PERMIT2_ADDRESS,
  uptoPermit2ProxyRuntimeCode,
  X402_UPTO_PERMIT2_PROXY_ADDRESS,
  x402UptoPermit2ProxyAbi,
} from './uptoPermit2Proxy.js';

/**
 * Puts every contract of this package at its canonical address on an anvil node (dev chains only).
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node that already has Permit2 at its canonical address.
 * @returns The addresses, by contract.
 */
export async function installX402Contracts(rpcUrl: string): Promise<{
  exactPermit2Proxy: Address;
  uptoPermit2Proxy: Address;
  batchSettlement: Address;
  erc3009DepositCollector: Address;
  permit2DepositCollector: Address;
}> {
  const exact = await installExactPermit2Proxy(rpcUrl);
  const upto = await installUptoPermit2Proxy(rpcUrl);
  const batch = await installBatchSettlement(rpcUrl);
  return { exactPermit2Proxy: exact.address, uptoPermit2Proxy: upto.address, ...batch };
}
