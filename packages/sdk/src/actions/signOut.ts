import type { GatewayContext } from '../context.js';
import type { GatewayError, GatewayRequestError } from '../errors.js';
import { postJson } from './internal.js';

/** Parameters of {@link signOut}. */
export interface SignOutParameters {
  /** The bearer token to revoke. */
  accessToken: string;
}

/** `{revoked: true}` */
export interface SignOutReturnType {
  revoked: true;
}

/** Errors of {@link signOut}. */
export type SignOutErrorType = GatewayError | GatewayRequestError;

/**
 * `POST /v1/auth/revoke`: revokes a bearer token from {@link signIn}.
 *
 * @throws {GatewayError} 401 unknown or expired token. {GatewayRequestError} unreachable.
 *
 * @example
 * await signOut(ctx, { accessToken: token.access_token })
 */
export async function signOut(ctx: GatewayContext, { accessToken }: SignOutParameters): Promise<SignOutReturnType> {
  return postJson<SignOutReturnType>(ctx, '/v1/auth/revoke', {}, { authorization: `Bearer ${accessToken}` });
}
