import { AuthError, InsufficientBalanceError } from '@acg/accounts';
import { header, type Context } from './context.js';
import { paid, type PaidContext, type PaidSpec } from './paid.js';
import { problem, rawError } from './problem.js';

/** Context of a bearer-authenticated procedure: the wallet the token belongs to. */
export interface BearerContext {
  account: `0x${string}`;
}

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="gateway", error="invalid_token"' };

/** Reads `Authorization: Bearer <token>`; undefined when absent. Throws 401 problem when malformed. */
function bearerToken(ctx: Context): string | undefined {
  const h = header(ctx, 'authorization');
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw problem(401, 'Authorization must be "Bearer <access_token>".', {}, WWW_AUTHENTICATE);
  return m[1];
}

async function resolveAccount(ctx: Context, token: string): Promise<`0x${string}`> {
  try {
    return await ctx.services.tokens.resolve(token);
  } catch (e) {
    if (e instanceof AuthError) throw problem(401, e.message, { reason: e.code }, WWW_AUTHENTICATE);
    throw e;
  }
}

/**
 * Bearer authentication (SPEC 5; DESIGN "Accounts and bearer tokens"): `.use(bearer)` makes
 * `ctx.account` the token's wallet. Missing or invalid token → 401 problem with `WWW-Authenticate`.
 * Tokens come from Sign-In with Ethereum: `POST /v1/auth/nonce`, then `POST /v1/auth/token`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function bearer(opts: { ctx: Context; next: (o?: any) => Promise<any> }) {
  const token = bearerToken(opts.ctx);
  if (!token) throw problem(401, 'This endpoint needs Authorization: Bearer <access_token> (sign in with POST /v1/auth/nonce and /v1/auth/token).', {}, WWW_AUTHENTICATE);
  return opts.next({ ctx: { account: await resolveAccount(opts.ctx, token) } satisfies BearerContext });
}

/**
 * Pay per call either way (DESIGN "Accounts and bearer tokens": "the same endpoints also accept
 * direct x402 payment per call"):
 * - with `Authorization: Bearer`, the price is debited atomically from the wallet's metered account
 *   (once per call; credited back if the call fails); an account below the price gets 402 with the
 *   x402 challenge for this call and a pointer to `POST /v1/account/deposit`;
 * - without it, the call goes through the x402 paywall ({@link paid}).
 * The resolver sees `ctx.account` (bearer) or `ctx.payment` (x402), and `ctx.operationId` either way.
 * `item` names the usage line (e.g. `mev.liquidation_search`).
 */
export function bearerOrPaid<I>(spec: PaidSpec<I> & { item: string }) {
  const paywalled = paid(spec);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return async (opts: { ctx: Context; input: I; next: (o?: any) => Promise<any> }) => {
    const token = bearerToken(opts.ctx);
    if (!token) return paywalled(opts);
    const { ctx, input } = opts;
    const account = await resolveAccount(ctx, token);
    const price = spec.price(input, ctx);
    const operationId = spec.newOperationId();
    try {
      await ctx.services.ledger.debit(account, price, spec.item, operationId);
    } catch (e) {
      if (!(e instanceof InsufficientBalanceError)) throw e;
      const challenge = ctx.services.paywall.challenge({
        resourceUrl: `${ctx.services.publicBaseUrl()}${spec.path}`,
        description: spec.description(input),
        price,
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
    const result = await opts.next({ ctx: { account, payment: null, operationId } satisfies BearerContext & PaidContext });
    if (!result.ok) await ctx.services.ledger.credit(account, price, `refund:${spec.item}`, operationId);
    ctx.responseHeaders['Cache-Control'] = 'no-store';
    return result;
  };
}
