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
