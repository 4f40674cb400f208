import { deleteFieldsIfEqual } from '@acg/redis';
import type { Redis } from 'ioredis';
import { parseTransaction, type Hex } from 'viem';
import type { TransferRecord } from './treasury.js';

/**
 * The {@link TransferRecord} kept in the Redis hash `key` (fields `raw_tx`, `tx_hash`, `nonce`, and
 * `replaces`: the comma-separated hashes a fee-bumped replacement replaced): a refund record, a
 * payout record, or a settlement's resubmission (`finality.ts`). Each save is one HSET.
 */
export function storedTransferRecord(redis: Redis, key: string): TransferRecord {
  return {
    async load() {
      const [raw, hash, nonce, replaces] = await redis.hmget(key, 'raw_tx', 'tx_hash', 'nonce', 'replaces');
      if (!raw || !hash) return undefined;
      return {
        raw: raw as Hex,
        hash: hash as Hex,
        // records signed before the nonce was stored: the nonce is in the signed bytes
        nonce: nonce ? Number(nonce) : (parseTransaction(raw as Hex).nonce ?? 0),
        ...(replaces ? { replaces: replaces.split(',') as Hex[] } : {}),
      };
    },
    async save(t) {
      await redis.hset(key, 'raw_tx', t.raw, 'tx_hash', t.hash, 'nonce', String(t.nonce), 'replaces', (t.replaces ?? []).join(','));
    },
    async clear(hash) {
      await deleteFieldsIfEqual(redis, { key, field: 'tx_hash', expected: hash, fields: ['raw_tx', 'tx_hash', 'nonce', 'replaces'] });
    },
  };
}
