/**
 * Why a provider request was refused (docs/decisions.md "Providers"). `status` is the HTTP status to answer,
 * `code` is stable snake_case, `message` is safe to show; `extra` goes into the problem+json body
 * (e.g. `provider_id` of an existing provider, `errors` with JSON Schema issues).
 *
 * Codes (the problem's `reason`): `invalid_challenge` 400 (not our message, or the address differs), `challenge_expired`
 * 401, `challenge_used` 401 (a nonce is single use), `bad_signature` 401 (not signed by
 * `address`), `invalid_schema` 400, `invalid_example` 400, `endpoint_refused` 400 (SSRF rules),
 * `endpoint_unreachable` 422, `capability_exists` 409 (an id clash), `provider_exists` 409 (this
 * address already has a provider: update it with PUT), `not_found` 404, `forbidden` 403,
 * `retired` 409, `busy` 503 (another registration holds the lock; retry), `challenge_mismatch` 403
 * (the challenge was signed for another action, provider or body), `invalid_challenge_request` 400,
 * `invalid_body` 400, `schema_too_large` 413 and `schema_too_deep` 422 (a JSON Schema over a limit), `unknown_contract` 404
 * (a join names no provider contract), `contract_mismatch` 422 (a join's `input_schema` refuses the
 * contract's `example_request`; docs/marketplace.md).
 */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
