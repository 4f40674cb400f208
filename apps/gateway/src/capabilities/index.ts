import type { CapabilityHandler } from './types.js';
import { walletBalances } from './wallet_balances.js';

export { CapabilityFailure, type CapabilityDeps, type CapabilityHandler } from './types.js';

/** Capabilities executed in-process, by id. Others in the catalog are not executable (yet). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const HANDLERS: ReadonlyMap<string, CapabilityHandler<any, any>> = new Map([[walletBalances.id, walletBalances]]);
