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
