/**
 * Human-readable text for x402 verify/settle failure reasons. The facilitator's own
 * `invalidMessage`/`errorMessage` can hold raw viem errors (addresses, calldata, RPC URLs), so
 * callers only ever see these fixed sentences (docs/pitfalls.md, @x402 2.27).
 */
const MESSAGES: Record<string, string> = {
  invalid_exact_evm_signature: 'The EIP-3009 authorization signature does not recover to the payer.',
  invalid_exact_evm_failed_to_parse_signature: 'The EIP-3009 authorization signature is malformed.',
  invalid_exact_evm_payload_authorization_valid_before: 'The authorization has expired (validBefore is in the past or too close).',
  invalid_exact_evm_payload_authorization_valid_after: 'The authorization is not valid yet (validAfter is in the future).',
  invalid_exact_evm_authorization_value: 'The authorized amount is not the price.',
  invalid_exact_evm_payload_authorization_value_mismatch: 'The authorized amount does not equal the price.',
  invalid_exact_evm_recipient_mismatch: 'The authorization pays a different recipient than payTo.',
  invalid_exact_evm_insufficient_balance: 'The payer does not hold enough USDC for this payment.',
  invalid_exact_evm_nonce_already_used: 'This authorization nonce was already used on-chain.',
  invalid_exact_evm_transaction_simulation_failed: 'The transfer would revert on-chain (balance, nonce or signature).',
  invalid_exact_evm_token_name_mismatch: 'The authorization was signed for another EIP-712 token name than "USD Coin".',
  invalid_exact_evm_token_version_mismatch: 'The authorization was signed for another EIP-712 token version than "2".',
  invalid_exact_evm_missing_eip712_domain: 'The payment requirements lack the EIP-712 domain of the asset.',
  invalid_exact_evm_scheme: 'The payment uses another scheme than exact.',
  invalid_exact_evm_network_mismatch: 'The payment is for another network than the one required.',
  invalid_exact_evm_transaction_failed: 'The settlement transaction failed on-chain.',
  invalid_exact_evm_transfer_event_mismatch: 'The settlement transaction did not transfer the authorized amount.',
  invalid_transaction_state: 'The settlement transaction failed on-chain.',
  settlement_pending: 'The settlement transaction was broadcast but not confirmed in time.',
  unsupported_scheme: 'The payment scheme or network is not accepted here.',
  requirements_mismatch: 'The payment does not match any accepted requirement (amount, asset, payTo or network).',
  authorization_validity_too_long:
    'The authorization stays valid too long: validBefore must be at most maxTimeoutSeconds (plus 120 s of clock skew) from now. Sign a new one.',
  authorization_expired: 'The authorization has expired (validBefore is in the past).',
  unsupported_transfer_method: 'Only EIP-3009 transferWithAuthorization payments are accepted.',
};

/** A safe sentence for an x402 failure `reason`; unknown reasons get a generic one naming the code. */
export function describePaymentFailure(reason: string | undefined): string {
  if (!reason) return 'The payment could not be verified.';
  const known = MESSAGES[reason];
  if (known) return known;
  const code = reason.replace(/[^a-z0-9_]/gi, '').slice(0, 80);
  return `The payment was refused (${code || 'unknown_reason'}).`;
}
