import { accountOf, bearerIdentity, type AccountAddress, type BearerOptions, type Identity } from '../caller.js';
import { header, type Context } from './context.js';
import { t } from './init.js';
import { problem } from './problem.js';
import { requireSignInWithX, signInWithXSession } from './signInWithX.js';

export { accountOf, type AccountAddress, type Identity };

/** What a procedure accepts as its caller (`admin`, `accounts`: {@link BearerOptions}; a wrong token → 401); every field optional. */
export interface AuthenticateOptions extends BearerOptions {
  /**
   * Without a bearer token, the `SIGN-IN-WITH-X` proof is read for this resource (its public URL:
   * the resource whose 402 issued the challenge; undefined → the request's own). `false`: it is not
   * read (e.g. a request that pays with x402: its sign-in only gets the session, `paid()`).
   */
  signInWithX?: (ctx: Context) => string | false | undefined;
  /**
   * For a request that pays (x402): a credential never blocks it. A malformed `Authorization`, an
   * unknown, expired or revoked token, or a token store that does not answer is ignored (the
   * `SIGN-IN-WITH-X` proof is read next), a refused sign-in-with-x proof is no caller (`anonymous`),
   * never a 401/429; and a sign-in-with-x session is not
   * announced here (no `Authentication-Info`: the paid route announces it after the answer is
   * stored, never with it). Default false.
   */
  lenient?: boolean;
}

const ANONYMOUS: Identity = { kind: 'anonymous' };

export const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="gateway", error="invalid_token"' };

/**
 * The caller of `ctx`'s request, the one identity step of every procedure that needs a caller and
 * of the paid routes' payer proof: `Authorization: Bearer` (`bearerIdentity` of `../caller.ts`:
 * `readBearer` of @acg/identity, then the token store), else `SIGN-IN-WITH-X` for the resource `o.signInWithX`
 * names. Throws problems (none with `o.lenient`): a malformed `Authorization` → 401 with
 * `WWW-Authenticate`; an unknown, expired or revoked token → 401 naming the `reason`; a refused
 * sign-in-with-x proof → 401 (`reason`), or 429 `rate_limited`.
 */
export async function identify(ctx: Context, o: AuthenticateOptions = {}): Promise<Identity> {
  const byBearer = await bearerIdentity(ctx.services, header(ctx, 'authorization'), o).catch((e: unknown) => {
    if (o.lenient) return undefined;
    throw e;
  });
  if (byBearer?.kind === 'refused') {
    // lenient: the refused credential is ignored, and a sign-in-with-x proof beside it may still name the caller
    if (!o.lenient) throw problem(401, byBearer.detail, byBearer.reason ? { reason: byBearer.reason } : {}, WWW_AUTHENTICATE);
  } else if (byBearer) return byBearer;
  const resource = o.signInWithX ? o.signInWithX(ctx) : undefined;
  if (resource === false) return ANONYMOUS;
  // lenient (a paying request): the session is only read, and announced by the paid route after its answer is stored
  const session = o.lenient ? await signInWithXSession(ctx, resource).catch(() => undefined) : await requireSignInWithX(ctx, resource);
  return session ? { kind: 'account', account: session.account, token: session.issued.access_token, via: 'sign-in-with-x' } : ANONYMOUS;
}

/** The `authenticate` middleware: the resolver (and the next middleware) sees `ctx.identity` ({@link identify}). */
export function authenticate(o: AuthenticateOptions = {}) {
  return t.middleware(async ({ ctx, next }) => next({ ctx: { identity: await identify(ctx, o) } }));
}
