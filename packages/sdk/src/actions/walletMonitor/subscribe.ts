import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import type { SubscribeRequest, SubscriptionCreated } from '../../types.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link subscribe}: the subscription (docs/spec-notes.md 2.6) and the bearer token. */
export interface SubscribeParameters extends SubscribeRequest {
  accessToken: string | undefined;
}

/** `{subscription_id, expires_at (UNIX seconds), secret}`; keep `secret`, it is shown once and verifies every webhook. */
export type SubscribeReturnType = SubscriptionCreated;

/** Errors of {@link subscribe}. */
export type SubscribeErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `POST /v1/wallet-monitor` (docs/spec-notes.md 2.6, docs/decisions.md "Wallet monitor"): watch 1..1,000 addresses for
 * `transfer_in` / `transfer_out` on `ethereum`, `base`, `arbitrum`; each delivered event costs
 * 0.001 USDC from the metered account (top it up with `deposit`).
 *
 * @throws {AcgError} no token. {GatewayError} 400 invalid body or webhook URL, 401 no/expired token.
 *
 * @example
 * const { subscription_id, secret } = await subscribe(ctx, { accessToken, addresses: [me], chains: ['base'], events: ['transfer_in'], webhook_url })
 */
export async function subscribe(ctx: GatewayContext, { accessToken, ...body }: SubscribeParameters): Promise<SubscribeReturnType> {
  return bearerJson(ctx, accessToken, 'POST', '/v1/wallet-monitor', body);
}
