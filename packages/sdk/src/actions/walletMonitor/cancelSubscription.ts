import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link cancelSubscription}. */
export interface CancelSubscriptionParameters {
  accessToken: string | undefined;
  subscriptionId: string;
}

/** `{subscription_id, status: "cancelled", cancelled_at}` (UNIX seconds). */
export interface CancelSubscriptionReturnType {
  subscription_id: string;
  status: 'cancelled';
  cancelled_at: number;
}

/** Errors of {@link cancelSubscription}. */
export type CancelSubscriptionErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `POST /v1/wallet-monitor/{id}/cancel` (idempotent): no more deliveries or charges.
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown.
 *
 * @example
 * await cancelSubscription(ctx, { accessToken, subscriptionId })
 */
export async function cancelSubscription(
  ctx: GatewayContext,
  { accessToken, subscriptionId }: CancelSubscriptionParameters,
): Promise<CancelSubscriptionReturnType> {
  return bearerJson(ctx, accessToken, 'POST', `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}/cancel`, {});
}
