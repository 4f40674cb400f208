import { markChannelsSeen } from '@acg/channels';
import { PAYMENT_HEADERS } from '@acg/payments';
import { ProblemError } from '@acg/schemas';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { z } from 'zod';
import { resourceUrl } from '../paidRoute/paidCall.js';
import { header } from '../trpc/context.js';
import { router } from '../trpc/init.js';
import { publicProcedure } from '../trpc/procedures.js';
import { rawError, trpcErrorOf } from '../trpc/problem.js';

/** Path of the cooperative refund resource of x402 `batch-settlement` channels (the URL the official client's `refund(url)` takes). */
export const CHANNEL_REFUND_PATH = '/api/v1/channels/refund';

/** The answer of a cooperative refund: the settle response's essentials (USDC base units). */
export const ChannelRefunded = z.object({
  channel_id: z.string().describe('the channel (bytes32)'),
  payer: z.string(),
  refunded: z.string().describe('USDC base units sent back to the payer'),
  transaction: z.string().describe('the claim-and-refund transaction on the payment chain'),
});

/**
 * `GET /api/v1/channels/refund` (docs/decisions.md "batch-settlement": cooperative refunds): the resource
 * through which an x402 `batch-settlement` client asks for the unspent part of its channel back (scheme spec
 * "Refund Payload"; the official client's `refund(url)` probes it for the 402, then sends the refund payload
 * in PAYMENT-SIGNATURE). Nothing runs and nothing is charged: `Paywall.channelRefund` verifies the refund and
 * the facilitator claims the channel's outstanding voucher and refunds the rest in one transaction.
 */
export const channelsRouter = router({
  refund: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: CHANNEL_REFUND_PATH,
        tags: ['execute'],
        summary: 'Cooperative refund of an x402 batch-settlement channel (the unspent deposit back to its payer)',
        description:
          "Offered when the operator accepts x402 `batch-settlement` (PAYMENT_SCHEMES). Without payment: 402 whose PAYMENT-REQUIRED offers `batch-settlement` alone (the channel parameters: payTo, receiverAuthorizer, withdrawDelay). With PAYMENT-SIGNATURE carrying a batch-settlement `refund` payload (a zero-charge voucher at the channel's charged total, optional `amount` in base units): the gateway's facilitator claims what the channel was charged and refunds the rest of its escrow (or `amount`) to the payer in one transaction; the answer carries PAYMENT-RESPONSE (the official settle response: `transaction`, refunded `amount`, `extra.channelState`). Refusals are 402 with the x402 reason (`invalid_batch_settlement_evm_cumulative_amount_mismatch` with the corrective channel state, `invalid_batch_settlement_evm_refund_no_balance`, `invalid_batch_settlement_evm_channel_busy`, `invalid_batch_settlement_evm_payload_type` for a voucher or deposit).",
        requestHeaders: z.object({ 'PAYMENT-SIGNATURE': z.string().optional().describe('base64 JSON x402 PaymentPayload (v2) of type refund') }),
        responseHeaders: z.object({ 'PAYMENT-RESPONSE': z.string().describe('base64 JSON x402 SettleResponse') }),
        errorResponses: {
          402: 'Payment required (the batch-settlement requirements), or the refund refused with its x402 reason',
          404: 'batch-settlement is not accepted by this gateway',
          503: 'The payment chain or the facilitator is unavailable',
        },
      },
    })
    .input(z.object({}).optional())
    .output(ChannelRefunded)
    .query(async ({ ctx }) => {
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      const r = await ctx.services.paywall
        .channelRefund({
          resourceUrl: resourceUrl(ctx.services, CHANNEL_REFUND_PATH),
          description: 'Cooperative refund of an x402 batch-settlement channel',
          // the requirements only carry the channel's parameters: nothing is charged here
          price: 1n,
          extensions: {},
          paymentHeaders: Object.fromEntries(PAYMENT_HEADERS.map((n) => [n, header(ctx, n)])),
        })
        .catch((e: unknown) => {
          throw e instanceof ProblemError ? trpcErrorOf(e) : e;
        });
      if (r.kind !== 'refunded') throw rawError(402, { ...r.response.body }, r.response.headers);
      // the refund claimed what the channel was charged: the worker's passes settle it, even if no channel is left in storage
      await markChannelsSeen(ctx.services.redis, ctx.services.keys);
      const s = r.settlement;
      ctx.responseHeaders['PAYMENT-RESPONSE'] = encodePaymentResponseHeader(s);
      const state = (s.extra?.channelState ?? {}) as { channelId?: string };
      return { channel_id: String(state.channelId ?? ''), payer: String(s.payer ?? ''), refunded: String(s.amount ?? ''), transaction: s.transaction };
    }),
});
