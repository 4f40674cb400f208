/**
 * Sign-in or token failure. `code` is stable (`invalid_message`, `wrong_domain`, `wrong_chain`,
 * `expired`, `not_yet_valid`, `unknown_nonce`, `bad_signature`, `invalid_token`); `message` is safe to show.
 */
export class AuthError extends Error {
  override name = 'AuthError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The metered account holds less than the amount to debit; nothing was debited. */
export class InsufficientBalanceError extends Error {
  override name = 'InsufficientBalanceError';
  constructor(
    /** integer string, USDC base units */
    readonly balance: string,
    /** integer string, USDC base units */
    readonly amount: string,
  ) {
    super(`The account balance (${balance} USDC base units) is below the price (${amount}); deposit with POST /v1/account/deposit.`);
  }
}
