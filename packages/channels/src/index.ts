export { channelChainViews, type ChannelChainViews } from './chainViews.js';
export { channelKeys } from './commands/keys.js';
export { recordChannelCredit, releaseClaimedCredits, type ChannelCredit } from './credits.js';
export { ioredisChannelStorageClient } from './redisClient.js';
export {
  CHANNEL_SETTLEMENT_DEFAULTS,
  ChannelSettlement,
  markChannelsSeen,
  nearWithdrawalDeadline,
  unclaimedOf,
  withdrawalDeadline,
  type ChannelPassReport,
  type ChannelSettlementOptions,
} from './settlement.js';
export { markChannelUnpaid, unpaidChannels, type UnpaidChannel } from './unpaid.js';
export { createChannelStorage, type ChannelStorageOptions } from './storage.js';
