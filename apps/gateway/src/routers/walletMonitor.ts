import {
  WalletMonitorDeadLetters,
  WalletMonitorDeliveries,
  WalletMonitorReplayed,
  WalletMonitorReplayRequest,
  WalletMonitorSubscription,
  WalletMonitorSubscriptionCancelled,
  WalletMonitorSubscriptionCreated,
  WalletMonitorSubscriptionRequest,
  WalletMonitorTestEventQueued,
} from '@acg/schemas';
import { WebhookUrlError } from '@acg/net-guard';
import { ATTEMPT_LOG_LENGTH, SubscriptionForbiddenError, SubscriptionNotActiveError, SubscriptionNotFoundError } from '@acg/wallet-monitor';
import type { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { router } from '../trpc/init.js';
import { bearerProcedure, domainErrors } from '../trpc/procedures.js';
import { problem } from '../trpc/problem.js';

/** The RFC 9457 problem of a wallet-monitor error (400 URL rules, 403 not the owner, 404 unknown id, 409 not active); undefined for any other error. */
function domainProblem(e: unknown): TRPCError | undefined {
  if (e instanceof WebhookUrlError) {
    return problem(400, e.message, { reason: e.reason, errors: [{ path: ['webhook_url'], message: e.message, code: e.reason }] });
  }
  if (e instanceof SubscriptionNotFoundError) return problem(404, e.message, { reason: e.reason });
  if (e instanceof SubscriptionForbiddenError) return problem(403, e.message, { reason: e.reason });
  if (e instanceof SubscriptionNotActiveError) return problem(409, e.message, { reason: e.reason, subscription_status: e.status });
  return undefined;
}

/**
 * The wallet monitor's procedures: bearer-authenticated (`ctx.account`), never cached, with
 * wallet-monitor errors mapped to problems.
 */
const walletMonitorProcedure = bearerProcedure.use(domainErrors(domainProblem));

/** `{sub_id}` path parameter; any text (an id that is not `sub_` + ULID is simply unknown: 404). */
const SubIdParam = z.object({ sub_id: z.string().min(1).max(100).describe('subscription id, sub_ + ULID') });

const errors = {
  400: 'Invalid body (problem+json with errors)',
  401: 'Missing, invalid or expired bearer token',
  403: 'The subscription belongs to another account',
  404: 'Unknown subscription',
};

/**
 * The wallet monitor (docs/spec-notes.md 2.6, 3, 4; docs/decisions.md "Wallet monitor"): subscriptions with Bearer auth,
 * delivery stats, cancel, and the dead-letter list with replay. Events are delivered by the
 * watchers and the delivery worker of `@acg/wallet-monitor` (the worker process).
 */
export const walletMonitorRouter = router({
  subscribe: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/wallet-monitor',
        tags: ['wallet-monitor'],
        summary: 'Subscribe a webhook to transfer_in/transfer_out events of up to 1,000 addresses',
        description:
          'Events are signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) using the whsec_ secret returned here once. 0.001 USDC is debited from the metered account per delivered event. ' +
          'confirmations (0..64, default 0) holds each event until that many blocks are mined on top of its block; an event reorged out before then is never delivered. ' +
          'A delivered event whose transfer a reorg removes is followed by the same event with removed: true and original_webhook_id (its own webhook-id, signed and retried alike, not billed), and the original 0.001 USDC is credited back. ' +
          'The subscription expires at expires_at and renews by 30 days while the account holds at least 0.001 USDC.',
        protect: true,
        errorResponses: { 400: errors[400], 401: errors[401] },
      },
    })
    .input(WalletMonitorSubscriptionRequest)
    .output(WalletMonitorSubscriptionCreated)
    .mutation(async ({ ctx, input }) => {
      const created = await ctx.services.walletMonitor.subscribe(ctx.account, input);
      ctx.responseHeaders.Location = `${ctx.services.publicBaseUrl()}/v1/wallet-monitor/${created.subscription_id}`;
      return created;
    }),

  get: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/wallet-monitor/{sub_id}',
        tags: ['wallet-monitor'],
        summary: 'A subscription: status, expiry, renewals, delivery stats and last_error',
        description:
          'last_error says why the most recent delivery attempt failed: a machine code (insufficient_balance when the metered account cannot pay the 0.001 USDC of an event and nothing was sent; http_<status>, timeout, connection_refused, network_error, non_public_address) and a human message; null when nothing failed since the last delivery.',
        protect: true,
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam)
    .output(WalletMonitorSubscription)
    .query(({ ctx, input }) => ctx.services.walletMonitor.get(input.sub_id, ctx.account)),

  cancel: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/wallet-monitor/{sub_id}/cancel',
        tags: ['wallet-monitor'],
        summary: 'Cancel a subscription (owner only; idempotent); queued events are dropped, not delivered or billed',
        protect: true,
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam)
    .output(WalletMonitorSubscriptionCancelled)
    .mutation(({ ctx, input }) => ctx.services.walletMonitor.cancel(input.sub_id, ctx.account)),

  deadLetters: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/wallet-monitor/{sub_id}/dead-letters',
        tags: ['wallet-monitor'],
        summary: 'Events that exhausted the retry schedule (about 27 h), oldest first',
        protect: true,
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam.extend({ limit: z.coerce.number().int().min(1).max(1000).default(1000) }))
    .output(WalletMonitorDeadLetters)
    .query(async ({ ctx, input }) => ({
      subscription_id: input.sub_id,
      dead_letters: await ctx.services.walletMonitor.deadLetters(input.sub_id, ctx.account, input.limit),
    })),

  deliveries: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/wallet-monitor/{sub_id}/deliveries',
        tags: ['wallet-monitor'],
        summary: `The most recent delivery attempts (the last ${ATTEMPT_LOG_LENGTH} are kept), newest first, with outcome, HTTP status and error`,
        protect: true,
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam.extend({ limit: z.coerce.number().int().min(1).max(ATTEMPT_LOG_LENGTH).default(ATTEMPT_LOG_LENGTH) }))
    .output(WalletMonitorDeliveries)
    .query(async ({ ctx, input }) => ({
      subscription_id: input.sub_id,
      deliveries: await ctx.services.walletMonitor.deliveryAttempts(input.sub_id, ctx.account, input.limit),
    })),

  testEvent: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/wallet-monitor/{sub_id}/test-event',
        tags: ['wallet-monitor'],
        summary: 'Queue a test event (test: true) through the normal delivery path: signed, retried, dead-lettered and billed like any event',
        description:
          'The payload has a real event\'s shape (the subscription\'s first event type, chain and address; zero hashes, block 0, amount "0", native ETH) plus test: true, and a fresh webhook-id. It is billed 0.001 USDC when delivered, like any event, so an empty metered account shows last_error insufficient_balance. Answers 202 with the queued event.',
        protect: true,
        successDescription: '202 Accepted: the test event is queued',
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404], 409: 'The subscription is cancelled or expired' },
      },
    })
    .input(SubIdParam)
    .output(WalletMonitorTestEventQueued)
    .mutation(async ({ ctx, input }) => {
      const queued = await ctx.services.walletMonitor.sendTestEvent(input.sub_id, ctx.account);
      ctx.response.status = 202;
      return queued;
    }),

  replay: walletMonitorProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/wallet-monitor/{sub_id}/dead-letters/replay',
        tags: ['wallet-monitor'],
        summary: 'Queue dead letters again (all, or the given webhook_ids); each keeps its webhook-id',
        protect: true,
        errorResponses: { 400: errors[400], 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam.extend(WalletMonitorReplayRequest.shape))
    .output(WalletMonitorReplayed)
    .mutation(async ({ ctx, input }) => ({
      subscription_id: input.sub_id,
      replayed: await ctx.services.walletMonitor.replay(input.sub_id, ctx.account, input.webhook_ids),
    })),
});
