import { pad, type Address, type Hex } from 'viem';
import { x402UptoPermit2ProxyArtifact } from './artifacts.generated.js';
import { fillImmutables, setRuntimeCode } from './runtimeCode.js';

/** Canonical Permit2, the proxy's only constructor argument (`@x402/evm` `PERMIT2_ADDRESS`). */
export const PERMIT2_ADDRESS: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3';

/** Where `@x402/evm` 2.27 expects `x402UptoPermit2Proxy` (`x402UptoPermit2ProxyAddress`), the same on every chain. */
export const X402_UPTO_PERMIT2_PROXY_ADDRESS: Address = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';

/** Our `x402UptoPermit2Proxy` ABI (contracts/x402UptoPermit2Proxy.sol), typed `as const` for viem. */
export const x402UptoPermit2ProxyAbi = x402UptoPermit2ProxyArtifact.abi;

/**
 * The proxy's runtime code as its constructor would leave it with `permit2`: the one immutable, `PERMIT2`,
 * holds that address. Nothing else depends on the deployment address, so the code works wherever it is set.
 */
export function uptoPermit2ProxyRuntimeCode(permit2: Address = PERMIT2_ADDRESS): Hex {
  return fillImmutables(x402UptoPermit2ProxyArtifact, { PERMIT2: pad(permit2) });
}

/**
 * Puts our `x402UptoPermit2Proxy` at {@link X402_UPTO_PERMIT2_PROXY_ADDRESS} on an anvil node with
 * `anvil_setCode` (dev chains only; real networks have the official deployment there). Permit2 must be at
 * {@link PERMIT2_ADDRESS} for settlements to work (`@acg/devnet` places it). Idempotent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node.
 * @returns `{ address, written }`; `written` is false when the code was already there.
 * @throws {Error} If the address holds other code.
 */
export async function installUptoPermit2Proxy(rpcUrl: string): Promise<{ address: Address; written: boolean }> {
  const written = await setRuntimeCode(rpcUrl, X402_UPTO_PERMIT2_PROXY_ADDRESS, uptoPermit2ProxyRuntimeCode(), 'installUptoPermit2Proxy');
  return { address: X402_UPTO_PERMIT2_PROXY_ADDRESS, written };
}
