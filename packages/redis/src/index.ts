export { connectRedis, RedisKeys, type ConnectRedisOptions } from './connection.js';
export { isRedisUnavailable, REDIS_OUTAGE_TOLERANCE_MS, retryWhileRedisUnavailable, waitForRedis } from './availability.js';
export { luaSource, withScripts, SCRIPTS, type ScriptName, type ScriptedRedis } from './scripts.js';
