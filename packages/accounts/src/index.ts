export { InsufficientBalanceError } from './errors.js';
export { Ledger, type AccountView, type UsageLine } from './ledger.js';
export { startOpenCallRecovery, type OpenCallRecoveryOptions } from './recovery.js';
