import type { GatewayContext } from '../context.js';
import type {
  GatewayError,
  GatewayRequestError,
  InvalidAmountError,
  PaymentRequiredError,
  PaymentTermsMismatchError,
  SpendLimitExceededError,
} from '../errors.js';
import { idempotencyHeader, jsonOf } from '../http.js';
import type { PaymentTerms } from '../chooseRequirement.js';
import { payAndRetry } from '../payAndRetry.js';
import type { DepositResponse } from '../types.js';
import { parseUsdc } from '../units.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link deposit}. */
export interface DepositParameters {
  /** USDC to deposit, decimal string or number (`"1.5"`, `0.25`): 0.01 to 10,000, at most 6 decimals. */
  amount_usdc: string | number;
  /** `Idempotency-Key` (default: a random UUID): a retried deposit with the same key is credited once. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * The metered account after the credit (`balance`, `spent`, `deposited`: integer strings of USDC
 * base units; `usage` lines) and the settled `deposit` (`amount` in base units, `tx_hash`).
 */
export type DepositReturnType = DepositResponse;

/** Errors of {@link deposit}. */
export type DepositErrorType =
  | InvalidAmountError
  | PaymentRequiredError
  | PaymentTermsMismatchError
  | SpendLimitExceededError
  | GatewayError
  | GatewayRequestError;

/** Names deposits in errors and spend-limit messages. */
export const DEPOSIT_LABEL = 'account.deposit';

/** payTo and asset of the gateway's own x402 terms (any /registry entry on the payment network), when listed. */
async function treasuryTerms(ctx: GatewayContext): Promise<PaymentTerms> {
  const doc = await ctx.registry.get();
  const terms = doc.capabilities.find((c) => c.x402 && c.x402.network === ctx.network)?.x402;
  return terms ? { network: terms.network, asset: terms.asset, payTo: terms.payTo } : {};
}

/**
 * Tops up the payer's metered account (docs/decisions.md "Accounts and bearer tokens"):
 * `POST /v1/account/deposit {amount_usdc}`, paid with x402 through {@link payAndRetry}. The
 * payment is the deposit: the requirement must ask exactly `amount_usdc` (in base units), to the
 * treasury `/registry` names, in USDC on the client's network, within the spend limits (a deposit
 * counts towards `spent()` like any payment). The account is the paying address; the balance
 * pays bearer-billed calls (wallet-monitor events, liquidation searches with a token).
 *
 * @returns the account after the credit; amounts are integer strings of USDC base units.
 * @throws {InvalidAmountError} a malformed amount (checked before any request).
 * @throws {GatewayError} 400 amount outside 0.01..10,000.
 * @throws {PaymentRequiredError} no account, or the payment was refused. {PaymentTermsMismatchError} {SpendLimitExceededError} before signing.
 * @throws {GatewayRequestError} unreachable (`paymentOutcome: "unknown"` after a signed payment).
 *
 * @example
 * const { balance, deposit: { tx_hash } } = await deposit(ctx, { amount_usdc: '1.5' })
 */
export async function deposit(ctx: GatewayContext, { amount_usdc, idempotencyKey, signal }: DepositParameters): Promise<DepositReturnType> {
  const path = '/v1/account/deposit';
  const amount = parseUsdc(amount_usdc, 'amount_usdc');
  const r = await payAndRetry(ctx, {
    path,
    method: 'POST',
    headers: idempotencyHeader(ctx, idempotencyKey),
    body: JSON.stringify({ amount_usdc }),
    signal,
    label: DEPOSIT_LABEL,
    terms: async () => ({ ...(await treasuryTerms(ctx)), exactAmount: amount }),
  });
  if (!r.response.ok) throwForStatus(r);
  return jsonOf<DepositResponse>(ctx, path, r);
}
