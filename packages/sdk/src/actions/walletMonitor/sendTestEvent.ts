import type { GatewayContext } from '../../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../../errors.js';
import type { TestEventQueued } from '../../types.js';
import { bearerJson } from '../internal.js';

/** Parameters of {@link sendTestEvent}. */
export interface SendTestEventParameters {
  accessToken: string | undefined;
  subscriptionId: string;
}

/** The queued test event and its `webhook_id`. */
export type SendTestEventReturnType = TestEventQueued;

/** Errors of {@link sendTestEvent}. */
export type SendTestEventErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `POST /v1/wallet-monitor/{id}/test-event`: queues a test event (`test: true`, zero hashes,
 * amount "0") through the normal delivery path. It is signed, retried and billed 0.001 USDC when
 * delivered, like any event.
 *
 * @throws {GatewayError} 401 bad token, 403 not yours, 404 unknown, 409 cancelled or expired.
 *
 * @example
 * const { webhook_id } = await sendTestEvent(ctx, { accessToken, subscriptionId })
 */
export async function sendTestEvent(ctx: GatewayContext, { accessToken, subscriptionId }: SendTestEventParameters): Promise<SendTestEventReturnType> {
  const path = `/v1/wallet-monitor/${encodeURIComponent(subscriptionId)}/test-event`;
  return bearerJson<TestEventQueued>(ctx, accessToken, 'POST', path, {});
}
