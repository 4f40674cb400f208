import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import type { DeliveryAttempt } from '../../types.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link getDeliveries}. */
export interface GetDeliveriesParameters {
  accessToken: string | undefined;
  subscriptionId: string;
  /** How many, newest first (the gateway keeps the last 100). */
  limit?: number;
}

/** The most recent delivery attempts, newest first. */
export type GetDeliveriesReturnType = DeliveryAttempt[];

/** Errors of {@link getDeliveries}. */
export type GetDeliveriesErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `GET /v1/wallet-monitor/{id}/deliveries`: each attempt's outcome (`delivered`, `failed`,
 * `dead_lettered`, `dropped`), HTTP status and error (`code` and a human `message`).
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown.
 *
 * @example
 * const attempts = await getDeliveries(ctx, { accessToken, subscriptionId, limit: 20 })
 */
export async function getDeliveries(ctx: GatewayContext, { accessToken, subscriptionId, limit }: GetDeliveriesParameters): Promise<GetDeliveriesReturnType> {
  const path = `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}/deliveries${limit ? `?limit=${limit}` : ''}`;
  return (await bearerJson<{ deliveries: DeliveryAttempt[] }>(ctx, accessToken, 'GET', path)).deliveries;
}
