import type { CapabilityHandler } from './types.js';
import { liquidationSearch } from './liquidation_search.js';
import { sendBundle } from './send_bundle.js';
import { walletBalances } from './wallet_balances.js';

export { CapabilityFailure, type CapabilityCall, type CapabilityDeps, type CapabilityHandler } from './types.js';

/** Capabilities executed in-process, by id. Others in the catalog are not executable (yet). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const HANDLERS: ReadonlyMap<string, CapabilityHandler<any, any>> = new Map<string, CapabilityHandler<any, any>>([
  [walletBalances.id, walletBalances],
  [sendBundle.id, sendBundle],
  [liquidationSearch.id, liquidationSearch],
]);
