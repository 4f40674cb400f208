import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import type { DeadLetter } from '../../types.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link getDeadLetters}. */
export interface GetDeadLettersParameters {
  accessToken: string | undefined;
  subscriptionId: string;
  /** How many, oldest first (gateway default and bound apply). */
  limit?: number;
}

/** Events that exhausted their delivery retries, oldest first. */
export type GetDeadLettersReturnType = DeadLetter[];

/** Errors of {@link getDeadLetters}. */
export type GetDeadLettersErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `GET /v1/wallet-monitor/{id}/dead-letters`.
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown.
 *
 * @example
 * const letters = await getDeadLetters(ctx, { accessToken, subscriptionId, limit: 10 })
 */
export async function getDeadLetters(ctx: GatewayContext, { accessToken, subscriptionId, limit }: GetDeadLettersParameters): Promise<GetDeadLettersReturnType> {
  const path = `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}/dead-letters${limit ? `?limit=${limit}` : ''}`;
  return (await bearerJson<{ dead_letters: DeadLetter[] }>(ctx, accessToken, 'GET', path)).dead_letters;
}
