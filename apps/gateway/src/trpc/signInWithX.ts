import { AuthError, SIGN_IN_WITH_X_HEADER, type IssuedToken } from '@acg/identity';
import type { IncomingMessage } from 'node:http';
import { header, type Context } from './context.js';
import { problem } from './problem.js';

/**
 * x402 `sign-in-with-x` as a way to a bearer session (apps/gateway README "Sign-in-with-x"): a
 * request carrying `SIGN-IN-WITH-X` (the signed challenge of a 402) is authenticated as the
 * signing wallet, exactly as `Authorization: Bearer` would authenticate it, and gets a bearer
 * token of the same kind and lifetime as Sign-In with Ethereum's (`TokenStore.issue`) in its
 * `Authentication-Info` response header (RFC 7615): `access_token="acg_…", token_type="Bearer",
 * expires_in=86400`. No second round trip: the request that signs in is answered, and later
 * requests use the token.
 */

/** A wallet signed in by sign-in-with-x for this request, and the bearer token issued to it. */
export interface SignInWithXSession {
  account: `0x${string}`;
  issued: IssuedToken;
}

const sessions = new WeakMap<IncomingMessage, Map<string, Promise<SignInWithXSession | undefined>>>();

/**
 * The public URL of the resource this request is for: the gateway's public origin and the
 * request's path (its query is no part of it). A sign-in-with-x challenge is issued for a
 * resource; its proof signs in on that resource only.
 */
export function requestResource(ctx: Pick<Context, 'req' | 'services'>): string {
  return `${ctx.services.publicBaseUrl()}${(ctx.req.url ?? '/').split('?')[0]}`;
}

/**
 * The session of this request's `SIGN-IN-WITH-X` header on `resource` (the public URL of the
 * resource whose 402 issued the challenge; default: the request's own, {@link requestResource}):
 * undefined without the header; the signing wallet and its new token otherwise (verified and its
 * nonce consumed once per request, however many middlewares ask). Throws AuthError for a refused
 * proof (`SignInWithX.verify` of @acg/accounts).
 */
export function signInWithXSession(ctx: Pick<Context, 'req' | 'services'>, resource = requestResource(ctx)): Promise<SignInWithXSession | undefined> {
  let byResource = sessions.get(ctx.req);
  if (!byResource) {
    byResource = new Map();
    sessions.set(ctx.req, byResource);
  }
  let s = byResource.get(resource);
  if (!s) {
    const value = header(ctx, SIGN_IN_WITH_X_HEADER);
    s = value
      ? ctx.services.signInWithX.verify(value, resource).then(async (account) => ({ account, issued: await ctx.services.tokens.issue(account) }))
      : Promise.resolve(undefined);
    byResource.set(resource, s);
  }
  return s;
}

/** `Authentication-Info` (RFC 7615 auth-params) announcing the session's bearer token. */
export function authenticationInfo(issued: IssuedToken): string {
  return `access_token="${issued.access_token}", token_type="${issued.token_type}", expires_in=${issued.expires_in}`;
}

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="gateway", error="invalid_token"' };

/**
 * The session of this request's `SIGN-IN-WITH-X` header, its token announced in the response's
 * `Authentication-Info`; undefined without the header. A refused proof → 401 problem naming the
 * `reason` (`wrong_domain`, `wrong_chain`, `expired`, `not_yet_valid`, `unknown_nonce`,
 * `wrong_resource`, `nonce_used`, `bad_signature`, `invalid_message`); too many contract wallet
 * checks for its address → 429 `rate_limited` with `Retry-After: 60`.
 */
export async function requireSignInWithX(ctx: Context, resource?: string): Promise<SignInWithXSession | undefined> {
  try {
    const session = await signInWithXSession(ctx, resource);
    if (session) ctx.responseHeaders['Authentication-Info'] = authenticationInfo(session.issued);
    return session;
  } catch (e) {
    // too many contract wallet checks for the address: try again in a minute (the limiter's window)
    if (e instanceof AuthError && e.code === 'rate_limited') throw problem(429, e.message, { reason: e.code }, { 'Retry-After': '60' });
    if (e instanceof AuthError) throw problem(401, e.message, { reason: e.code }, WWW_AUTHENTICATE);
    throw e;
  }
}

/**
 * As {@link requireSignInWithX}, but a refused proof is no session (undefined) rather than a 401:
 * for paid routes, where a payment must not fail because a sign-in beside it did.
 */
export async function optionalSignInWithX(ctx: Context, resource?: string): Promise<SignInWithXSession | undefined> {
  try {
    return await requireSignInWithX(ctx, resource);
  } catch {
    return undefined;
  }
}
