import type { RedisKeys } from '@acg/redis';
import { claimIdempotencyKey } from './commands/index.js';
import type { PaymentPayload } from '@x402/core/types';
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
  type PaymentIdentifierExtension,
} from '@x402/extensions/payment-identifier';
import type { Redis } from 'ioredis';
import { PaymentConflictError, PaymentError } from './errors.js';
import { paymentKeys } from './commands/keys.js';

export { PAYMENT_IDENTIFIER };

/**
 * The `payment-identifier` declaration every 402 carries in `extensions` (x402
 * `specs/extensions/payment_identifier.md`, built by `@x402/extensions`): optional, the client may
 * add `info.id` (16-128 of `[A-Za-z0-9_-]`) to its PaymentPayload's extensions.
 */
export const PAYMENT_IDENTIFIER_DECLARATION: PaymentIdentifierExtension = declarePaymentIdentifierExtension(false);

/**
 * The client's payment identifier in `payload.extensions["payment-identifier"].info.id`, or
 * undefined when it sent none (an echoed declaration without `id` is none).
 * Throws {@link PaymentError} `invalid_payment_identifier` when the extension is malformed or the id
 * breaks the format (checked by `@x402/extensions`' own validator).
 */
export function readPaymentIdentifier(payload: PaymentPayload): string | undefined {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER];
  if (!extension) return undefined;
  // The client echoes our declaration, `schema` included, and the library compiles any `schema` it
  // finds with a new Ajv on every call: ~8 ms of CPU per paid request, and a client-chosen schema
  // compiled on our CPU. The schema is ours and constant; its rules (a boolean `required`, an `id`
  // of 16-128 of [A-Za-z0-9_-]) are what the library checks without it.
  const { schema: _echoed, ...rest } = extension as Record<string, unknown>;
  const { id, validation } = extractAndValidatePaymentIdentifier({ ...payload, extensions: { ...payload.extensions, [PAYMENT_IDENTIFIER]: rest } });
  if (!validation.valid) {
    throw new PaymentError(
      'invalid_payment_identifier',
      'The payment-identifier extension is malformed: its id must be 16 to 128 characters of letters, digits, "-" and "_".',
    );
  }
  return id ?? undefined;
}

/**
 * Payment identifiers bound to the payload they first paid with (x402 payment-identifier
 * "Idempotency Behavior"): same id + same payload → the request goes on and is answered from the
 * payment's reservation (its stored response); same id + another payload → 409. A binding is one
 * Redis hash per id (`RedisKeys.paymentIdentifier`), claimed atomically by `claim_idempotency_key.lua`
 * (the Idempotency-Key machinery) once the payment is reserved, and released when that payment is
 * refused before it was charged.
 */
export class PaymentIdentifiers {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly retentionSeconds: number,
  ) {}

  /** Redis key of the binding of `id`. */
  key(id: string): string {
    return paymentKeys.paymentIdentifier(this.keys, id);
  }

  /** Throws PaymentConflictError('payment_identifier') when `id` is bound to another payload. */
  async check(id: string, payloadHash: string): Promise<void> {
    const bound = await this.redis.hget(this.key(id), 'request_hash');
    if (bound && bound !== payloadHash) throw new PaymentConflictError('payment_identifier');
  }

  /** The reservation (`authKey`) `id` is bound to, or undefined. */
  async boundTo(id: string): Promise<string | undefined> {
    return (await this.redis.hget(this.key(id), 'authorization_key')) ?? undefined;
  }

  /** Binds `id` to this payload and reservation; false when another payload holds it. */
  async claim(id: string, payloadHash: string, authKey: string): Promise<boolean> {
    const r = await claimIdempotencyKey(this.redis, { idempotencyKey: this.key(id), requestHash: payloadHash, authKey, ttlSeconds: this.retentionSeconds });
    return r.claimed || r.requestHash === payloadHash;
  }
}
