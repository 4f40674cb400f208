import { pad, type Address, type Hex } from 'viem';
import { ERC3009DepositCollectorArtifact, x402BatchSettlementArtifact } from './artifacts.generated.js';
import { fillImmutables, setRuntimeCode } from './runtimeCode.js';

/** Where `@x402/evm` 2.27 expects `x402BatchSettlement` (`BATCH_SETTLEMENT_ADDRESS`). */
export const X402_BATCH_SETTLEMENT_ADDRESS: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';

/** Where `@x402/evm` 2.27 expects `ERC3009DepositCollector` (`ERC3009_DEPOSIT_COLLECTOR_ADDRESS`). */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020806089470a89826cB9fB1f4059150b550004';

/** Our `x402BatchSettlement` ABI (contracts/x402BatchSettlement.sol), typed `as const` for viem. */
export const x402BatchSettlementAbi = x402BatchSettlementArtifact.abi;

/** Our `ERC3009DepositCollector` ABI (contracts/ERC3009DepositCollector.sol), typed `as const` for viem. */
export const erc3009DepositCollectorAbi = ERC3009DepositCollectorArtifact.abi;

/**
 * The collector's runtime code as its constructor would leave it: its one immutable, `BATCH_SETTLEMENT`,
 * holds `batchSettlement`. (`x402BatchSettlement` itself has no immutables: its EIP-712 domain is computed
 * from `address(this)` at each use, so its build runs unchanged at any address.)
 */
export function erc3009DepositCollectorRuntimeCode(batchSettlement: Address = X402_BATCH_SETTLEMENT_ADDRESS): Hex {
  const ids = Object.keys(ERC3009DepositCollectorArtifact.immutableReferences);
  return fillImmutables(ERC3009DepositCollectorArtifact, Object.fromEntries(ids.map((id) => [id, pad(batchSettlement)])));
}

/**
 * Puts our `x402BatchSettlement` and `ERC3009DepositCollector` at {@link X402_BATCH_SETTLEMENT_ADDRESS} and
 * {@link ERC3009_DEPOSIT_COLLECTOR_ADDRESS} on an anvil node with `anvil_setCode` (dev chains only; real
 * networks have the official deployments there). Idempotent.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node (the chain must support transient storage: cancun or later).
 * @returns The two addresses.
 * @throws {Error} If an address holds other code.
 */
export async function installBatchSettlement(rpcUrl: string): Promise<{ batchSettlement: Address; erc3009DepositCollector: Address }> {
  await setRuntimeCode(rpcUrl, X402_BATCH_SETTLEMENT_ADDRESS, x402BatchSettlementArtifact.deployedBytecode, 'installBatchSettlement');
  await setRuntimeCode(rpcUrl, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009DepositCollectorRuntimeCode(), 'installBatchSettlement');
  return { batchSettlement: X402_BATCH_SETTLEMENT_ADDRESS, erc3009DepositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS };
}
