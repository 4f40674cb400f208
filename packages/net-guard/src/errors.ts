/** The webhook URL breaks the delivery rules (docs/decisions.md "Wallet monitor"); → 400. */
export class WebhookUrlError extends Error {
  override name = 'WebhookUrlError';
  constructor(
    /** `invalid_url`, `unsupported_scheme`, `https_required`, `credentials_in_url`, `private_address`, `unresolvable_host` */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}
