/**
 * Errors of the wallet monitor (viem style: a class per case, a stable `reason`, a message that is
 * safe to show to the caller). The gateway maps them to RFC 9457 problems.
 */

export { WebhookUrlError } from '@acg/net-guard';

/** No subscription with that id; → 404. */
export class SubscriptionNotFoundError extends Error {
  override name = 'SubscriptionNotFoundError';
  readonly reason = 'unknown_subscription';
  constructor(readonly subscriptionId: string) {
    super(`No subscription ${subscriptionId}.`);
  }
}

/** The subscription belongs to another account; → 403. */
export class SubscriptionForbiddenError extends Error {
  override name = 'SubscriptionForbiddenError';
  readonly reason = 'not_owner';
  constructor(readonly subscriptionId: string) {
    super(`The subscription ${subscriptionId} belongs to another account.`);
  }
}

/** A webhook attempt did not get a 2xx answer (non-2xx status, timeout, refused connection, no balance). */
export class DeliveryAttemptError extends Error {
  override name = 'DeliveryAttemptError';
  constructor(
    /** HTTP status, 0 for a network error, null when nothing was sent (e.g. insufficient balance) */
    readonly status: number | null,
    /** short reason, e.g. `http_503`, `timeout`, `connection_refused`, `insufficient_balance` */
    readonly reason: string,
  ) {
    super(`webhook attempt failed: ${reason}`);
  }
}

/** The subscription is `cancelled` or `expired`, so it takes no test event; → 409. */
export class SubscriptionNotActiveError extends Error {
  override name = 'SubscriptionNotActiveError';
  readonly reason = 'subscription_not_active';
  constructor(
    readonly subscriptionId: string,
    readonly status: string,
  ) {
    super(`The subscription ${subscriptionId} is ${status}: only an active subscription receives events.`);
  }
}
