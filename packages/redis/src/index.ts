export { connectRedis, RedisKeys, type ConnectRedisOptions } from './connection.js';
export { isRedisUnavailable, REDIS_OUTAGE_TOLERANCE_MS, retryWhileRedisUnavailable, waitForRedis } from './availability.js';
export {
  AUTHORIZATION_STATES,
  cancelSubscription,
  claimIdempotencyKey,
  creditAccount,
  debitAccount,
  liquidationSearch,
  readAuthorization,
  releaseAuthorization,
  renewSubscription,
  reserveAuthorization,
  takeLease,
  takeTokens,
  transitionAuthorization,
  type AccountEntryParameters,
  type AccountEntryReturnType,
  type AuthorizationRecord,
  type AuthorizationState,
  type ClaimIdempotencyKeyReturnType,
  type LiquidationSearchParameters,
  type ReserveAuthorizationParameters,
  type ReserveAuthorizationReturnType,
  type TokenBucketReturnType,
  type TransitionAuthorizationParameters,
} from './commands.js';
export { luaSource, withScripts, SCRIPTS, type ScriptName, type ScriptedRedis } from './scripts.js';
