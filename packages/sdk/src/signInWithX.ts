/**
 * x402 `sign-in-with-x` in the SDK (packages/sdk README "Sign-in-with-x"): when a 402 carries
 * `extensions["sign-in-with-x"]` (the gateway's do), the SDK signs its challenge with the paying
 * account (an EIP-4361 message, with `@x402/extensions/sign-in-with-x`) and sends it as
 * `SIGN-IN-WITH-X` beside `PAYMENT-SIGNATURE`; the paid answer's `Authentication-Info` carries a
 * bearer token of the same kind as Sign-In with Ethereum's, which the client keeps as its session
 * (reading executions, the metered account, wallet-monitor subscriptions) without a second round trip.
 */
import { createSIWxPayload, encodeSIWxHeader, SIGN_IN_WITH_X, type SIWxExtension } from '@x402/extensions/sign-in-with-x';
import type { LocalAccount } from 'viem';
import type { BearerToken } from './actions/signIn.js';
import type { PaymentRequired } from './types.js';

/**
 * `{"SIGN-IN-WITH-X": <base64 JSON proof>}` for the 402's challenge signed by `account`, when the
 * 402 offers one for `network` (CAIP-2, e.g. `eip155:8453`) and it is bound to `requestUrl`'s
 * origin; `{}` otherwise (signing in is never a reason for a payment to fail).
 */
export async function signInWithXHeaders(
  account: LocalAccount,
  paymentRequired: PaymentRequired,
  requestUrl: string,
  network: string,
): Promise<Record<string, string>> {
  const ext = paymentRequired.extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  const chain = ext?.supportedChains?.find((c) => c.chainId === network && c.type === 'eip191');
  if (!ext?.info || !chain) return {};
  try {
    const payload = await createSIWxPayload({ ...ext.info, chainId: chain.chainId, type: chain.type }, account, requestUrl);
    return { [SIGN_IN_WITH_X]: encodeSIWxHeader(payload) };
  } catch {
    return {};
  }
}

/**
 * The bearer token an answer's `Authentication-Info` announces after a sign-in-with-x
 * (`access_token="acg_…", token_type="Bearer", expires_in=86400`), for `address`; undefined without one.
 */
export function sessionFromAuthenticationInfo(headers: Headers, address: `0x${string}`, now = Date.now()): BearerToken | undefined {
  const info = headers.get('authentication-info');
  const m = info ? /access_token="([^"]+)", token_type="Bearer", expires_in=(\d+)/.exec(info) : null;
  if (!m) return undefined;
  const expiresIn = Number(m[2]);
  return { access_token: m[1], token_type: 'Bearer', expires_in: expiresIn, expires_at: now + expiresIn * 1000, address };
}
