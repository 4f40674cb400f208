export { COMMAND_TIMEOUT_MS, connectRedis, hashTag, parseClusterNodes, RedisKeys, type ConnectRedisOptions } from './connection.js';
export { failFastWhileUnanswered, HEALTH_PING_EVERY_MS, redisHealth, RedisUnanswered, UNANSWERED_AFTER_MS, type RedisHealth } from './failFast.js';
export { isRedisUnavailable, REDIS_OUTAGE_TOLERANCE_MS, retryWhileRedisUnavailable, waitForRedis } from './availability.js';
export { deleteFieldsIfEqual, rateLimitIncrScript, releaseLease, setUnlogged, takeLease } from './commands.js';
export { classify as classifyDurability, readStoreDurability, ReplicaAcks, type DurabilityVerdict, type StoreDurability } from './durability.js';
export {
  LATENCY_BUCKET_CAP,
  LATENCY_BUCKET_MS,
  LATENCY_RETENTION_SECONDS,
  LatencySeries,
  nearestRank,
  type LatencyPoint,
  type LatencyWindow,
} from './latencySeries.js';
export { COMMON_SCRIPTS, luaSource, scriptSet, withScripts, type ScriptedRedis, type ScriptSet } from './scripts.js';
