import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { problemDetails, type Problem } from '../trpc/problem.js';

/**
 * MCP tool results (`CallToolResult`) of the gateway: structured results with their JSON in
 * `content[0].text` (MCP: a tool returning structured content should also return it serialized),
 * errors as `isError` with an RFC 9457 problem as text (docs/decisions.md "Errors": the same body REST would
 * answer), and x402's PaymentRequired exactly as x402 transports-v2/mcp.md says.
 */

/** `_meta` key of the settlement a paid tool call carries (x402 transports-v2/mcp.md). */
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** `_meta` key of the PaymentPayload a client sends with a paid tool call. */
export const PAYMENT_META = 'x402/payment';

/** A successful result: `structuredContent` and the same JSON as text; optional `_meta`. */
export function toolResult(structured: Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, ...(meta ? { _meta: meta } : {}) };
}

/** A tool error carrying an RFC 9457 problem as its text (no `structuredContent`, which the tool's output schema would have to admit). */
export function problemResult(body: Problem | Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], ...(meta ? { _meta: meta } : {}) };
}

/** {@link problemResult} of a new problem (`status`, `detail`, extension members such as `reason` or `errors`). */
export function toolError(status: number, detail: string, extensions: Record<string, unknown> = {}): CallToolResult {
  return problemResult(problemDetails(status, detail, extensions));
}

/**
 * A paid tool called without a payment, or with one refused (x402 transports-v2/mcp.md "Payment
 * Required Signaling"): `isError: true`, `structuredContent` = the `PaymentRequired` (with `reason`,
 * the stable code, when a payment was refused), `content[0].text` = `{"x402/error": {code: 402,
 * message, data: PaymentRequired}}`.
 */
export function paymentRequiredResult(paymentRequired: PaymentRequired, reason?: string): CallToolResult {
  const data: Record<string, unknown> = reason ? { ...paymentRequired, reason } : { ...paymentRequired };
  const message = paymentRequired.error ?? 'Payment required';
  return {
    isError: true,
    structuredContent: data,
    content: [{ type: 'text', text: JSON.stringify({ 'x402/error': { code: 402, message, data } }) }],
  };
}

/** The `_meta` of a paid call's answer: the settlement (`{success, transaction, network, payer}`) when the payment settled. */
export function settlementMeta(settle: SettleResponse | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...extra, ...(settle ? { [PAYMENT_RESPONSE_META]: settle } : {}) };
}
