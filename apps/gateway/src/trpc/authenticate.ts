import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthError, readBearer } from '@acg/identity';
import { header, type Context } from './context.js';
import { t } from './init.js';
import { problem } from './problem.js';
import { requireSignInWithX } from './signInWithX.js';

/** A wallet address as the token store returns it. */
export type AccountAddress = `0x${string}`;

/**
 * Who calls, as one value for every procedure that needs a caller (apps/gateway README
 * "Authentication"): nobody (`anonymous`), the operator (`admin`, the ADMIN_TOKEN), or a wallet
 * (`account`) signed in by its bearer token (Sign-In with Ethereum) or by a `SIGN-IN-WITH-X` proof
 * (x402 sign-in-with-x, which issues a bearer token of the same kind: `token`).
 */
export type Identity =
  | { kind: 'anonymous' }
  | { kind: 'admin' }
  | { kind: 'account'; account: AccountAddress; token: string; via: 'bearer' | 'sign-in-with-x' };

/** What a procedure accepts as its caller; every field optional. */
export interface AuthenticateOptions {
  /** The ADMIN_TOKEN (when set) is `admin` rather than a wallet's token. Default false. */
  admin?: boolean;
  /** A bearer token that is not the admin token is resolved to its wallet (a wrong one → 401). Default true; false: it is `anonymous`. */
  accounts?: boolean;
  /**
   * Without a bearer token, the `SIGN-IN-WITH-X` proof is read for this resource (its public URL:
   * the resource whose 402 issued the challenge; undefined → the request's own). `false`: it is not
   * read (e.g. a request that pays with x402: its sign-in only gets the session, `paid()`).
   */
  signInWithX?: (ctx: Context) => string | false | undefined;
}

export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="gateway", error="invalid_token"' };

/** Whether `token` is the admin token (ADMIN_TOKEN; never when unset), compared in constant time. */
function isAdminToken(ctx: Context, token: string): boolean {
  const admin = ctx.services.config.adminToken;
  if (!admin) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(admin), digest(token));
}

/**
 * The caller of `ctx`'s request (the one identity step: `Authorization: Bearer`, read by
 * `readBearer` of @acg/identity, then `SIGN-IN-WITH-X`). Throws problems: a malformed
 * `Authorization` → 401 with `WWW-Authenticate`; an unknown, expired or revoked token → 401 naming
 * the `reason`; a refused sign-in-with-x proof → 401 (`reason`), or 429 `rate_limited`.
 */
export async function identify(ctx: Context, o: AuthenticateOptions = {}): Promise<Identity> {
  const bearer = readBearer(header(ctx, 'authorization'));
  if (bearer.kind === 'malformed') throw problem(401, 'Authorization must be "Bearer <access_token>".', {}, WWW_AUTHENTICATE);
  if (bearer.kind === 'bearer') {
    if (o.admin && isAdminToken(ctx, bearer.token)) return { kind: 'admin' };
    if (o.accounts === false) return { kind: 'anonymous' };
    try {
      return { kind: 'account', account: await ctx.services.tokens.resolve(bearer.token), token: bearer.token, via: 'bearer' };
    } catch (e) {
      if (e instanceof AuthError) throw problem(401, e.message, { reason: e.code }, WWW_AUTHENTICATE);
      throw e;
    }
  }
  const resource = o.signInWithX ? o.signInWithX(ctx) : undefined;
  if (resource === false) return { kind: 'anonymous' };
  const session = await requireSignInWithX(ctx, resource);
  return session ? { kind: 'account', account: session.account, token: session.issued.access_token, via: 'sign-in-with-x' } : { kind: 'anonymous' };
}

/** The `authenticate` middleware: the resolver (and the next middleware) sees `ctx.identity` ({@link identify}). */
export function authenticate(o: AuthenticateOptions = {}) {
  return t.middleware(async ({ ctx, next }) => next({ ctx: { identity: await identify(ctx, o) } }));
}
