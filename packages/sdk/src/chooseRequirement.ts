import { PaymentTermsMismatchError, SpendLimitExceededError } from './errors.js';
import type { SpendLedger } from './spend.js';
import type { Capability, PaymentRequired, PaymentRequirements } from './types.js';

/**
 * The x402 schemes the SDK pays with (README "Schemes"): `exact` (EIP-3009, the price), `upto`
 * (Permit2, a ceiling of which the server settles what was used), `batch-settlement` (a channel
 * deposit, then cumulative vouchers signed off-chain).
 */
export type PaymentScheme = 'exact' | 'upto' | 'batch-settlement';

/** Every scheme the SDK can pay with. */
export const PAYMENT_SCHEMES: readonly PaymentScheme[] = ['exact', 'upto', 'batch-settlement'];

/**
 * The default: `exact` only, as before `upto` and `batch-settlement` existed. The other schemes are
 * opt-in (`schemes` option): `upto` needs a Permit2 allowance (or a 402 offering EIP-2612 gas
 * sponsoring), and a channel locks a deposit.
 */
export const DEFAULT_SCHEMES: readonly PaymentScheme[] = ['exact'];

/**
 * Terms a requirement must also meet, beyond the client's own (scheme `exact`, its network, a
 * known asset, the spend limits). Amounts are integer USDC base units. For execute they are the
 * x402 terms `/registry` advertises for the capability.
 */
export interface PaymentTerms {
  /** CAIP-2 network the terms name (must equal the client's network). */
  network?: string;
  /** Token contract (case-insensitive). */
  asset?: string;
  /** Recipient (case-insensitive). */
  payTo?: string;
  /** Highest acceptable amount, base units. */
  maxAmount?: bigint;
  /** The amount must be exactly this, base units (job budget, deposit). */
  exactAmount?: bigint;
}

/** Parameters of {@link chooseRequirement}. */
export interface ChooseRequirementParameters {
  /** The decoded x402 v2 challenge. */
  paymentRequired: PaymentRequired;
  /** CAIP-2 network the client pays on, e.g. `eip155:8453`. */
  network: string;
  /** Token contracts the client pays with on `network` (case-insensitive). */
  assets: readonly string[];
  terms?: PaymentTerms;
  /** When given, a requirement whose amount would break a spend limit is skipped. */
  ledger?: SpendLedger;
  /** Names the paid call in errors (capability id, e.g. `mev.liquidation_search`). */
  label: string;
  /** Schemes this client pays with, most preferred first (default {@link DEFAULT_SCHEMES}, `exact` first). */
  schemes?: readonly PaymentScheme[];
}

/** What {@link chooseRequirement} picked: the requirement and its amount in integer USDC base units. */
export interface ChooseRequirementReturnType {
  requirement: PaymentRequirements;
  amount: bigint;
}

/** Errors of {@link chooseRequirement}. */
export type ChooseRequirementErrorType = PaymentTermsMismatchError | SpendLimitExceededError;

function sameAddress(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
}

/**
 * Picks the requirement of `paymentRequired.accepts` this client prefers and can pay: the first
 * one of the most preferred scheme of `schemes` (default `exact` only), x402Version 2, the client's `network`, an asset in `assets`, the `terms` (asset, payTo, amount
 * ceiling or exact amount), and an integer `amount` within the spend limits of `ledger` (for
 * `batch-settlement` the per-call limit only: whether the channel's deposit fits the total is known
 * when the payment is built). `amount` is the price (`exact`), the ceiling (`upto`) or the voucher
 * increment (`batch-settlement`). Pure: no I/O, nothing reserved.
 *
 * @returns the requirement and its amount (integer USDC base units).
 * @throws {SpendLimitExceededError} when the only payable requirements break a spend limit.
 * @throws {PaymentTermsMismatchError} listing why each requirement was refused.
 *
 * @example
 * const { requirement, amount } = chooseRequirement({ paymentRequired, network: 'eip155:8453', assets: [USDC], label: 'mev.liquidation_search' })
 */
export function chooseRequirement(p: ChooseRequirementParameters): ChooseRequirementReturnType {
  const accepts = p.paymentRequired.accepts ?? [];
  const terms = p.terms ?? {};
  if (p.paymentRequired.x402Version !== 2) {
    throw new PaymentTermsMismatchError(p.label, accepts, [`x402Version ${p.paymentRequired.x402Version} is not 2`]);
  }
  if (accepts.length === 0) throw new PaymentTermsMismatchError(p.label, accepts, ['the challenge has no accepts']);
  const known = p.assets.map((a) => a.toLowerCase());
  const schemes = p.schemes ?? DEFAULT_SCHEMES;
  const problems: string[] = [];
  let overLimit: SpendLimitExceededError | undefined;
  // most preferred scheme first; within a scheme, the 402's order
  const rank = (r: PaymentRequirements) => {
    const i = schemes.indexOf(r.scheme as PaymentScheme);
    return i < 0 ? schemes.length : i;
  };
  const ordered = [...accepts.entries()].sort(([i, a], [j, b]) => rank(a) - rank(b) || i - j);
  for (const [i, r] of ordered) {
    const why: string[] = [];
    if (!schemes.includes(r.scheme as PaymentScheme)) why.push(`scheme "${r.scheme}" is not one of ${schemes.map((x) => `"${x}"`).join(', ')}`);
    if (r.network !== p.network) why.push(`network "${r.network}" is not ${p.network}`);
    else if (terms.network !== undefined && terms.network !== r.network) why.push(`network "${r.network}" differs from the registry's "${terms.network}"`);
    if (typeof r.asset !== 'string' || !known.includes(r.asset.toLowerCase())) why.push(`asset ${r.asset} is not a known asset on ${p.network}`);
    else if (terms.asset !== undefined && !sameAddress(r.asset, terms.asset)) why.push(`asset ${r.asset} differs from the registry's ${terms.asset}`);
    if (terms.payTo !== undefined && !sameAddress(r.payTo, terms.payTo)) why.push(`payTo ${r.payTo} differs from the registry's ${terms.payTo}`);
    const amountOk = typeof r.amount === 'string' && /^\d+$/.test(r.amount);
    if (!amountOk) why.push(`amount ${JSON.stringify(r.amount)} is not an integer string`);
    else if (terms.maxAmount !== undefined && BigInt(r.amount) > terms.maxAmount)
      why.push(`amount ${r.amount} is above the advertised price ${terms.maxAmount} (base units)`);
    else if (terms.exactAmount !== undefined && BigInt(r.amount) !== terms.exactAmount)
      why.push(`amount ${r.amount} is not the expected ${terms.exactAmount} (base units)`);
    if (why.length === 0 && p.ledger) {
      try {
        if (r.scheme === 'batch-settlement') p.ledger.checkPerCall(BigInt(r.amount), p.label);
        else p.ledger.check(BigInt(r.amount), p.label);
      } catch (e) {
        if (!(e instanceof SpendLimitExceededError)) throw e;
        overLimit ??= e;
        why.push(`amount ${r.amount} breaks the ${e.limit} spend limit`);
      }
    }
    if (why.length === 0) return { requirement: r, amount: BigInt(r.amount) };
    problems.push(`accepts[${i}]: ${why.join('; ')}`);
  }
  problems.sort((a, b) => Number(a.slice(8, a.indexOf(']'))) - Number(b.slice(8, b.indexOf(']'))));
  if (overLimit) throw overLimit;
  throw new PaymentTermsMismatchError(p.label, accepts, problems);
}

/**
 * The x402 terms `/registry` advertises for a capability, as {@link PaymentTerms}: network,
 * asset, payTo and the price ceiling (`x402.maxAmountRequired`, else `price_base_units`; none when
 * the price is not fixed). Throws {@link PaymentTermsMismatchError} when the entry has no x402 terms.
 */
export function registryTerms(capability: Capability): PaymentTerms {
  const terms = capability.x402;
  if (!terms) throw new PaymentTermsMismatchError(capability.id, [], ['/registry advertises no x402 payment terms for this capability']);
  const raw = terms.maxAmountRequired ?? capability.price_base_units;
  const maxAmount = typeof raw === 'string' && /^\d+$/.test(raw) ? BigInt(raw) : undefined;
  return { network: terms.network, asset: terms.asset, payTo: terms.payTo, maxAmount };
}
