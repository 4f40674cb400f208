import { deleteFieldsIfEqual } from '@acg/redis';
import type { Redis } from 'ioredis';
import { parseTransaction, type Hex } from 'viem';
import type { TransferRecord } from './treasury.js';

/**
 * The {@link TransferRecord} kept in the Redis hash `key` (fields `raw_tx`, `tx_hash`, `nonce`):
 * a refund record, a payout record, or a settlement's resubmission (`finality.ts`).
 */
export function storedTransferRecord(redis: Redis, key: string): TransferRecord {
  return {
    async load() {
      const [raw, hash, nonce] = await redis.hmget(key, 'raw_tx', 'tx_hash', 'nonce');
      if (!raw || !hash) return undefined;
      // records signed before the nonce was stored: the nonce is in the signed bytes
      return { raw: raw as Hex, hash: hash as Hex, nonce: nonce ? Number(nonce) : (parseTransaction(raw as Hex).nonce ?? 0) };
    },
    async save(t) {
      await redis.hset(key, 'raw_tx', t.raw, 'tx_hash', t.hash, 'nonce', String(t.nonce));
    },
    async clear(hash) {
      await deleteFieldsIfEqual(redis, { key, field: 'tx_hash', expected: hash, fields: ['raw_tx', 'tx_hash', 'nonce'] });
    },
  };
}
