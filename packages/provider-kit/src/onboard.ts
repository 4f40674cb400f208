import { ProviderChallenge, ProviderRegistered, type ProviderOfferInput, type ProviderRegistrationInput } from '@acg/schemas';
import type { LocalAccount } from 'viem';
import { toOffer, type ProviderCapability } from './define.js';
import type { Problem } from './problem.js';
import type { Provider } from './provider.js';

/**
 * The stable code of a gateway problem: its specific `reason` (e.g. `provider_exists`) first, else
 * `code`. The gateway's problems carry both, `code` being the generic class (`CONFLICT`,
 * `BAD_REQUEST`, ...): reading `code` first made a second onboard throw 409 instead of updating.
 */
export function problemCode(problem: Record<string, unknown> | undefined): string | undefined {
  const reason = problem?.reason;
  if (typeof reason === 'string') return reason;
  const code = problem?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Which request of the onboarding flow failed. */
export type OnboardingStep = 'challenge' | 'register' | 'update';

/**
 * Onboarding failed. `status` is the gateway's HTTP status (undefined when it could not be
 * reached or answered no JSON), `problem` its RFC 9457 body when there is one, and `retryable`
 * says whether the same call may succeed later (unreachable, 404 route not there yet, 408, 425,
 * 429, 5xx) or needs a change first (400 invalid offer, 401 bad signature, 409 id clash ...).
 */
export class ProviderOnboardingError extends Error {
  override name = 'ProviderOnboardingError';
  readonly shortMessage: string;
  readonly retryable: boolean;
  constructor(
    readonly step: OnboardingStep,
    message: string,
    readonly status?: number,
    readonly problem?: Partial<Problem> & Record<string, unknown>,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.shortMessage = message;
    this.retryable = status === undefined || [404, 408, 425, 429].includes(status) || status >= 500;
  }
}

/** Parameters of {@link onboard}. Give exactly one of `provider`, `capabilities` or `offers`. */
export interface OnboardParameters {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080` (a trailing `/` is ignored). */
  gatewayUrl: string;
  /** The provider's wallet: signs the challenge (EIP-191); its address is the payout address on the payment chain. */
  account: LocalAccount;
  /** The URL the gateway POSTs calls to (https; http to loopback only under the gateway's development webhook policy). It must already answer GET. */
  endpoint: string;
  /** Display name, the catalog's `provider` field: 1-64 letters, digits, space, `.`, `_`, `-`. */
  name: string;
  /** A provider from `createProvider`: its offers are registered and its signing secret is set from the answer. */
  provider?: Provider;
  /** Capabilities to offer (from `defineProviderCapability`). */
  capabilities?: readonly ProviderCapability[];
  /** Offers as the wire takes them (schema `ProviderOffer`). */
  offers?: readonly ProviderOfferInput[];
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** Per-request budget in milliseconds (default 15000). */
  timeoutMs?: number;
}

/** What {@link onboard} returns: the gateway's answer (schema `ProviderRegistered`) and whether it was a new registration (201) or an update of an existing one (200). */
export type OnboardReturnType = ProviderRegistered & { created: boolean };

/**
 * Registers a provider through the gateway's public API (docs/decisions.md "Providers"):
 * 1. `POST {gatewayUrl}/api/v1/providers/challenge {address, action: "register", name, endpoint, capabilities}`
 *    → `{message, nonce, expires_at}` (the message names the action and the SHA-256 of that body: it authorizes nothing else);
 * 2. signs `message` with EIP-191 (`account.signMessage`);
 * 3. `POST {gatewayUrl}/api/v1/providers {address, message, signature, name, endpoint, capabilities}` → 201;
 *    if the address already has a provider (409 with `reason: "provider_exists"` and `provider_id`; {@link problemCode}),
 *    gets a fresh challenge (`action: "update"`, `provider_id`) and `PUT {gatewayUrl}/api/v1/providers/{provider_id}` with the same
 *    body shape → 200, which replaces the offers and rotates the signing secret.
 *
 * With `provider`, its signing secret is set from the answer before this returns.
 *
 * @returns The registration with `signing_secret` (`whsec_...`, shown once) and `created`.
 * @throws {ProviderOnboardingError} with the failing step, status and problem (`retryable` tells whether to try again).
 * @throws {TypeError} when not exactly one of `provider`, `capabilities`, `offers` is given.
 *
 * @example
 * const registered = await onboard({ gatewayUrl: 'http://127.0.0.1:8080', account, endpoint: url, name: 'Echo Labs', provider });
 * console.log(registered.provider_id, registered.capabilities);
 */
export async function onboard(params: OnboardParameters): Promise<OnboardReturnType> {
  const sources = [params.provider, params.capabilities, params.offers].filter((s) => s !== undefined);
  if (sources.length !== 1) throw new TypeError('onboard: give exactly one of provider, capabilities or offers');
  const offers = params.provider ? params.provider.offers() : params.capabilities ? params.capabilities.map(toOffer) : [...(params.offers ?? [])];
  const base = params.gatewayUrl.replace(/\/+$/, '');
  const doFetch = params.fetch ?? globalThis.fetch;
  const timeoutMs = params.timeoutMs ?? 15_000;
  const { account } = params;

  async function send(
    step: OnboardingStep,
    method: 'POST' | 'PUT',
    path: string,
    body: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      throw new ProviderOnboardingError(step, `Could not reach the gateway at ${base} (${(cause as Error)?.message ?? cause}).`, undefined, undefined, cause);
    }
    const text = await response.text().catch(() => '');
    let json: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(text);
      json = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  const refuse = (step: OnboardingStep, what: string, r: { status: number; json: Record<string, unknown> | undefined }): never => {
    const detail = typeof r.json?.detail === 'string' ? `: ${r.json.detail}` : '';
    throw new ProviderOnboardingError(step, `${what} answered HTTP ${r.status}${detail}`, r.status, r.json);
  };

  // the challenge names the action, the provider and the SHA-256 of exactly this body: a signature authorizes only this request
  async function signedBody(step: OnboardingStep, providerId?: string): Promise<ProviderRegistrationInput> {
    const fields = { name: params.name, endpoint: params.endpoint, capabilities: offers };
    const action = step === 'update' ? 'update' : 'register';
    const r = await send(step, 'POST', '/api/v1/providers/challenge', {
      address: account.address,
      action,
      ...(providerId ? { provider_id: providerId } : {}),
      ...fields,
    });
    if (r.status !== 200 && r.status !== 201) refuse(step, 'POST /api/v1/providers/challenge', r);
    const challenge = ProviderChallenge.safeParse(r.json);
    if (!challenge.success)
      throw new ProviderOnboardingError(step, 'POST /api/v1/providers/challenge answered something other than {message, nonce, expires_at}.', r.status, r.json);
    const signature = await account.signMessage({ message: challenge.data.message });
    return { address: account.address, message: challenge.data.message, signature, ...fields };
  }

  const registered = (step: OnboardingStep, r: { status: number; json: Record<string, unknown> | undefined }) => {
    const parsed = ProviderRegistered.safeParse(r.json);
    if (!parsed.success)
      throw new ProviderOnboardingError(
        step,
        `The gateway answered HTTP ${r.status} without a valid registration (provider_id, signing_secret ...).`,
        r.status,
        r.json,
      );
    return parsed.data;
  };

  const created = await send('register', 'POST', '/api/v1/providers', await signedBody('register'));
  let result: OnboardReturnType;
  if (created.status === 201 || created.status === 200) {
    result = { ...registered('register', created), created: true };
  } else if (created.status === 409 && problemCode(created.json) === 'provider_exists' && typeof created.json?.provider_id === 'string') {
    const id = created.json.provider_id;
    const updated = await send('update', 'PUT', `/api/v1/providers/${encodeURIComponent(id)}`, await signedBody('update', id));
    if (updated.status !== 200 && updated.status !== 201) refuse('update', `PUT /api/v1/providers/${id}`, updated);
    result = { ...registered('update', updated), created: false };
  } else {
    return refuse('register', 'POST /api/v1/providers', created);
  }
  params.provider?.setSigningSecret(result.signing_secret);
  return result;
}
