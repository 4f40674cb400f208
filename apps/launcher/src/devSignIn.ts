import { SELF_CHECK_HEADER, selfCheckToken } from '@acg/observability';

/** What signs the Sign-In with Ethereum message: a dev account (`devAccount` of @acg/devnet). */
export interface DevSigner {
  address: `0x${string}`;
  signMessage(args: { message: string }): Promise<`0x${string}`>;
}

/**
 * The one-click dev sign-in of `npm start` (dev chain only): signs `account` in through the gateway's
 * public API (`POST /v1/auth/nonce`, EIP-191 signature, `POST /v1/auth/token`), as a wallet in the
 * browser would, and returns the URL fragment the signed-in pages (`/providers/{id}`,
 * `/subscriptions/{id}`) turn into the tab's session: `#dev-session=<token>.<address>.<expires_at ms>`
 * (`static/account.js`, loopback hosts only). A fragment is never sent to a server, so the token
 * stays out of request logs. The two requests are marked as this process's self-checks.
 *
 * @throws {Error} naming the route when the gateway refuses (e.g. `POST /v1/auth/token: HTTP 401`).
 */
export async function devSessionFragment(gatewayUrl: string, account: DevSigner): Promise<string> {
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(`${gatewayUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SELF_CHECK_HEADER]: selfCheckToken() },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  const { message } = await post<{ message: string }>('/v1/auth/nonce', { address: account.address });
  const signature = await account.signMessage({ message });
  const { access_token, expires_in } = await post<{ access_token: string; expires_in: number }>('/v1/auth/token', { message, signature });
  return `#dev-session=${access_token}.${account.address}.${Date.now() + expires_in * 1000}`;
}
