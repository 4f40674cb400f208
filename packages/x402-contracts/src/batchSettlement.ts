import { pad, type Address, type Hex } from 'viem';
import { ERC3009DepositCollectorArtifact, Permit2DepositCollectorArtifact, x402BatchSettlementArtifact } from './artifacts.generated.js';
import { fillImmutables, setRuntimeCode } from './runtimeCode.js';
import { PERMIT2_ADDRESS } from './uptoPermit2Proxy.js';

/** Where `@x402/evm` 2.27 expects `x402BatchSettlement` (`BATCH_SETTLEMENT_ADDRESS`). */
export const X402_BATCH_SETTLEMENT_ADDRESS: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';

/** Where `@x402/evm` 2.27 expects `ERC3009DepositCollector` (`ERC3009_DEPOSIT_COLLECTOR_ADDRESS`). */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020806089470a89826cB9fB1f4059150b550004';

/** Where `@x402/evm` 2.27 expects `Permit2DepositCollector` (`PERMIT2_DEPOSIT_COLLECTOR_ADDRESS`). */
export const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020425FAf3B746C082C2f942b4E5159887B0005';

/** Our `x402BatchSettlement` ABI (contracts/x402BatchSettlement.sol), typed `as const` for viem. */
export const x402BatchSettlementAbi = x402BatchSettlementArtifact.abi;

/** Our `ERC3009DepositCollector` ABI (contracts/ERC3009DepositCollector.sol), typed `as const` for viem. */
export const erc3009DepositCollectorAbi = ERC3009DepositCollectorArtifact.abi;

/** Our `Permit2DepositCollector` ABI (contracts/Permit2DepositCollector.sol), typed `as const` for viem. */
export const permit2DepositCollectorAbi = Permit2DepositCollectorArtifact.abi;

/**
 * The collector's runtime code as its constructor would leave it: its one immutable, `BATCH_SETTLEMENT`,
 * holds `batchSettlement`. (`x402BatchSettlement` itself has no immutables: its EIP-712 domain is computed
 * from `address(this)` at each use, so its build runs unchanged at any address.)
 */
export function erc3009DepositCollectorRuntimeCode(batchSettlement: Address = X402_BATCH_SETTLEMENT_ADDRESS): Hex {
  return fillImmutables(ERC3009DepositCollectorArtifact, { BATCH_SETTLEMENT: pad(batchSettlement) });
}

/**
 * The Permit2 collector's runtime code as its constructor would leave it: `BATCH_SETTLEMENT` (the only caller
 * of `collect`, and where Permit2 sends the deposit) and `PERMIT2`.
 */
export function permit2DepositCollectorRuntimeCode(batchSettlement: Address = X402_BATCH_SETTLEMENT_ADDRESS, permit2: Address = PERMIT2_ADDRESS): Hex {
  return fillImmutables(Permit2DepositCollectorArtifact, { BATCH_SETTLEMENT: pad(batchSettlement), PERMIT2: pad(permit2) });
}

/**
 * Puts our `x402BatchSettlement`, `ERC3009DepositCollector` and `Permit2DepositCollector` at
 * {@link X402_BATCH_SETTLEMENT_ADDRESS}, {@link ERC3009_DEPOSIT_COLLECTOR_ADDRESS} and
 * {@link PERMIT2_DEPOSIT_COLLECTOR_ADDRESS} on an anvil node with `anvil_setCode` (dev chains only; real
 * networks have the official deployments there). Permit2 deposits need Permit2 at its canonical address
 * (`@acg/devnet` places it). Idempotent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node (the chain must support transient storage: cancun or later).
 * @returns The three addresses.
 * @throws {Error} If an address holds other code.
 */
export async function installBatchSettlement(
  rpcUrl: string,
): Promise<{ batchSettlement: Address; erc3009DepositCollector: Address; permit2DepositCollector: Address }> {
  await setRuntimeCode(rpcUrl, X402_BATCH_SETTLEMENT_ADDRESS, x402BatchSettlementArtifact.deployedBytecode, 'installBatchSettlement');
  await setRuntimeCode(rpcUrl, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009DepositCollectorRuntimeCode(), 'installBatchSettlement');
  await setRuntimeCode(rpcUrl, PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, permit2DepositCollectorRuntimeCode(), 'installBatchSettlement');
  return {
    batchSettlement: X402_BATCH_SETTLEMENT_ADDRESS,
    erc3009DepositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
    permit2DepositCollector: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  };
}
