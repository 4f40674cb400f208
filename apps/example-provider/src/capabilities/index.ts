import type { ProviderCapability } from '@acg/provider-kit';
import { chainReaders, type ChainRpcUrls } from '../chains.js';
import { simulateTransactionCapability } from './simulateTransaction.js';
import { tokenMetadataCapability } from './tokenMetadata.js';
import { walletReportCapability } from './walletReport.js';

export { parseObjective, MAX_REPORT_ADDRESSES } from './walletReport.js';

/**
 * The example provider's capabilities over the chains in `rpcUrls` (each capability's `chain`
 * input lists exactly those): `mev.simulate_transaction` (0.005 USDC), `intelligence.token_metadata`
 * (0.002 USDC), `intelligence.wallet_report` (0.003 USDC, accepts objectives).
 *
 * @throws {Error} when no chain has an RPC URL.
 */
export function exampleCapabilities(rpcUrls: ChainRpcUrls): ProviderCapability[] {
  const readers = chainReaders(rpcUrls);
  if (readers.size === 0) throw new Error('exampleCapabilities: give at least one chain RPC URL (base, ethereum or arbitrum)');
  return [simulateTransactionCapability(readers), tokenMetadataCapability(readers), walletReportCapability(readers)] as ProviderCapability[];
}
