import type { ProblemDetails } from '@acg/schemas';
import { defineCapability } from '../define.js';

/** Not specified yet (PLANNED): DESIGN "Providers" describes the offer body. */
export type ProvidersParameters = unknown;
/** Not specified yet (PLANNED). */
export type ProvidersReturnType = unknown;
/** Problem details, once built. */
export type ProvidersErrorType = ProblemDetails;

/**
 * `gateway.providers` (PLANNED): lets a third party list its own capabilities behind the gateway,
 * authenticated by an EIP-191 signature over a challenge. No price, no schemas yet.
 *
 * @example
 * // POST {base_url}/api/v1/providers/challenge {address}, sign the message, then POST {base_url}/api/v1/providers
 */
export const gatewayProviders = defineCapability({
  id: 'gateway.providers',
  product: 'gateway',
  name: 'Provider onboarding',
  description:
    'Lets a third party list its own capabilities behind the gateway with an API endpoint, a USDC wallet on the payment chain and EIP-191 wallet verification.',
  surface: 'REST',
  auth: 'custom',
  method: 'POST',
  endpoint: '{base_url}/api/v1/providers',
  docs: null,
  built: false,
  x402: 'none',
  price: null,
  input: null,
  output: null,
  example: { request: null, response: null },
  notes: 'Authentication is an EIP-191 signature over a challenge from POST {base_url}/api/v1/providers/challenge.',
});
