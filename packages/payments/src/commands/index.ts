import { scriptSet, withScripts } from '@acg/redis';
import type { Redis } from 'ioredis';

export { paymentKeys } from './keys.js';

/**
 * The x402 authorization reservations and idempotency bindings of @acg/payments (packages/payments README): the Lua scripts in `./lua` (one file per script, loaded by name, as bullmq keeps its
 * commands), each called through a typed wrapper below with named arguments (as bullmq's
 * `addStandardJobArgs` builds KEYS and ARGV) and a typed result. Each wrapper defines its
 * scripts on the connection on first use (`withScripts`, idempotent).
 */
const SCRIPTS = scriptSet(new URL('./lua/', import.meta.url), {
  reserve_authorization: 2,
  transition_authorization: 2,
  release_authorization: 2,
  claim_idempotency_key: 1,
  release_binding: 1,
});

/**
 * The life of an x402 authorization reservation (docs/decisions.md "x402 payments"):
 * `pending` (reserved, settlement not seen) → `completed` (settled, answer stored);
 * `pending` → `settle_unknown` (settlement outcome not seen; reconciled on chain);
 * `settled` (settlement seen, operation running: set when a replay reconciles a settled payment);
 * `recovering` (the crash-recovery sweep took it over to refund it) → `completed`.
 * A deferred scheme (`upto`, field `scheme`): `pending` (verified, reserved, operation running) →
 * `settling` (the operation ran: the amount to settle `settle_amount`, the answer `response` and
 * the signed `payload` recorded before settling) → `completed`; `settling` → `settle_unknown`
 * (outcome not seen; finished by the paywall's deferred recovery, never by a refund).
 * A deferred payment answered before it is settled (a job, `Outcome.settleLater`): `pending` held
 * with the answer `response`, `payload`, `requirements` and `hold_until` (the deadline) while the
 * job runs → `settling` ({@link recordDeferredCharge}) → `completed` once settled; 0 spent:
 * `pending` → `completed` with amount 0.
 * A reservation released (nothing charged) is deleted, see {@link releaseAuthorization}.
 */
export type AuthorizationState = 'pending' | 'settle_unknown' | 'settled' | 'settling' | 'recovering' | 'completed';

export const AUTHORIZATION_STATES: readonly AuthorizationState[] = ['pending', 'settle_unknown', 'settled', 'settling', 'recovering', 'completed'];

/** A reservation as stored in its hash (the fields the paywall reads back). */
export interface AuthorizationRecord {
  state: AuthorizationState;
  requestHash: string;
  payloadHash: string;
  operationId: string;
  /** last progress, unix milliseconds */
  updatedAtMs: number;
}

export interface ReserveAuthorizationParameters {
  /** `paymentKeys.authorization(keys, network, asset, from, nonce)` */
  authKey: string;
  /** `paymentKeys.authorizationsInFlight(keys)` */
  inFlightKey: string;
  /** sha256 of method, path and canonical body (`requestHash`) */
  requestHash: string;
  /** sha256 of the PaymentPayload's signed part */
  payloadHash: string;
  /** operation id of this request, e.g. `exe_...` */
  operationId: string;
  /** now, unix milliseconds */
  nowMs: number;
  /** how long the reservation is kept, seconds */
  retentionSeconds: number;
  /** asset contract, payer, EIP-3009 nonce and amount (integer base units): what a recovery needs */
  asset: string;
  from: string;
  nonce: string;
  amount: string;
  /** the x402 scheme (`exact` when absent): a reservation of another scheme is recovered by that scheme, not by the EIP-3009 sweep */
  scheme?: string;
}

export type ReserveAuthorizationReturnType = { reserved: true } | { reserved: false; existing: AuthorizationRecord };

/**
 * `reserve_authorization.lua`: reserves (from, nonce) in state `pending` and adds it to the
 * in-flight set, unless a reservation exists: then returns it (a replay or a concurrent duplicate).
 */
export async function reserveAuthorization(redis: Redis, p: ReserveAuthorizationParameters): Promise<ReserveAuthorizationReturnType> {
  const r = (await withScripts(redis, SCRIPTS).reserve_authorization(
    p.authKey,
    p.inFlightKey,
    p.requestHash,
    p.payloadHash,
    p.operationId,
    p.nowMs,
    p.retentionSeconds,
    p.asset,
    p.from,
    p.nonce,
    p.amount,
    p.scheme ?? 'exact',
  )) as string[];
  if (r[0] === 'reserved') return { reserved: true };
  return {
    reserved: false,
    existing: { state: r[1] as AuthorizationState, requestHash: r[2], payloadHash: r[3], operationId: r[4], updatedAtMs: Number(r[5] || 0) },
  };
}

/** Reads a reservation (one HMGET); undefined when there is none. */
export async function readAuthorization(redis: Redis, authKey: string): Promise<AuthorizationRecord | undefined> {
  const [state, requestHash, payloadHash, operationId, updatedAt] = await redis.hmget(
    authKey,
    'state',
    'request_hash',
    'payload_hash',
    'operation_id',
    'updated_at',
  );
  if (!state) return undefined;
  return {
    state: state as AuthorizationState,
    requestHash: requestHash ?? '',
    payloadHash: payloadHash ?? '',
    operationId: operationId ?? '',
    updatedAtMs: Number(updatedAt ?? 0),
  };
}

export interface TransitionAuthorizationParameters {
  authKey: string;
  inFlightKey: string;
  /** the operation that must hold the reservation */
  operationId: string;
  /** states it must be in */
  from: readonly AuthorizationState[];
  to: AuthorizationState;
  nowMs: number;
  /** hash fields stored with the new state (e.g. `tx_hash`, `response`) */
  fields?: Record<string, string>;
}

/**
 * `transition_authorization.lua`: compare-and-set of a reservation's state (holder and state must
 * match). Returns true when applied. `completed` leaves the in-flight set; any other state
 * updates its progress time there.
 */
export async function transitionAuthorization(redis: Redis, p: TransitionAuthorizationParameters): Promise<boolean> {
  const fields = Object.entries(p.fields ?? {}).flat();
  const r = await withScripts(redis, SCRIPTS).transition_authorization(p.authKey, p.inFlightKey, p.operationId, p.from.join(','), p.to, p.nowMs, ...fields);
  return r === 1;
}

export interface ReleaseAuthorizationParameters {
  authKey: string;
  inFlightKey: string;
  operationId: string;
  /** states it may be released from (never `completed`) */
  from: readonly Exclude<AuthorizationState, 'completed'>[];
}

/** `release_authorization.lua`: deletes a reservation nothing was charged for (holder and state must match). Returns true when released. */
export async function releaseAuthorization(redis: Redis, p: ReleaseAuthorizationParameters): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).release_authorization(p.authKey, p.inFlightKey, p.operationId, p.from.join(','))) === 1;
}

export interface ClaimIdempotencyKeyParameters {
  /** `paymentKeys.idempotency(keys, route, key)` */
  idempotencyKey: string;
  requestHash: string;
  /** authorization key the request is paid with */
  authKey: string;
  ttlSeconds: number;
}

export type ClaimIdempotencyKeyReturnType = { claimed: true } | { claimed: false; requestHash: string; authKey: string };

/** `claim_idempotency_key.lua`: binds an Idempotency-Key to one request and its payment, unless already bound. */
export async function claimIdempotencyKey(redis: Redis, p: ClaimIdempotencyKeyParameters): Promise<ClaimIdempotencyKeyReturnType> {
  const r = (await withScripts(redis, SCRIPTS).claim_idempotency_key(p.idempotencyKey, p.requestHash, p.authKey, p.ttlSeconds)) as string[];
  return r[0] === 'claimed' ? { claimed: true } : { claimed: false, requestHash: r[1], authKey: r[2] };
}

export interface ReleaseBindingParameters {
  /** `paymentKeys.idempotency(keys, route, key)` or `paymentKeys.paymentIdentifier(keys, id)` */
  bindingKey: string;
  /** the authorization key the binding must point to */
  authKey: string;
}

/**
 * `release_binding.lua`: unbinds a key bound by {@link claimIdempotencyKey} when it still points to
 * `authKey` (a payment refused before it was charged). Returns true when unbound.
 */
export async function releaseBinding(redis: Redis, p: ReleaseBindingParameters): Promise<boolean> {
  return (await withScripts(redis, SCRIPTS).release_binding(p.bindingKey, p.authKey)) === 1;
}

/** What {@link recordDeferredCharge} did. */
export type RecordDeferredChargeResult =
  /** the amount to settle is recorded (`settling`), now or before with the same amount: the gateway settles it */
  | 'recorded'
  /** nothing to settle (amount 0): the reservation is `completed` with amount 0, no transaction is ever sent */
  | 'nothing_to_settle'
  /** settled already (`settled` or `completed` with this amount) */
  | 'settled'
  /** no such reservation held by this operation, or one that recorded another amount: nothing written */
  | 'refused';

/**
 * Records, for a deferred payment answered before it is settled (`Outcome.settleLater` of the
 * paywall: a job paid with `upto`, held `pending` with its ceiling's `requirements` and signed
 * `payload`), the amount its operation used, once it ended (packages/payments README "Payment
 * schemes", jobs): compare-and-set `pending` → `settling` with `settle_amount` = `amount` (integer
 * string, USDC base units, 0..the authorized ceiling) and the requirements for that amount, which
 * the gateway's paywall then settles (`Paywall.settleRecorded`, or its deferred recovery); `amount`
 * 0 → `completed` with amount 0 (nothing is ever sent; the nonce stays reserved so the payload
 * cannot run again). Idempotent: called again after a crash it returns what was recorded, never a
 * second or different amount. Throws for an amount above the ceiling or a malformed reservation.
 */
export async function recordDeferredCharge(
  redis: Redis,
  p: { authKey: string; inFlightKey: string; operationId: string; amount: string },
): Promise<RecordDeferredChargeResult> {
  const [state, operationId, ceiling, requirements, settleAmount] = await redis.hmget(
    p.authKey,
    'state',
    'operation_id',
    'amount',
    'requirements',
    'settle_amount',
  );
  if (!state || operationId !== p.operationId) return 'refused';
  const amount = BigInt(p.amount);
  if (state !== 'pending') {
    if (settleAmount === null || settleAmount !== p.amount) return 'refused';
    if (state === 'settling' || state === 'settle_unknown') return 'recorded';
    return amount === 0n ? 'nothing_to_settle' : 'settled';
  }
  if (!requirements || !ceiling) throw new Error(`reservation of ${p.operationId} holds no requirements: not answered before settlement`);
  if (amount < 0n || amount > BigInt(ceiling)) throw new Error(`deferred charge ${amount} outside 0..${ceiling} for ${p.operationId}`);
  const cas = (to: AuthorizationState, fields: Record<string, string>) =>
    transitionAuthorization(redis, {
      authKey: p.authKey,
      inFlightKey: p.inFlightKey,
      operationId: p.operationId,
      from: ['pending'],
      to,
      nowMs: Date.now(),
      fields,
    });
  if (amount === 0n) {
    const ok = await cas('completed', { settle_amount: '0', amount: '0', tx_hash: '0x' });
    return ok ? 'nothing_to_settle' : recordDeferredCharge(redis, p);
  }
  const ok = await cas('settling', { settle_amount: p.amount, requirements: JSON.stringify({ ...JSON.parse(requirements), amount: p.amount }) });
  return ok ? 'recorded' : recordDeferredCharge(redis, p);
}
