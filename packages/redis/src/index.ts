export { connectRedis, RedisKeys, type ConnectRedisOptions } from './connection.js';
export { luaSource, withScripts, SCRIPTS, type ScriptName, type ScriptedRedis } from './scripts.js';
