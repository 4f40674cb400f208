/**
 * The answer stored with a paid call's reservation (status, body, headers), returned to every
 * replay: written by the paywall (`@acg/payments`), replaced by {@link TransferFinality} when a
 * settlement is lost for good (409 `payment_reversed`).
 */
export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** A stored 409 problem+json answer (`no-store`) with `fields` (`reason`, `detail`, ids...) in its body: a replay's receipt, or a reversed payment (`finality.ts`). */
export function conflictAnswer(fields: Record<string, unknown>): StoredResponse {
  return {
    status: 409,
    headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' },
    body: { type: 'about:blank', title: 'Conflict', status: 409, ...fields },
  };
}
