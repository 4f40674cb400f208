/**
 * Clock skew tolerated between the payer's clock and the gateway's when checking an EIP-3009
 * authorization's validity window, seconds (docs/decisions.md "x402 payments").
 */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;

/**
 * Checks an EIP-3009 authorization's validity window against the challenge, before anything is
 * reserved or settled. The challenge advertises `maxTimeoutSeconds` (default 300): an
 * authorization must not stay spendable longer than that, so
 * - `validBefore` later than now + `maxTimeoutSeconds` + `skewSeconds` → `authorization_validity_too_long`;
 * - `validAfter` later than now + `skewSeconds` → `invalid_exact_evm_payload_authorization_valid_after`
 *   (the facilitator refuses any future `validAfter` too, but only after its chain reads).
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
  if (BigInt(auth.validAfter) > now + skew) return 'invalid_exact_evm_payload_authorization_valid_after';
  return undefined;
}
