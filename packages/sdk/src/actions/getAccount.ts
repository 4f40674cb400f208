import type { GatewayContext } from '../context.js';
import type { AcgError, GatewayError, GatewayRequestError } from '../errors.js';
import type { AccountView } from '../types.js';
import { bearerJson } from './internal.js';

/** Parameters of {@link getAccount}. */
export interface GetAccountParameters {
  /** Bearer token from {@link signIn}. */
  accessToken: string | undefined;
}

/** The metered account: `balance`, `spent`, `deposited` (integer strings, USDC base units) and `usage`. */
export type GetAccountReturnType = AccountView;

/** Errors of {@link getAccount}. */
export type GetAccountErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * `GET /v1/account`: the signed-in wallet's metered account. Free.
 *
 * @throws {AcgError} no token. {GatewayError} 401 bad or expired token.
 *
 * @example
 * const { balance } = await getAccount(ctx, { accessToken })
 */
export async function getAccount(ctx: GatewayContext, { accessToken }: GetAccountParameters): Promise<GetAccountReturnType> {
  return bearerJson(ctx, accessToken, 'GET', '/v1/account');
}
