import { createChannelStorage } from '@acg/channels';
import type { Channel } from '@x402/evm/batch-settlement/server';
import type { RunningTestGateway } from './harness.js';

/**
 * The x402 `batch-settlement` channels of `payer` (an address, any case) as the test gateway `t` stores
 * them (@acg/channels storage on its own Redis connection and key prefix; packages/channels README "Storage").
 */
export async function channelsOfPayer(t: RunningTestGateway, payer: string): Promise<Channel[]> {
  const { redis, keys } = t.gateway.services;
  const all = await createChannelStorage({ redis, keys }).list();
  return all.filter((c) => c.channelConfig.payer.toLowerCase() === payer.toLowerCase());
}
