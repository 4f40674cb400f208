import { toHex, type Hex } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';

/** anvil's standard test mnemonic (the accounts every anvil/hardhat node funds by default). Never use it on a real network. */
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

/** Number of accounts the dev chains fund (anvil `--accounts 10`): indexes 0 to 9. */
export const DEV_ACCOUNT_COUNT = 10;

/**
 * Who is who on the dev chains (docs/decisions.md "The dev chain"), as account indexes of {@link DEV_MNEMONIC}.
 * - `facilitator` (0): deploys the contracts, owns/mints USDC, pays gas for x402 settlements.
 * - `treasury` (1): the gateway's x402 `payTo`.
 * - `buyers` (2 to 9): funded with 10,000 USDC each by `setupPaymentChain`.
 * - `provider` (10): the example provider's wallet under `npm start` (its payout address, and it
 *   signs its results). Outside anvil's ten funded accounts on purpose: it holds no ETH (it never
 *   sends a transaction) and no USDC at start, so its USDC balance is exactly what payouts sent it,
 *   and the buyers stay buyers.
 * - `secondProvider` (11): the second provider `npm start` runs (the example provider again, joining
 *   one of its contracts at another price and speed); unfunded for the same reasons.
 * - `searcher` (9): the liquidation searcher of the Ethereum dev chain (docs/liquidation-plans.md):
 *   the lending seed gives it {@link SEARCHER_DEBT_FUNDS} of each debt asset (USDC, DAI), so the
 *   plans of `mev.liquidation_plan` can repay; on the payment chain it is also the last buyer.
 */
export const DEV_ROLES = {
  facilitator: 0,
  treasury: 1,
  buyers: [2, 3, 4, 5, 6, 7, 8, 9],
  provider: 10,
  secondProvider: 11,
  searcher: 9,
} as const satisfies { facilitator: number; treasury: number; buyers: readonly number[]; provider: number; secondProvider: number; searcher: number };

/** Whole tokens of each lending debt asset (USDC, DAI) the lending seed mints to `DEV_ROLES.searcher`. */
export const SEARCHER_DEBT_FUNDS = 5_000_000;

const cache = new Map<number, HDAccount>();

/**
 * The dev account at `index` of {@link DEV_MNEMONIC} (path `m/44'/60'/0'/0/<index>`), the same key anvil funds.
 *
 * Derivation costs ~20 ms, so accounts are cached: the same `HDAccount` object is returned for the same index.
 * Need a nonce manager (concurrent senders)? Use `privateKeyToAccount(devPrivateKey(i), { nonceManager })`.
 *
 * @param index - Address index, a non-negative integer (0 to 9 are funded with ETH on the dev chains).
 * @returns A viem `HDAccount` (local signer).
 * @throws {Error} If `index` is not a non-negative safe integer.
 *
 * @example
 * const facilitator = devAccount(DEV_ROLES.facilitator) // 0xf39F…2266
 */
export function devAccount(index: number): HDAccount {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new Error(`devAccount: index must be a non-negative integer, got ${String(index)}`);
  }
  let account = cache.get(index);
  if (!account) {
    account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index });
    cache.set(index, account);
  }
  return account;
}

/**
 * The 32-byte private key of the dev account at `index` (see {@link devAccount}).
 *
 * @param index - Address index, a non-negative integer.
 * @returns `0x`-prefixed 64-hex-digit private key.
 * @throws {Error} If `index` is invalid.
 */
export function devPrivateKey(index: number): Hex {
  const key = devAccount(index).getHdKey().privateKey;
  if (!key) throw new Error(`devPrivateKey: no private key for index ${index}`);
  return toHex(key);
}
