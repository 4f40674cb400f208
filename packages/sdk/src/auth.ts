import type { LocalAccount } from 'viem';
import { signIn, type BearerToken } from './actions/signIn.js';
import { signOut } from './actions/signOut.js';
import { createGatewayContext } from './context.js';

export type { BearerToken };

/** Options of {@link createAuthClient}. */
export interface AuthClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** Sign-in client: see {@link createAuthClient}. */
export interface AuthClient {
  /**
   * Signs in with `account` (EIP-4361): asks `POST /v1/auth/nonce` for the message, signs it with
   * `personal_sign` (no transaction, no gas), and exchanges it at `POST /v1/auth/token`. The token
   * is kept and returned by {@link AuthClient.token}. Throws {@link GatewayError} (400 bad
   * message, 401 expired/wrong domain/bad signature) or {@link GatewayRequestError} (unreachable).
   */
  signIn(account: LocalAccount): Promise<BearerToken>;
  /** The current token, if signed in and not expired (with a 30 s margin). */
  token(): BearerToken | undefined;
  /** Revokes the current token (`POST /v1/auth/revoke`) and forgets it. */
  signOut(): Promise<void>;
}

/**
 * Bearer accounts (docs/decisions.md "Accounts and bearer tokens") for the metered endpoints (wallet monitor,
 * liquidation search):
 *
 * ```ts
 * const auth = createAuthClient({ baseUrl });
 * const { access_token } = await auth.signIn(privateKeyToAccount(key));
 * ```
 */
export function createAuthClient(options: AuthClientOptions): AuthClient {
  const ctx = createGatewayContext({ baseUrl: options.baseUrl, fetch: options.fetch, headers: options.headers }, 'createAuthClient');
  let current: BearerToken | undefined;
  return {
    async signIn(account) {
      current = await signIn(ctx, { account });
      return current;
    },
    token() {
      return current && current.expires_at - 30_000 > Date.now() ? current : undefined;
    },
    async signOut() {
      if (!current) return;
      const accessToken = current.access_token;
      current = undefined;
      await signOut(ctx, { accessToken });
    },
  };
}
