import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { treasuryKeys } from './keys.js';

/**
 * The treasury's Lua scripts (packages/treasury README): one file per script in `./lua`, loaded by
 * name, each called through a typed wrapper below and defined on the connection on first use
 * (`withScripts`, idempotent), as `@acg/payments` does with its own.
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  create_refund: 1,
});

/**
 * `create_refund.lua`: records the refund of an operation as `pending` with its `amount` (integer
 * USDC base units), `payer` and `payment_tx_hash` in one atomic write, only when no record exists.
 * Returns true when created, false when the operation has a refund record already (unchanged).
 * Throws when Redis is unavailable (nothing was written).
 */
export async function createRefund(
  redis: Redis,
  p: { refundKey: string; amount: string; payer: `0x${string}`; paymentTxHash: `0x${string}` },
): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).create_refund(p.refundKey, p.amount, p.payer, p.paymentTxHash)) === 1;
}
