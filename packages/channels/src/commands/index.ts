export { channelKeys } from './keys.js';
