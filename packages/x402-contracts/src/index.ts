import type { Address } from 'viem';
import { installUptoPermit2Proxy } from './uptoPermit2Proxy.js';

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
export async function installX402Contracts(rpcUrl: string): Promise<{ uptoPermit2Proxy: Address }> {
  const upto = await installUptoPermit2Proxy(rpcUrl);
  return { uptoPermit2Proxy: upto.address };
}
