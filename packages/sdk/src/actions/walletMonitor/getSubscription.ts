import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import type { Subscription } from '../../types.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link getSubscription}. */
export interface GetSubscriptionParameters {
  accessToken: string | undefined;
  /** `sub_` + ULID */
  subscriptionId: string;
}

/** Status, expiry (UNIX seconds) and delivery stats (`billed`: integer USDC base units). */
export type GetSubscriptionReturnType = Subscription;

/** Errors of {@link getSubscription}. */
export type GetSubscriptionErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `GET /v1/wallet-monitor/{id}`.
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown.
 *
 * @example
 * const sub = await getSubscription(ctx, { accessToken, subscriptionId })
 */
export async function getSubscription(ctx: GatewayContext, { accessToken, subscriptionId }: GetSubscriptionParameters): Promise<GetSubscriptionReturnType> {
  return bearerJson(ctx, accessToken, 'GET', `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}`);
}
