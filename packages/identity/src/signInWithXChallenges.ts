import type { PaymentRequired, PaymentRequiredContext } from '@x402/core/types';
import { createSIWxResourceServerExtension, declareSIWxExtension, SIGN_IN_WITH_X, type SIWxExtension } from '@x402/extensions/sign-in-with-x';

/** How long a sign-in-with-x challenge may be signed and used, seconds (`info.expirationTime`; x402 `sign-in-with-x` default 5 minutes). */
export const SIGN_IN_WITH_X_VALIDITY_SECONDS = 300;

/** The statement every sign-in-with-x challenge asks the wallet to sign. */
export const SIGN_IN_WITH_X_STATEMENT = 'Sign in to the agent capability gateway as the payer of what you paid for. This costs nothing.';

/**
 * x402's `sign-in-with-x` extension (CAIP-122; x402 `specs/extensions/sign-in-with-x.md`), the
 * 402 side (packages/identity/README.md "Sign-in-with-x"; the paywall of @acg/payments adds it to the 402 with `withPaymentRequiredExtension`): every 402 carries a fresh challenge in
 * `extensions["sign-in-with-x"]` (`info`: domain, uri, version, a 32-hex-character nonce,
 * issuedAt, expirationTime, statement, resources; `supportedChains`: the payment network with
 * `eip191`; `schema`), built by `@x402/extensions/sign-in-with-x`'s own resource server extension
 * for the gateway's public origin. Challenges are never reused between 402s (a nonce is single
 * use), so this runs after the paywall's challenge cache. Each challenge's nonce is recorded as
 * issued for its resource (`issued`): the write is sent before the 402 is, on the store's
 * connection, so a proof signed from that 402 is checked after it (commands on one connection run
 * in order), but its acknowledgement (with `appendfsync always`, an fsync: one of the slowest steps
 * of a 402 under disk load, bench/README.md "Paid execute") is not awaited. A nonce the store lost
 * or never took (a crash, an outage) fails closed: its proof is refused `unknown_nonce` and the
 * client signs the challenge of its next 402. Verifying a signed challenge is the `SignInWithX`
 * (`signInWithX.ts`).
 */
export class SignInWithXChallenges {
  private readonly declaration: SIWxExtension = declareSIWxExtension({
    statement: SIGN_IN_WITH_X_STATEMENT,
    expirationSeconds: SIGN_IN_WITH_X_VALIDITY_SECONDS,
  })[SIGN_IN_WITH_X];
  private extension?: { origin: string; value: ReturnType<typeof createSIWxResourceServerExtension> };

  /**
   * @param origin the gateway's public origin (`PUBLIC_BASE_URL`, e.g. `https://gateway.example.com`), read at each challenge.
   * @param issued records each challenge's nonce and the resource URI it is for (`SignInWithX.issue`:
   *   only issued nonces sign in, on their resource); called before the 402 is sent, not awaited,
   *   and expected to report its own failure (a rejection here is ignored).
   */
  constructor(
    private readonly origin: () => string,
    private readonly issued?: (nonce: string, uri: string) => Promise<void>,
  ) {}

  /** The `sign-in-with-x` extension data of a 402 for `paymentRequired` (its resource and networks), its nonce sent to be recorded as issued. */
  async challengeFor(paymentRequired: PaymentRequired): Promise<unknown> {
    const context: PaymentRequiredContext = {
      requirements: paymentRequired.accepts,
      resourceInfo: paymentRequired.resource,
      paymentRequiredResponse: paymentRequired,
    };
    const challenge = (await this.serverExtension().enrichPaymentRequiredResponse?.(this.declaration, context)) as Partial<SIWxExtension> | undefined;
    if (challenge?.info && this.issued) this.issued(challenge.info.nonce, challenge.info.uri).catch(() => undefined);
    return challenge;
  }

  /** The library's resource server extension for the current origin (rebuilt when the origin changes, e.g. once the port is known). */
  private serverExtension(): ReturnType<typeof createSIWxResourceServerExtension> {
    const origin = new URL(this.origin()).origin;
    if (this.extension?.origin !== origin) {
      // only the 402 enrichment is used here: payments and nonces are recorded by the gateway, not this storage
      const storage = { hasPaid: () => false, recordPayment: () => undefined };
      this.extension = { origin, value: createSIWxResourceServerExtension({ origin, storage }) };
    }
    return this.extension.value;
  }
}
