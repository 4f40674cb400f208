import type { EarlyRun } from '@acg/execution';
import { InsufficientBalanceError } from '@acg/accounts';
import type { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { header, type Context } from './context.js';
import { t } from './init.js';
import { paid, resourceUrlOf, type PaidContext, type PaidSpec } from './paid.js';
import { problem, rawError } from './problem.js';
import { type AccountAddress, authenticate, type Identity, WWW_AUTHENTICATE } from './authenticate.js';
import { requestResource } from './signInWithX.js';

export type { AccountAddress, Identity };

/**
 * The gateway's procedure builders (docs/code-style.md "Procedures built from procedures"): every route starts
 * from one of them, so authentication and payment are middleware, never copied checks, and the
 * resolver's `ctx` is typed by what the middleware added (`ctx.account`, `ctx.payment`, ...).
 */

/** No authentication: discovery, health, registry, sign-in (docs/spec-notes.md 5). */
export const publicProcedure = t.procedure;

/**
 * Middleware of a domain's routes (providers, disputes, the wallet monitor): the answer is never
 * cached (`Cache-Control: no-store`), and an error the resolver throws becomes the RFC 9457
 * problem `toProblem` maps its cause to (a `ProviderError` → its status, ...); an error it does
 * not map (undefined) passes on unchanged.
 */
export function domainErrors(toProblem: (cause: unknown) => TRPCError | undefined) {
  return t.middleware(async ({ ctx, next }) => {
    ctx.responseHeaders['Cache-Control'] = 'no-store';
    const result = await next();
    const mapped = result.ok ? undefined : toProblem(result.error.cause);
    if (mapped) throw mapped;
    return result;
  });
}

/** Context of a bearer-authenticated procedure: `account`, the wallet the token belongs to. */
export interface BearerContext {
  account: AccountAddress;
  /** The bearer token of this call (e.g. for `POST /v1/auth/revoke`). */
  token: string;
}

/**
 * Bearer authentication (docs/spec-notes.md 5; docs/decisions.md "Accounts and bearer tokens"): the resolver sees
 * `ctx.account`, the token's wallet, and `ctx.token`. Missing or invalid token → 401 problem with
 * `WWW-Authenticate`. Tokens come from Sign-In with Ethereum: `POST /v1/auth/nonce`, then `POST /v1/auth/token`.
 */
export const bearerProcedure = publicProcedure.use(authenticate()).use(async ({ ctx, next }) => {
  const { identity } = ctx;
  if (identity.kind === 'account') return next({ ctx: { account: identity.account, token: identity.token } satisfies BearerContext });
  throw problem(
    401,
    'This endpoint needs Authorization: Bearer <access_token> (sign in with POST /v1/auth/nonce and /v1/auth/token, or SIGN-IN-WITH-X from a 402).',
    {},
    WWW_AUTHENTICATE,
  );
});

/**
 * The owner check of what a payer reads ({@link payerProcedure}: executions, jobs, MCP tasks):
 * whether `account`, the signed-in wallet, is `payer`, the address that paid (case-insensitive).
 * A record that fails it is answered as an unknown one (404, "task not found").
 */
export function paidBy(account: string, payer: string | null | undefined): boolean {
  return typeof payer === 'string' && payer.toLowerCase() === account.toLowerCase();
}

/**
 * The OpenAPI fields every {@link payerProcedure} route shares: `protect` (security scheme), the
 * `SIGN-IN-WITH-X` request header and the `Authentication-Info` response header it answers.
 */
export const payerReadOpenApi = {
  protect: true,
  requestHeaders: z.object({
    'SIGN-IN-WITH-X': z.string().optional().describe('base64 JSON of the signed sign-in-with-x challenge of a 402 (x402 sign-in-with-x)'),
  }),
  responseHeaders: z.object({
    'Authentication-Info': z.string().optional().describe('after SIGN-IN-WITH-X: access_token="acg_…", token_type="Bearer", expires_in=86400'),
  }),
} as const;

/**
 * What the payer reads of what it paid for (apps/gateway README "Sign-in-with-x"): authenticated
 * as {@link bearerProcedure} (a bearer token, or `SIGN-IN-WITH-X`), but a request with neither
 * answers 402 the x402 way: `PAYMENT-REQUIRED` whose `extensions["sign-in-with-x"]` holds a fresh
 * challenge for this URL, so `wrapFetchWithSIWx` of `@x402/extensions` (or any x402 client) signs
 * in by itself. Its `accepts` names the payment network and asset with amount 0: nothing is sold
 * here, and a payment sent to this route is never taken. The resolver decides what the wallet may
 * see with {@link paidBy} (another payer's record answers 404, as an unknown one).
 */
export const payerProcedure = publicProcedure.use(authenticate()).use(async ({ ctx, next }) => {
  const { identity } = ctx;
  if (identity.kind === 'account') return next({ ctx: { account: identity.account, token: identity.token } satisfies BearerContext });
  const challenge = await ctx.services.paywall.challenge({
    resourceUrl: requestResource(ctx),
    description: 'What its payer paid for: sign in as the payer (SIGN-IN-WITH-X) or send its bearer token.',
    price: 0n,
    extensions: {},
    paymentRequiredMessage:
      'Sign in as the payer: sign the sign-in-with-x challenge of this 402 and retry with SIGN-IN-WITH-X (or Authorization: Bearer). Nothing is paid here.',
  });
  if (challenge.kind !== 'payment_required') throw problem(401, 'Sign in as the payer (SIGN-IN-WITH-X or Authorization: Bearer).', {}, WWW_AUTHENTICATE);
  throw rawError(402, { ...challenge.body, detail: challenge.paymentRequired.error }, challenge.headers);
});

/**
 * What a paid procedure declares: its `input` schema, a `prepare` step that runs after input
 * validation and before any payment (it throws problems for requests that cannot run, and returns
 * what the resolver and `price` need, e.g. the resolved capability), and the paywall's spec:
 * route name, REST path, `price` (integer USDC base units, 6 decimals) and description.
 */
export interface PaidProcedureSpec<TInput, TPrepared extends object> extends PaidSpec<TInput> {
  input: z.ZodType<TInput>;
  prepare(input: TInput, ctx: Context): TPrepared | Promise<TPrepared>;
  price(input: TInput, ctx: Context & TPrepared): bigint;
  extensions(input: TInput, ctx: Context & TPrepared): Record<string, unknown>;
  early?(input: TInput, ctx: Context & TPrepared, call: { executionId: string; payer: string }): EarlyRun | undefined;
  schemes?(input: TInput, ctx: Context & TPrepared): readonly string[];
}

/**
 * Paid per call with x402 (docs/spec-notes.md 2.9; docs/decisions.md "x402 payments"), the paywall of {@link paid} as a
 * procedure: input validation and `prepare` come first, so a bad request is refused before any
 * payment. The resolver sees `ctx.payment` (the settled payment), `ctx.operationId` and, on an
 * idempotent replay, `ctx.replay` (the stored answer; `payment` is then null) beside what
 * `prepare` returned. Errors: see {@link paid}.
 */
export function paidProcedure<TInput, TPrepared extends object>(spec: PaidProcedureSpec<TInput, TPrepared>) {
  const paywall = paid<TInput>(spec);
  return publicProcedure
    .input(spec.input)
    .use(async ({ ctx, input, next }) => next({ ctx: await spec.prepare(input, ctx) }))
    .use(async ({ ctx, input, next }) => {
      const nextPaid = (o: { ctx: PaidContext }) => next({ ctx: o.ctx });
      const result: Awaited<ReturnType<typeof nextPaid>> = await paywall({ ctx, input, next: nextPaid });
      return result;
    });
}

/** Context of a procedure paid by bearer debit or x402: {@link PaidContext}, and `account` when a bearer token paid. */
export interface BearerOrPaidContext extends PaidContext {
  account: AccountAddress | null;
}

/** What a procedure paid by bearer debit or x402 declares: the paywall's spec, `input`, `check` and the usage line `item`. */
export interface BearerOrPaidSpec<TInput> extends PaidSpec<TInput> {
  input: z.ZodType<TInput>;
  check(input: TInput, ctx: Context): void | Promise<void>;
  item: string;
}

/**
 * Pay per call either way (docs/decisions.md "Accounts and bearer tokens": "the same endpoints also accept
 * direct x402 payment per call"):
 * - with `Authorization: Bearer`, the price is debited atomically from the wallet's metered account
 *   (once per call; credited back if the call fails, durably: an open-call intent is written before
 *   the debit and the worker's sweep credits back a call that never ended); an account below the price gets 402 with the
 *   x402 challenge for this call and a pointer to `POST /v1/account/deposit`;
 * - without it, the call goes through the x402 paywall ({@link paidProcedure}).
 * `check` runs after input validation and before either payment (it throws problems, e.g. 503 when
 * the data is not ready). The resolver sees `ctx.account` (bearer; null for x402) or `ctx.payment`
 * (x402; null for bearer), and `ctx.operationId` either way. `item` names the usage line (e.g. `mev.liquidation_search`).
 */
export function bearerOrPaidProcedure<TInput>(spec: BearerOrPaidSpec<TInput>) {
  const paywall = paid<TInput>(spec);
  // a SIGN-IN-WITH-X proof signs the wallet in for this call, as its bearer token would (a request
  // paying with x402 pays; its sign-in, if any, only gets the session: `paid()`); the proof answers
  // this route's 402, whose resource is the REST path (also on /trpc)
  const signInWithX = (ctx: Context) => ((header(ctx, 'payment-signature') ?? header(ctx, 'x-payment')) ? false : resourceUrlOf(spec, ctx));
  return publicProcedure
    .input(spec.input)
    .use(async ({ ctx, input, next }) => {
      await spec.check(input, ctx);
      return next();
    })
    .use(authenticate({ signInWithX }))
    .use(async ({ ctx, input, next }) => {
      const { identity } = ctx;
      if (identity.kind !== 'account') {
        const nextPaid = (o: { ctx: PaidContext }) => next({ ctx: { ...o.ctx, account: null } satisfies BearerOrPaidContext });
        const result: Awaited<ReturnType<typeof nextPaid>> = await paywall({ ctx, input, next: nextPaid });
        return result;
      }
      const { account } = identity;
      const price = spec.price(input, ctx);
      const operationId = spec.newOperationId();
      const { ledger } = ctx.services;
      // the intent first: a process stopping anywhere from the debit to the credit-back leaves an
      // open call that the worker's recovery sweep credits back (Ledger.recoverOpenCalls)
      await ledger.openCall(account, price, spec.item, operationId);
      try {
        await ledger.debit(account, price, spec.item, operationId);
      } catch (e) {
        await ledger.closeCall(account, price, spec.item, operationId).catch(() => undefined);
        if (!(e instanceof InsufficientBalanceError)) throw e;
        const challenge = await ctx.services.paywall.challenge({
          resourceUrl: resourceUrlOf(spec, ctx),
          description: spec.description(input),
          price,
          extensions: spec.extensions(input, ctx),
        });
        if (challenge.kind !== 'payment_required') throw e;
        throw rawError(
          402,
          {
            ...challenge.body,
            detail: e.message,
            account: { address: account, balance: e.balance },
            deposit: { url: `${ctx.services.publicBaseUrl()}/v1/account/deposit`, method: 'POST' },
          },
          challenge.headers,
        );
      }
      const result = await next({ ctx: { account, payment: null, operationId } satisfies BearerOrPaidContext });
      if (!result.ok) await ledger.credit(account, price, `refund:${spec.item}`, operationId);
      await ledger.closeCall(account, price, spec.item, operationId);
      ctx.responseHeaders['Cache-Control'] = 'no-store';
      return result;
    });
}

/** The 404 of a route that does not exist in this deployment (an admin route without ADMIN_TOKEN): the same answer as an unknown path. */
function noSuchRoute(ctx: Context) {
  const path = (ctx.req.url ?? '/').split('?')[0];
  return problem(404, `No resource at ${path.slice(0, 200)}. The documented paths are listed at /openapi.json.`);
}

/**
 * Admin routes (docs/decisions.md "Providers": `Authorization: Bearer <ADMIN_TOKEN>`). Without ADMIN_TOKEN the
 * route does not exist: 404 as for an unknown path. A missing or other token → 401 with
 * `WWW-Authenticate`.
 */
export const adminProcedure = publicProcedure
  .use(async ({ ctx, next }) => {
    if (!ctx.services.config.adminToken) throw noSuchRoute(ctx);
    return next();
  })
  .use(authenticate({ admin: true, accounts: false, signInWithX: () => false }))
  .use(async ({ ctx, next }) => {
    if (ctx.identity.kind !== 'admin') throw problem(401, 'This endpoint needs Authorization: Bearer <ADMIN_TOKEN>.', {}, WWW_AUTHENTICATE);
    ctx.responseHeaders['Cache-Control'] = 'no-store';
    return next({ ctx: { admin: true as const } });
  });

/** Context of {@link bearerOrAdminProcedure}: the admin (`admin: true`, `account: null`), or a wallet's bearer token (`account`). */
export type BearerOrAdminContext = { admin: true; account: null } | { admin: false; account: AccountAddress };

/**
 * A route for a wallet's bearer token (SIWE, as {@link bearerProcedure}) or the admin token
 * (ADMIN_TOKEN, when set). The resolver decides what each may see. Missing or invalid token → 401.
 */
export const bearerOrAdminProcedure = publicProcedure.use(authenticate({ admin: true })).use(async ({ ctx, next }) => {
  const { identity } = ctx;
  if (identity.kind === 'anonymous') throw problem(401, 'This endpoint needs Authorization: Bearer <access_token> (or the admin token).', {}, WWW_AUTHENTICATE);
  ctx.responseHeaders['Cache-Control'] = 'no-store';
  if (identity.kind === 'admin') return next({ ctx: { admin: true, account: null } satisfies BearerOrAdminContext as BearerOrAdminContext });
  return next({ ctx: { admin: false, account: identity.account } satisfies BearerOrAdminContext as BearerOrAdminContext });
});
