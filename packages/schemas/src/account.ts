import { z } from 'zod';
import { limitMessage, MAX_DECIMAL_AMOUNT_CHARS } from './limits.js';
import { DecimalString } from './primitives.js';

/** One line of a metered account's usage: a `debit` or `credit` of `amount` (integer string, USDC base units). */
export const AccountUsageLine = z.object({ kind: z.enum(['debit', 'credit']), amount: z.string(), item: z.string(), ref: z.string(), at: z.string() });
export type AccountUsageLine = z.infer<typeof AccountUsageLine>;

/**
 * A metered account (docs/decisions.md "Accounts and bearer tokens"), `GET /v1/account`: `address`,
 * `balance`, `spent`, `deposited` (integer strings, USDC base units) and recent `usage`.
 */
export const AccountView = z.object({
  address: z.string(),
  balance: z.string().describe('integer string, USDC base units (6 decimals)'),
  spent: z.string().describe('integer string, USDC base units'),
  deposited: z.string().describe('integer string, USDC base units'),
  usage: z.array(AccountUsageLine),
});
export type AccountView = z.infer<typeof AccountView>;

/**
 * Body of `POST /v1/account/deposit`: `amount_usdc`, decimal USDC (string of at most
 * {@link MAX_DECIMAL_AMOUNT_CHARS} characters, or number), 0.01 to 10,000, at most 6 decimals.
 */
export const DepositRequest = z.object({
  amount_usdc: z
    .union([DecimalString.max(MAX_DECIMAL_AMOUNT_CHARS, limitMessage('amount_usdc', MAX_DECIMAL_AMOUNT_CHARS, 'characters')), z.number().positive()])
    .describe('USDC to deposit, decimal (e.g. "1.5")'),
});
export type DepositRequest = z.infer<typeof DepositRequest>;

/** Answer of `POST /v1/account/deposit`: the account after the credit, and the settled `deposit` (`amount`: integer string, USDC base units). */
export const DepositResponse = AccountView.extend({ deposit: z.object({ amount: z.string(), tx_hash: z.string() }) });
export type DepositResponse = z.infer<typeof DepositResponse>;
