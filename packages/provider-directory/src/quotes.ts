import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { ulid } from 'ulid';

/** A quote as stored: the price in integer USDC base units, the input's canonical SHA-256, times in unix ms, and who used it. */
export interface StoredQuote {
  quote_id: string;
  capability_id: string;
  provider_id: string;
  price_base_units: bigint;
  input_sha256: string;
  issued_at_ms: number;
  expires_at_ms: number;
  /** the JWS of the quote as handed out */
  quote: string;
  /** the execution id that used it, once used */
  used_by: string | null;
  /** the payment that used it, once used: its EIP-3009 authorization as `<from>:<nonce>` (lowercase hex) */
  used_with: string | null;
}

/** Why a quote cannot be used (apps/gateway README "Quotes"): unknown 404, expired 410, another capability or input 409, already used by another execution 409. */
export type QuoteRefusal = 'quote_not_found' | 'quote_expired' | 'quote_capability_mismatch' | 'quote_input_mismatch' | 'quote_used';

/** How long an expired quote is kept to answer 410 rather than 404, seconds. */
export const QUOTE_RETENTION_SECONDS = 86_400;

/**
 * Quotes in Redis (`{prov}:quote:<quote_id>`, a hash kept {@link QUOTE_RETENTION_SECONDS} past
 * expiry): {@link save} a signed quote, {@link check} one for an execute request before payment, and
 * {@link use} it once, atomically (`used_by` and `used_with` set together), after the payment
 * settled. A used quote is refused before any payment to every request but the resend of the
 * payment that used it ({@link check}); a second execution that raced past the check finds it used
 * in {@link use} and is refunded, never charged twice.
 */
export class QuoteStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    /** unix ms (a test moves it) */
    readonly now: () => number = Date.now,
  ) {}

  /** A new quote id, `qte_` + ULID. */
  static newId(): string {
    return `qte_${ulid()}`;
  }

  private key(quoteId: string): string {
    return this.keys.providers('quote', quoteId);
  }

  /** Stores a quote (its JWS included). */
  async save(q: Omit<StoredQuote, 'used_by' | 'used_with'>): Promise<void> {
    const key = this.key(q.quote_id);
    const ttl = Math.max(1, Math.ceil((q.expires_at_ms - this.now()) / 1000) + QUOTE_RETENTION_SECONDS);
    await this.redis
      .multi()
      .hset(key, {
        quote_id: q.quote_id,
        capability_id: q.capability_id,
        provider_id: q.provider_id,
        price_base_units: q.price_base_units.toString(),
        input_sha256: q.input_sha256,
        issued_at_ms: String(q.issued_at_ms),
        expires_at_ms: String(q.expires_at_ms),
        quote: q.quote,
      })
      .expire(key, ttl)
      .exec();
  }

  /** The stored quote, or undefined. */
  async get(quoteId: string): Promise<StoredQuote | undefined> {
    const h = await this.redis.hgetall(this.key(quoteId));
    if (!h.quote_id) return undefined;
    return {
      quote_id: h.quote_id,
      capability_id: h.capability_id,
      provider_id: h.provider_id,
      price_base_units: BigInt(h.price_base_units),
      input_sha256: h.input_sha256,
      issued_at_ms: Number(h.issued_at_ms),
      expires_at_ms: Number(h.expires_at_ms),
      quote: h.quote,
      used_by: h.used_by ?? null,
      used_with: h.used_with ?? null,
    };
  }

  /**
   * Checks a quote for an execute request of `capabilityId` with an input hashing to `inputSha256`,
   * before any payment: the quote, or why it cannot be used. `payment` is the EIP-3009 authorization
   * (`<from>:<nonce>`, lowercase) the request carries, undefined without one. A used quote passes
   * only for the payment that used it (its resend: the paywall then answers the stored execution);
   * any other request, a fresh payment included, is refused `quote_used` before it is settled
   * (issue: a fresh payment was settled, then refunded, two transactions at the gateway's cost).
   */
  async check(
    quoteId: string,
    capabilityId: string,
    inputSha256: string,
    payment: string | undefined,
  ): Promise<{ ok: true; quote: StoredQuote } | { ok: false; reason: QuoteRefusal; quote?: StoredQuote }> {
    const quote = await this.get(quoteId);
    if (!quote) return { ok: false, reason: 'quote_not_found' };
    if (quote.capability_id !== capabilityId) return { ok: false, reason: 'quote_capability_mismatch', quote };
    if (quote.input_sha256 !== inputSha256) return { ok: false, reason: 'quote_input_mismatch', quote };
    if (quote.used_by && (payment === undefined || quote.used_with !== payment)) return { ok: false, reason: 'quote_used', quote };
    if (this.now() >= quote.expires_at_ms) return { ok: false, reason: 'quote_expired', quote };
    return { ok: true, quote };
  }

  /**
   * Marks the quote used by `executionId`, paid with `payment` (the EIP-3009 authorization
   * `<from>:<nonce>`, lowercase), atomically: true for the first execution (and again for the same
   * one), false when another execution used it or the quote is gone.
   */
  async use(quoteId: string, executionId: string, payment: string): Promise<boolean> {
    return (await this.redis.eval(USE_QUOTE, 1, this.key(quoteId), executionId, payment)) === 1;
  }
}

/** KEYS[1] the quote hash; ARGV execution id, payment. 1 when this execution holds the quote (now or already), 0 otherwise. */
const USE_QUOTE = `
if redis.call('HEXISTS', KEYS[1], 'quote_id') == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'used_by', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'used_with', ARGV[2])
  return 1
end
if redis.call('HGET', KEYS[1], 'used_by') == ARGV[1] then return 1 end
return 0
`;
