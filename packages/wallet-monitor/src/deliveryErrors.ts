import type { WalletMonitorDeliveryError } from '@acg/schemas';

/**
 * Human sentences for the short reasons of failed delivery attempts (`DeliveryAttemptError.reason`,
 * a dead letter's `last_error`, a subscription's `last_error.code`). The codes are the machine
 * interface; these sentences are what the JSON's `message` and the subscription page show.
 */

/** `insufficient_balance`: the attempt was not sent because the owner's metered account could not pay the event. */
export const INSUFFICIENT_BALANCE = 'insufficient_balance';

const MESSAGES: Record<string, string> = {
  [INSUFFICIENT_BALANCE]:
    "Nothing was sent: the owner's metered account holds less than the 0.001 USDC one event costs. Deposit with POST /v1/account/deposit; events still queued are retried on the schedule, and dead letters can be replayed.",
  timeout: 'The webhook URL did not answer within 10 seconds.',
  connection_refused: 'The webhook host refused the connection: nothing listens on that port.',
  network_error: 'The connection to the webhook URL failed before an HTTP answer arrived (reset, DNS or TLS error).',
  non_public_address:
    'The webhook host resolved to an address the delivery rules refuse (private, loopback or link-local in production). Point the subscription at a public https URL.',
  invalid_url: 'The stored webhook URL cannot be used. Create a new subscription with a valid https URL.',
  internal_error: 'The gateway could not finish the attempt (an internal error was logged). The event was kept as a dead letter: replay it.',
};

/**
 * One or two sentences that explain a failed attempt's `code` (`http_<status>`, `timeout`,
 * `insufficient_balance`, ...) and, where the owner can act, what to do. A failed attempt is
 * retried on the schedule until the last one, then dead-lettered; the sentences hold in both
 * cases. Unknown codes get a generic sentence naming the code.
 *
 * @example
 * deliveryErrorMessage('http_503') // "The webhook URL answered HTTP 503 instead of a 2xx status. ..."
 */
export function deliveryErrorMessage(code: string): string {
  const known = MESSAGES[code];
  if (known) return known;
  const http = /^http_(\d{3})$/.exec(code);
  if (http) {
    const status = Number(http[1]);
    const redirect = status >= 300 && status < 400 ? ' Redirects are not followed: use the final URL.' : '';
    return `The webhook URL answered HTTP ${status} instead of a 2xx status.${redirect}`;
  }
  return `The attempt failed (${code}).`;
}

/** Fields of the stats hash that hold the last failed attempt (cleared by a later delivery). */
export const LAST_ERROR_FIELDS = ['last_error_code', 'last_error_status', 'last_error_at'] as const;

/**
 * The `last_error` of a subscription from its stats hash (`last_error_code`, `last_error_status`,
 * `last_error_at`): code, human message, HTTP status (null when nothing was sent) and time; null
 * when no attempt failed since the last delivery.
 */
export function lastErrorOf(stats: Record<string, string>): WalletMonitorDeliveryError | null {
  const code = stats.last_error_code;
  if (!code) return null;
  const status = stats.last_error_status;
  return {
    code,
    message: deliveryErrorMessage(code),
    status: status === undefined || status === '' ? null : Number(status),
    at: stats.last_error_at ?? new Date(0).toISOString(),
  };
}
