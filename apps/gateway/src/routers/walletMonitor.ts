import {
  WalletMonitorDeadLetters,
  WalletMonitorReplayed,
  WalletMonitorReplayRequest,
  WalletMonitorSubscription,
  WalletMonitorSubscriptionCancelled,
  WalletMonitorSubscriptionCreated,
  WalletMonitorSubscriptionRequest,
} from '@acg/schemas';
import { SubscriptionForbiddenError, SubscriptionNotFoundError, WebhookUrlError } from '@acg/wallet-monitor';
import { z } from 'zod';
import { bearer, type BearerContext } from '../trpc/bearer.js';
import type { Context } from '../trpc/context.js';
import { publicProcedure, router } from '../trpc/init.js';
import { problem } from '../trpc/problem.js';

/** Maps wallet-monitor errors to RFC 9457 problems (400 URL rules, 403 not the owner, 404 unknown id). */
function mapError(e: unknown): unknown {
  if (e instanceof WebhookUrlError) {
    return problem(400, e.message, { reason: e.reason, errors: [{ path: ['webhook_url'], message: e.message, code: e.reason }] });
  }
  if (e instanceof SubscriptionNotFoundError) return problem(404, e.message, { reason: e.reason });
  if (e instanceof SubscriptionForbiddenError) return problem(403, e.message, { reason: e.reason });
  return e;
}

/** Runs `fn` with the caller's wallet (bearer) and maps domain errors to problems. */
async function withAccount<T>(ctx: unknown, fn: (c: Context & BearerContext) => Promise<T>): Promise<T> {
  const c = ctx as Context & BearerContext;
  c.responseHeaders['Cache-Control'] = 'no-store';
  try {
    return await fn(c);
  } catch (e) {
    throw mapError(e);
  }
}

/** `{sub_id}` path parameter; any text (an id that is not `sub_` + ULID is simply unknown: 404). */
const SubIdParam = z.object({ sub_id: z.string().min(1).max(100).describe('subscription id, sub_ + ULID') });

const errors = {
  400: 'Invalid body (problem+json with errors)',
  401: 'Missing, invalid or expired bearer token',
  403: 'The subscription belongs to another account',
  404: 'Unknown subscription',
};

/**
 * The wallet monitor (SPEC 2.6, 3, 4; DESIGN "Wallet monitor"): subscriptions with Bearer auth,
 * delivery stats, cancel, and the dead-letter list with replay. Events are delivered by the
 * watchers and the delivery worker of `@acg/wallet-monitor` (the worker process).
 */
export const walletMonitorRouter = router({
  subscribe: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/v1/wallet-monitor',
        tags: ['wallet-monitor'],
        summary: 'Subscribe a webhook to transfer_in/transfer_out events of up to 1,000 addresses',
        description:
          'Events are signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) using the whsec_ secret returned here once. 0.001 USDC is debited from the metered account per delivered event. The subscription expires at expires_at and renews by 30 days while the account holds at least 0.001 USDC.',
        protect: true,
        errorResponses: { 400: errors[400], 401: errors[401] },
      },
    })
    .input(WalletMonitorSubscriptionRequest)
    .output(WalletMonitorSubscriptionCreated)
    .use(bearer)
    .mutation(({ ctx, input }) =>
      withAccount(ctx, async (c) => {
        const created = await c.services.walletMonitor.subscribe(c.account, input);
        c.responseHeaders.Location = `${c.services.publicBaseUrl()}/v1/wallet-monitor/${created.subscription_id}`;
        return created;
      }),
    ),

  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/v1/wallet-monitor/{sub_id}',
        tags: ['wallet-monitor'],
        summary: 'A subscription: status, expiry, renewals and delivery stats',
        protect: true,
        errorResponses: { 401: errors[401], 403: errors[403], 404: errors[404] },
      },
    })
    .input(SubIdParam)
    .output(WalletMonitorSubscription)
    .use(bearer)
    .query(({ ctx, input }) => withAccount(ctx, (c) => c.services.walletMonitor.get(input.sub_id, c.account))),

  cancel: publicProcedure
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
    .use(bearer)
    .mutation(({ ctx, input }) => withAccount(ctx, (c) => c.services.walletMonitor.cancel(input.sub_id, c.account))),

  deadLetters: publicProcedure
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
    .use(bearer)
    .query(({ ctx, input }) =>
      withAccount(ctx, async (c) => ({
        subscription_id: input.sub_id,
        dead_letters: (await c.services.walletMonitor.deadLetters(input.sub_id, c.account, input.limit)) as WalletMonitorDeadLetters['dead_letters'],
      })),
    ),

  replay: publicProcedure
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
    .use(bearer)
    .mutation(({ ctx, input }) =>
      withAccount(ctx, async (c) => ({
        subscription_id: input.sub_id,
        replayed: await c.services.walletMonitor.replay(input.sub_id, c.account, input.webhook_ids),
      })),
    ),
});
