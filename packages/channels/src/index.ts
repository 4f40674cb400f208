export { channelKeys } from './commands/keys.js';
export { ioredisChannelStorageClient } from './redisClient.js';
export { createChannelStorage, type ChannelStorageOptions } from './storage.js';
