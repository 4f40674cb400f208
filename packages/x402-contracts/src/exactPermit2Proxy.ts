import { pad, type Address, type Hex } from 'viem';
import { x402ExactPermit2ProxyArtifact } from './artifacts.generated.js';
import { fillImmutables, setRuntimeCode } from './runtimeCode.js';
import { PERMIT2_ADDRESS } from './uptoPermit2Proxy.js';

/** Where `@x402/evm` 2.27 expects `x402ExactPermit2Proxy` (`x402ExactPermit2ProxyAddress`), the same on every chain. */
export const X402_EXACT_PERMIT2_PROXY_ADDRESS: Address = '0x402085c248EeA27D92E8b30b2C58ed07f9E20001';

/** Our `x402ExactPermit2Proxy` ABI (contracts/x402ExactPermit2Proxy.sol), typed `as const` for viem. */
export const x402ExactPermit2ProxyAbi = x402ExactPermit2ProxyArtifact.abi;

/**
 * The proxy's runtime code as its constructor would leave it with `permit2`: the one immutable, `PERMIT2`,
 * holds that address. Nothing else depends on the deployment address, so the code works wherever it is set.
 */
export function exactPermit2ProxyRuntimeCode(permit2: Address = PERMIT2_ADDRESS): Hex {
  return fillImmutables(x402ExactPermit2ProxyArtifact, { PERMIT2: pad(permit2) });
}

/**
 * Puts our `x402ExactPermit2Proxy` (the `permit2` asset transfer method of x402 `exact`) at
 * {@link X402_EXACT_PERMIT2_PROXY_ADDRESS} on an anvil node with `anvil_setCode` (dev chains only; real
 * networks have the official deployment there). Permit2 must be at {@link PERMIT2_ADDRESS} for settlements
 * to work (`@acg/devnet` places it). Idempotent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node.
 * @returns `{ address, written }`; `written` is false when the code was already there.
 * @throws {Error} If the address holds other code.
 */
export async function installExactPermit2Proxy(rpcUrl: string): Promise<{ address: Address; written: boolean }> {
  const written = await setRuntimeCode(rpcUrl, X402_EXACT_PERMIT2_PROXY_ADDRESS, exactPermit2ProxyRuntimeCode(), 'installExactPermit2Proxy');
  return { address: X402_EXACT_PERMIT2_PROXY_ADDRESS, written };
}
