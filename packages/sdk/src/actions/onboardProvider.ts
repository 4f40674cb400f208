import type { LocalAccount } from 'viem';
import type { GatewayContext } from '../context.js';
import { AcgError, GatewayError, type GatewayRequestError } from '../errors.js';
import { jsonOf, request } from '../http.js';
import { parseProblem } from '../protocol.js';
import type { ProviderChallenge, ProviderOffer, ProviderRegistered } from '../types.js';
import { throwForStatus } from './internal.js';

/** Parameters of {@link onboardProvider}. */
export interface OnboardProviderParameters {
  /** The provider's wallet (default: the context's account): signs the challenge (EIP-191); its address is the payout address on the payment chain. Signs only, no gas. */
  account?: LocalAccount;
  /** Display name, the catalog's `provider` field: 1-64 letters, digits, space, `.`, `_`, `-`. */
  name: string;
  /** URL the gateway POSTs calls to (https; http to loopback only under the gateway's development policy). It must already answer `GET`. */
  endpoint: string;
  /** 1 to 20 offers (JSON Schemas already built; `@acg/provider-kit`'s `offers()` builds them from zod). */
  offers: ProviderOffer[];
}

/** What {@link onboardProvider} returns: the registration and whether it was new (201) or an update of the address's provider (200, secret rotated). */
export type OnboardProviderReturnType = ProviderRegistered & { created: boolean };

/** Errors of {@link onboardProvider}. */
export type OnboardProviderErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * Registers a provider (packages/provider-directory README): `POST /api/v1/providers/challenge {address, action:
 * "register", name, endpoint, capabilities}` (the message names the action and the SHA-256 of that
 * body, so the signature authorizes nothing else), signs
 * the `message` with `personal_sign`, then `POST /api/v1/providers {address, message, signature,
 * name, endpoint, capabilities}` → 201. When the address already has a provider (409 with
 * `reason: "provider_exists"` and `provider_id`), gets a fresh challenge (`action: "update"`,
 * `provider_id`) and sends the same body to
 * `PUT /api/v1/providers/{provider_id}` → 200: the offers are replaced and the signing secret rotated.
 * The same flow as `onboard()` of the provider kit (`@acg/provider-kit`), for clients that already have
 * their offers as JSON.
 *
 * @returns the registration with `signing_secret` (`whsec_...`, shown once) and `created`.
 * @throws {AcgError} no account. {GatewayError} 400 invalid offer or endpoint (`errors`), 401 bad or
 *   expired challenge signature, 409 a capability id taken by another provider. {GatewayRequestError} unreachable.
 *
 * @example
 * const { provider_id, signing_secret } = await onboardProvider(ctx, { name: 'Echo Labs', endpoint: 'https://echo.example/acg', offers })
 */
export async function onboardProvider(ctx: GatewayContext, params: OnboardProviderParameters): Promise<OnboardProviderReturnType> {
  const account = params.account ?? ctx.account;
  if (!account) throw new AcgError('Onboarding signs with the provider wallet: pass `account` to onboardProvider or to createGatewayClient.');
  // the challenge names the action, the provider and the SHA-256 of exactly this body: a signature authorizes only this request
  const fields = { name: params.name, endpoint: params.endpoint, capabilities: params.offers };
  const signedBody = async (providerId?: string) => {
    const path = '/api/v1/providers/challenge';
    const challengeBody = {
      address: account.address,
      action: providerId ? 'update' : 'register',
      ...(providerId ? { provider_id: providerId } : {}),
      ...fields,
    };
    const r = await request(ctx, path, { method: 'POST', body: JSON.stringify(challengeBody) });
    if (!r.response.ok) throwForStatus(r);
    const { message } = jsonOf<ProviderChallenge>(ctx, path, r);
    const signature = await account.signMessage({ message });
    return JSON.stringify({ address: account.address, message, signature, ...fields });
  };
  const created = await request(ctx, '/api/v1/providers', { method: 'POST', body: await signedBody() });
  if (created.response.ok) return { ...jsonOf<ProviderRegistered>(ctx, '/api/v1/providers', created), created: true };
  const problem = parseProblem(created.response.status, created.text);
  // the gateway names the problem's code `reason` (as its other problems do); `code` is accepted too
  const code = problem.reason ?? problem.code;
  if (created.response.status !== 409 || code !== 'provider_exists' || typeof problem.provider_id !== 'string') throw new GatewayError(problem);
  const path = `/api/v1/providers/${encodeURIComponent(problem.provider_id)}`;
  const updated = await request(ctx, path, { method: 'PUT', body: await signedBody(problem.provider_id) });
  if (!updated.response.ok) throwForStatus(updated);
  return { ...jsonOf<ProviderRegistered>(ctx, path, updated), created: false };
}
