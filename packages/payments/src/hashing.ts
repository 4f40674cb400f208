import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';

/** sha256 hex of the canonical (key-sorted) JSON of `value`. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256')
    .update(stringify(value) ?? 'null')
    .digest('hex');
}

/**
 * The identity of a request for idempotency: method, path and canonical body. Two requests with
 * the same hash are the same request (so a replayed payment returns the stored result).
 */
export function requestHash(method: string, path: string, body: unknown): string {
  return canonicalHash({ method: method.toUpperCase(), path, body });
}
