import type { LocalAccount } from 'viem';
import { GatewayError, GatewayRequestError } from './errors.js';
import { parseJson, parseProblem } from './protocol.js';

/** Options of {@link createAuthClient}. */
export interface AuthClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** A bearer token from Sign-In with Ethereum (`POST /v1/auth/token`). */
export interface BearerToken {
  /** opaque `acg_...` token for `Authorization: Bearer <access_token>` */
  access_token: string;
  token_type: 'Bearer';
  /** seconds the token lived when issued */
  expires_in: number;
  /** ms since epoch when it expires (computed on receipt) */
  expires_at: number;
  /** the signed-in wallet (checksummed) */
  address: `0x${string}`;
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
 * Bearer accounts (DESIGN "Accounts and bearer tokens") for the metered endpoints (wallet monitor,
 * liquidation search):
 *
 * ```ts
 * const auth = createAuthClient({ baseUrl });
 * const { access_token } = await auth.signIn(privateKeyToAccount(key));
 * ```
 */
export function createAuthClient(options: AuthClientOptions): AuthClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  let current: BearerToken | undefined;

  async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    const url = `${baseUrl}${path}`;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers, ...headers }, body: JSON.stringify(body) });
      text = await res.text();
    } catch (cause) {
      throw new GatewayRequestError(url, `Could not reach the gateway at ${baseUrl}.`, { cause });
    }
    if (!res.ok) throw new GatewayError(parseProblem(res.status, text));
    const parsed = parseJson(text);
    if (parsed === undefined) throw new GatewayRequestError(url, `The gateway answered ${path} without a JSON body.`, { status: res.status });
    return parsed;
  }

  return {
    async signIn(account) {
      const challenge = (await post('/v1/auth/nonce', { address: account.address })) as { message: string };
      const signature = await account.signMessage({ message: challenge.message });
      const t = (await post('/v1/auth/token', { message: challenge.message, signature })) as Omit<BearerToken, 'expires_at' | 'address'>;
      current = { ...t, expires_at: Date.now() + t.expires_in * 1000, address: account.address };
      return current;
    },
    token() {
      return current && current.expires_at - 30_000 > Date.now() ? current : undefined;
    },
    async signOut() {
      if (!current) return;
      const token = current.access_token;
      current = undefined;
      await post('/v1/auth/revoke', {}, { authorization: `Bearer ${token}` });
    },
  };
}
