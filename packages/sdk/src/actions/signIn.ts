import type { LocalAccount } from 'viem';
import type { GatewayContext } from '../context.js';
import { AcgError, type GatewayError, type GatewayRequestError } from '../errors.js';
import type { BearerToken } from '../types.js';
import { postJson } from './internal.js';

export type { BearerToken };

/** Parameters of {@link signIn}. */
export interface SignInParameters {
  /** The wallet to sign in (default: the context's account). Signs a message only: no transaction, no gas. */
  account?: LocalAccount;
}

/** What {@link signIn} returns. */
export type SignInReturnType = BearerToken;

/** Errors of {@link signIn}. */
export type SignInErrorType = AcgError | GatewayError | GatewayRequestError;

/**
 * Sign-In with Ethereum (EIP-4361; docs/decisions.md "Accounts and bearer tokens"): asks
 * `POST /v1/auth/nonce` for the message, signs it with `personal_sign`, and exchanges it at
 * `POST /v1/auth/token` for a bearer token used by the metered endpoints (wallet monitor,
 * liquidation search, account deposit balance).
 *
 * @returns the token with `expires_at` in ms since epoch.
 * @throws {AcgError} no account. {GatewayError} 400 bad message, 401 expired / wrong domain / bad signature. {GatewayRequestError} unreachable.
 *
 * @example
 * const { access_token } = await signIn(ctx, { account: privateKeyToAccount(key) })
 */
export async function signIn(ctx: GatewayContext, params: SignInParameters = {}): Promise<SignInReturnType> {
  const account = params.account ?? ctx.account;
  if (!account) throw new AcgError('Sign-in signs with an account: pass one to signIn() or to createGatewayClient.');
  const challenge = await postJson<{ message: string }>(ctx, '/v1/auth/nonce', { address: account.address });
  const signature = await account.signMessage({ message: challenge.message });
  const t = await postJson<Omit<BearerToken, 'expires_at' | 'address'>>(ctx, '/v1/auth/token', { message: challenge.message, signature });
  return { ...t, expires_at: Date.now() + t.expires_in * 1000, address: account.address };
}
