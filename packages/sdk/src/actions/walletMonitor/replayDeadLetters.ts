import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link replayDeadLetters}. */
export interface ReplayDeadLettersParameters {
  accessToken: string | undefined;
  subscriptionId: string;
  /** `msg_...` ids to queue again (default: all dead letters). */
  webhookIds?: string[];
}

/** The webhook ids queued again. */
export type ReplayDeadLettersReturnType = string[];

/** Errors of {@link replayDeadLetters}. */
export type ReplayDeadLettersErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `POST /v1/wallet-monitor/{id}/dead-letters/replay`: queues dead letters for delivery again
 * (each delivery is billed as usual).
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown.
 *
 * @example
 * const replayed = await replayDeadLetters(ctx, { accessToken, subscriptionId })
 */
export async function replayDeadLetters(
  ctx: GatewayContext,
  { accessToken, subscriptionId, webhookIds }: ReplayDeadLettersParameters,
): Promise<ReplayDeadLettersReturnType> {
  const path = `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}/dead-letters/replay`;
  return (await bearerJson<{ replayed: string[] }>(ctx, accessToken, 'POST', path, webhookIds ? { webhook_ids: webhookIds } : {})).replayed;
}
