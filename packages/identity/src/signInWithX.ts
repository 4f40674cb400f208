import { rateLimitIncrScript, setUnlogged, type RedisKeys } from '@acg/redis';
import { parseSIWxHeader, validateSIWxMessage, verifySIWxSignature, type SIWxPayload } from '@x402/extensions/sign-in-with-x';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createPublicClient, custom, getAddress, numberToHex, type PublicClient } from 'viem';
import { identityKeys } from './commands/keys.js';
import { AuthError } from './errors.js';

/** Where sign-in-with-x proofs are valid: the gateway's public origin and the payment network. */
export interface SignInWithXSite {
  /** The gateway's public origin, e.g. `https://gateway.example.com` (`domain` must be its host, `uri` on it). */
  origin: string;
  /** CAIP-2 network the proof must name, the payment network (`eip155:8453`). */
  network: string;
}

/** Limits of the on-chain check of a contract wallet's proof (ERC-1271 / ERC-6492 `eth_call`). */
export interface ContractWalletLimits {
  /** Gas of one `eth_call`, at most (default {@link SIGN_IN_WITH_X_CALL_GAS}). */
  gas?: bigint;
  /** How long the gateway waits for it, ms (default {@link SIGN_IN_WITH_X_CALL_TIMEOUT_MS}); longer is a refusal. */
  timeoutMs?: number;
  /** Checks per address per minute (default {@link SIGN_IN_WITH_X_CALLS_PER_MINUTE}); more is a refusal. */
  perMinute?: number;
}

/** Longest a proof's `issuedAt` may lie in the past, ms (x402 `sign-in-with-x` default, 5 minutes). */
export const SIGN_IN_WITH_X_MAX_AGE_MS = 5 * 60 * 1000;

/** How long an issued challenge's nonce is kept, seconds: as long as its proof can be valid, plus a minute. */
export const SIGN_IN_WITH_X_NONCE_TTL_SECONDS = Math.ceil(SIGN_IN_WITH_X_MAX_AGE_MS / 1000) + 60;

/** Gas cap of a contract wallet's `eth_call` (ERC-1271 `isValidSignature`, ERC-6492 deploy-and-check): 1,000,000. */
export const SIGN_IN_WITH_X_CALL_GAS = 1_000_000n;

/** How long the gateway waits for a contract wallet's `eth_call`, ms. */
export const SIGN_IN_WITH_X_CALL_TIMEOUT_MS = 2_000;

/** Contract wallet checks per address per minute. */
export const SIGN_IN_WITH_X_CALLS_PER_MINUTE = 5;

/** The request header carrying a signed challenge (x402 `sign-in-with-x`: base64 JSON of the proof). */
export const SIGN_IN_WITH_X_HEADER = 'sign-in-with-x';

/**
 * Verifies x402 `sign-in-with-x` proofs (CAIP-122 / EIP-4361; packages/accounts README
 * "Sign-in-with-x") with `@x402/extensions/sign-in-with-x`. A proof is good for the challenge the
 * gateway issued ({@link issue}: nonce and resource URI, recorded when a 402 carries it) and on
 * that resource only. In order, all before any on-chain work:
 * `parseSIWxHeader`; `validateSIWxMessage` (`domain` the gateway's public host, `uri` on its
 * origin, `issuedAt` at most 5 minutes old and not in the future, `expirationTime`, `notBefore`);
 * the chain is the payment network; the nonce was issued by the gateway, is not used, and was
 * issued for the proof's `uri`, which is the resource the request is for; then the signature,
 * first as an EOA's (ECDSA recovery, no RPC); only when that fails, as a contract wallet's
 * (ERC-1271 / ERC-6492 `eth_call` on the payment chain) with a gas cap, a timeout and a
 * per-address rate limit. Last the nonce is consumed (one `DEL` wins), so a proof signs in once.
 */
export class SignInWithX {
  private readonly limits: Required<ContractWalletLimits>;
  private readonly limiter: RateLimiterRedis;
  private readonly contractClient: PublicClient;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly site: () => SignInWithXSite,
    client: PublicClient,
    limits: ContractWalletLimits = {},
  ) {
    this.limits = {
      gas: limits.gas ?? SIGN_IN_WITH_X_CALL_GAS,
      timeoutMs: limits.timeoutMs ?? SIGN_IN_WITH_X_CALL_TIMEOUT_MS,
      perMinute: limits.perMinute ?? SIGN_IN_WITH_X_CALLS_PER_MINUTE,
    };
    // the increment every RateLimiterRedis on a shared connection uses (@acg/redis `rateLimitIncrScript`)
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: identityKeys.siwxContractChecks(keys),
      points: this.limits.perMinute,
      duration: 60,
      customIncrTtlLuaScript: rateLimitIncrScript(),
    });
    this.contractClient = gasCapped(client, this.limits.gas);
  }

  /**
   * Records a challenge the gateway issued (the `sign-in-with-x` extension of a 402): its nonce,
   * for the resource URI it names, for {@link SIGN_IN_WITH_X_NONCE_TTL_SECONDS}. Kept out of the AOF
   * and the replicas (`setUnlogged` of @acg/redis: no fsync per 402): a nonce lost to a restart or a
   * failover fails closed, its proof refused `unknown_nonce` (docs/durability.md "What is not fsynced").
   */
  async issue(nonce: string, uri: string): Promise<void> {
    await setUnlogged(this.redis, { key: identityKeys.siwxNonce(this.keys, nonce), value: uri, ttlMs: SIGN_IN_WITH_X_NONCE_TTL_SECONDS * 1000 });
  }

  /**
   * Verifies the `SIGN-IN-WITH-X` header value of a request for `resourceUrl` (the public URL of
   * the resource whose 402 issued the challenge, e.g. `https://gateway.example.com/api/v1/execute`)
   * and consumes its nonce. Returns the checksummed address that signed. Throws AuthError:
   * `invalid_message` (not a proof), `wrong_domain` (domain or uri), `wrong_chain`, `expired` (too
   * old, expired, or issued in the future), `not_yet_valid`, `unknown_nonce` (not issued by the
   * gateway, or expired), `wrong_resource` (issued for another resource than the proof's `uri` or
   * the request's), `nonce_used` (replayed), `bad_signature`, `rate_limited` (too many contract
   * wallet checks for the address).
   */
  async verify(header: string, resourceUrl: string): Promise<`0x${string}`> {
    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header.trim());
    } catch {
      throw new AuthError('invalid_message', 'SIGN-IN-WITH-X must be the base64 JSON of a signed sign-in-with-x challenge.');
    }
    const site = this.site();
    const validation = await validateSIWxMessage(payload, new URL(site.origin), { maxAge: SIGN_IN_WITH_X_MAX_AGE_MS });
    if (!validation.isValid) {
      const code = VALIDATION_CODES[validation.invalidReason] ?? 'invalid_message';
      throw new AuthError(code, `The sign-in-with-x proof was refused (${validation.invalidReason}); sign the challenge of a new 402.`);
    }
    if (payload.chainId !== site.network) throw new AuthError('wrong_chain', `The sign-in-with-x proof must name chain ${site.network}.`);
    await this.checkNonce(payload, resourceUrl);
    if (!(await this.signatureValid(payload))) throw new AuthError('bad_signature', 'The sign-in-with-x signature does not match the message and address.');
    // single use: of the requests carrying this nonce, the one whose DEL removes it is signed in
    const consumed = await this.redis
      .multi()
      .del(identityKeys.siwxNonce(this.keys, payload.nonce))
      .set(identityKeys.siwxNonceUsed(this.keys, payload.nonce), getAddress(payload.address), 'EX', SIGN_IN_WITH_X_NONCE_TTL_SECONDS)
      .exec();
    if (consumed?.[0]?.[1] !== 1) throw usedNonce();
    return getAddress(payload.address);
  }

  /** The nonce is one the gateway issued, unused, for the proof's `uri`, which is the request's resource. */
  private async checkNonce(payload: SIWxPayload, resourceUrl: string): Promise<void> {
    const [issuedFor, used] = await this.redis.mget(identityKeys.siwxNonce(this.keys, payload.nonce), identityKeys.siwxNonceUsed(this.keys, payload.nonce));
    if (used !== null) throw usedNonce();
    if (issuedFor === null) {
      throw new AuthError('unknown_nonce', 'The sign-in-with-x nonce was not issued by this gateway, or it expired; sign the challenge of a new 402.');
    }
    if (payload.uri !== issuedFor || sameResource(issuedFor, resourceUrl) === false) {
      throw new AuthError('wrong_resource', 'The sign-in-with-x challenge was issued for another resource; sign the challenge of the 402 of this one.');
    }
  }

  /** EOA first (ECDSA recovery, no RPC); then a contract wallet's on-chain check, capped and rate limited per address. */
  private async signatureValid(payload: SIWxPayload): Promise<boolean> {
    if ((await verifySIWxSignature(payload).catch(() => ({ isValid: false }))).isValid) return true;
    try {
      await this.limiter.consume(payload.address.toLowerCase(), 1);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw new AuthError('rate_limited', 'Too many contract wallet sign-ins for this address; try again in a minute.');
      throw e;
    }
    const evmVerifier = (args: { address: `0x${string}`; message: string; signature: `0x${string}` }) =>
      withTimeout(this.contractClient.verifyMessage(args), this.limits.timeoutMs);
    return (await verifySIWxSignature(payload, { evmVerifier }).catch(() => ({ isValid: false }))).isValid;
  }
}

/** Whether two public URLs name the same resource (origin and path; the query is not part of it). */
function sameResource(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.origin === y.origin && x.pathname === y.pathname;
  } catch {
    return false;
  }
}

function usedNonce(): AuthError {
  return new AuthError('nonce_used', 'This sign-in-with-x proof was already used; sign the challenge of a new 402.');
}

/** `promise`, or false once `ms` passed (the call is left to finish; its answer is ignored). */
function withTimeout(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `client` whose every `eth_call` carries at most `gas` (viem's ERC-1271 path sends none: the node's own cap would apply). */
function gasCapped(client: PublicClient, gas: bigint): PublicClient {
  const cap = numberToHex(gas);
  return createPublicClient({
    chain: client.chain,
    transport: custom({
      request: ({ method, params }: { method: string; params?: unknown }) => {
        if (method === 'eth_call' && Array.isArray(params) && params[0] && typeof params[0] === 'object') {
          const call = params[0] as { gas?: string };
          const capped = call.gas === undefined || BigInt(call.gas) > gas ? { ...call, gas: cap } : call;
          return client.request({ method, params: [capped, ...params.slice(1)] } as never);
        }
        return client.request({ method, params } as never);
      },
    }),
  }) as PublicClient;
}

/** AuthError codes for the library's validation codes (the same codes as Sign-In with Ethereum). */
const VALIDATION_CODES: Record<string, string> = {
  invalid_siwx_domain_mismatch: 'wrong_domain',
  invalid_siwx_uri_mismatch: 'wrong_domain',
  invalid_siwx_issued_at: 'invalid_message',
  invalid_siwx_issued_at_too_old: 'expired',
  invalid_siwx_issued_at_in_future: 'expired',
  invalid_siwx_expiration_time: 'invalid_message',
  invalid_siwx_expired: 'expired',
  invalid_siwx_not_before: 'invalid_message',
  invalid_siwx_not_yet_valid: 'not_yet_valid',
};
