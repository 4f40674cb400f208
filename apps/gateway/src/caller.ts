import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthError, readBearer } from '@acg/identity';
import type { Services } from './services.js';

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

/**
 * What an `Authorization` header proves: an {@link Identity}, or `refused` with a sentence for
 * people (`detail`) and, for a token the store refused, its `reason` (`AuthError.code`:
 * `unknown_token`, `expired`, ...). Each edge answers a refusal its own way (a 401 problem, an
 * `invalid` viewer or task caller, no caller for a paying request).
 */
export type BearerIdentity = Identity | { kind: 'refused'; detail: string; reason?: string };

/** Which identities a bearer token may prove; every field optional. */
export interface BearerOptions {
  /** The ADMIN_TOKEN (when set) is `admin` rather than a wallet's token. Default false. */
  admin?: boolean;
  /** A bearer token that is not the admin token is resolved to its wallet. Default true; false: it is `anonymous`. */
  accounts?: boolean;
}

/** Whether `token` is the admin token (ADMIN_TOKEN; never when unset), compared in constant time. */
function isAdminToken(services: Pick<Services, 'config'>, token: string): boolean {
  const admin = services.config.adminToken;
  if (!admin) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(admin), digest(token));
}

/**
 * The Bearer step of the one identity step (apps/gateway README "Authentication"), free of any
 * transport: REST and /trpc (`identify`), MCP tools and tasks, and the signed-in pages call it with
 * the request's `Authorization` header value. `readBearer` of @acg/identity (the one parser) reads
 * it; the token store resolves the token. Returns undefined without the header; `refused` for a
 * malformed header or a token the store refuses (AuthError). Throws what the token store throws
 * otherwise (e.g. Redis unavailable).
 */
export async function bearerIdentity(
  services: Pick<Services, 'config' | 'tokens'>,
  authorization: string | undefined,
  o: BearerOptions = {},
): Promise<BearerIdentity | undefined> {
  const bearer = readBearer(authorization);
  if (bearer.kind === 'none') return undefined;
  if (bearer.kind === 'malformed') return { kind: 'refused', detail: 'Authorization must be "Bearer <access_token>".' };
  if (o.admin && isAdminToken(services, bearer.token)) return { kind: 'admin' };
  if (o.accounts === false) return { kind: 'anonymous' };
  try {
    return { kind: 'account', account: await services.tokens.resolve(bearer.token), token: bearer.token, via: 'bearer' };
  } catch (e) {
    if (e instanceof AuthError) return { kind: 'refused', detail: e.message, reason: e.code };
    throw e;
  }
}

/** The wallet an identity proves, undefined for none, `anonymous`, `admin` and `refused`. */
export function accountOf(identity: BearerIdentity | undefined): AccountAddress | undefined {
  return identity?.kind === 'account' ? identity.account : undefined;
}
