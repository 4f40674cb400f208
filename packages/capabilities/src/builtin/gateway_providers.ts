import { type ProblemDetails, ProviderRegistered, ProviderRegistration } from '@acg/schemas';
import type { z } from 'zod';
import { defineCapability } from '../define.js';

/** Body of `POST /api/v1/providers`: a signed challenge (`address`, `message`, EIP-191 `signature`), `name`, `endpoint` and 1..20 offers. */
export type ProvidersParameters = z.input<typeof ProviderRegistration>;
/** 201 body: `provider_id` (`prv_<ULID>`), the capabilities (each `PILOT` until probed) and the `signing_secret` (`whsec_…`, shown once). */
export type ProvidersReturnType = z.infer<typeof ProviderRegistered>;
/**
 * Problem details (stable `reason`): 400 invalid body, schema or example (`errors`), or an endpoint refused by the
 * SSRF rules; 401 a used, expired or forged challenge; 409 an id clash (`capability_exists`) or
 * an address that already has a provider (`provider_exists`, with `provider_id`: use PUT); 422 an
 * unreachable endpoint.
 */
export type ProvidersErrorType = ProblemDetails;

/**
 * `gateway.providers`: lets a third party list its own capabilities behind the gateway
 * (docs/decisions.md "Providers"). It needs an API endpoint, a USDC wallet on the payment chain (its payout
 * address) and an EIP-191 signature over a single-use challenge. Its capabilities are then listed
 * in the catalog with `provider` = its name, paid per call with x402 like built-ins; the gateway
 * keeps `PROVIDER_FEE_BPS` of each price and pays the rest out in USDC after the dispute window.
 *
 * @example
 * // 1. POST {base_url}/api/v1/providers/challenge {"address": "0x…", "action": "register", name, endpoint, capabilities} → {message, nonce, expires_at}
 * // 2. sign `message` with personal_sign (EIP-191)
 * // 3. POST {base_url}/api/v1/providers {address, message, signature, name, endpoint, capabilities: [offer]}
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
  docs: '{base_url}/llms.txt',
  built: true,
  x402: 'none',
  price: null,
  input: ProviderRegistration,
  output: ProviderRegistered,
  example: {
    request: {
      address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
      message: '<the message from POST /api/v1/providers/challenge>',
      // 65 bytes: r, s, v of personal_sign over the challenge message
      signature: `0x${'1b'.repeat(64)}1c`,
      name: 'Example Provider',
      endpoint: 'https://provider.example/acg',
      capabilities: [
        {
          name: 'token_metadata',
          product: 'intelligence',
          description: 'Name, symbol, decimals and total supply of an ERC-20 token.',
          price_usdc: '0.002',
          input_schema: {
            type: 'object',
            properties: { chain: { enum: ['ethereum', 'base', 'arbitrum'] }, token: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } },
            required: ['chain', 'token'],
          },
          output_schema: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
          example_request: { chain: 'base', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
          timeout_ms: 10000,
          accepts_objective: false,
        },
      ],
    },
    response: null,
  },
  related_capabilities: ['gateway.execute'],
  notes:
    'Authentication is an EIP-191 signature over a single-use challenge from POST {base_url}/api/v1/providers/challenge (10 minutes), requested with the action (register, update, retire), provider_id (update, retire) and the exact name, endpoint and capabilities (register, update): the message names the action and the SHA-256 of that body, and is refused (403) for anything else. PUT and DELETE /api/v1/providers/{provider_id} need a fresh one. The gateway calls POST {endpoint} with Standard Webhooks headers signed with the signing_secret.',
});
