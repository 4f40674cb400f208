/**
 * Clock skew tolerated on the upper end of an EIP-3009 authorization's window (`validBefore`),
 * seconds: 120 (docs/decisions.md "x402 payments", authorization window). The official x402 client
 * signs `validBefore = its now + maxTimeoutSeconds`, so a gateway whose clock is behind its payers'
 * by up to this much still accepts what they sign (a fault round had the gateway 45 s behind).
 */
export const DEFAULT_CLOCK_SKEW_SECONDS = 120;

/**
 * Checks an EIP-3009 authorization's validity window against the challenge, before anything is
 * reserved or settled, refusing nothing the x402 facilitator (@x402/evm exact scheme) accepts:
 * - `validAfter` later than now → `invalid_exact_evm_payload_authorization_valid_after`, the
 *   facilitator's own rule and code (it allows no skew there: `validAfter > now` is refused), so the
 *   gateway only answers earlier what settlement would refuse anyway;
 * - `validBefore` later than now + `maxTimeoutSeconds` (default 300, as the challenge advertises) +
 *   `skewSeconds` (default {@link DEFAULT_CLOCK_SKEW_SECONDS}) → `authorization_validity_too_long`:
 *   the gateway's own cap on how long a payer's authorization stays spendable (the facilitator has
 *   none), wide enough for a skewed clock.
 * An expired `validBefore` is left to the facilitator (`invalid_exact_evm_payload_authorization_valid_before`).
 * Times are Unix seconds (integer strings, as signed). Returns the stable x402-style reason code,
 * or undefined when the window is acceptable.
 */
export function authorizationWindowProblem(
  auth: { validAfter: string; validBefore: string },
  maxTimeoutSeconds: number,
  o: { nowSeconds?: number; skewSeconds?: number } = {},
): string | undefined {
  const now = BigInt(Math.floor(o.nowSeconds ?? Date.now() / 1000));
  const skew = BigInt(Math.max(0, Math.floor(o.skewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS)));
  if (BigInt(auth.validBefore) > now + BigInt(Math.floor(maxTimeoutSeconds)) + skew) return 'authorization_validity_too_long';
  if (BigInt(auth.validAfter) > now) return 'invalid_exact_evm_payload_authorization_valid_after';
  return undefined;
}
