import {
  channelChainViews,
  ChannelSettlement,
  createChannelStorage,
  markChannelUnpaid,
  releaseClaimedCredits,
  type ChannelSettlementOptions,
} from '@acg/channels';
import type { TransferFinalityOptions } from '@acg/treasury';
import { createInProcessFacilitator, createRemoteFacilitator } from '@acg/payments';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import type { Logger } from 'pino';
import type { GatewayConfig } from '@acg/config';
import type { ProviderLedger } from '@acg/provider-ledger';
import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import type { PublicClient } from 'viem';

/** What {@link channelSettlementOf} takes of the worker's services (`WorkerServices`). */
export interface ChannelServices {
  config: GatewayConfig;
  redis: Redis;
  keys: RedisKeys;
  paymentClient: PublicClient;
  providerLedger: Pick<ProviderLedger, 'credit'>;
}

/**
 * The worker's pass over x402 `batch-settlement` channels (packages/channels README "Claims and
 * settlement"), from the configuration: the channels in the deployment's Redis (`createChannelStorage`),
 * the receiver PAY_TO_ADDRESS, the token PAYMENT_ASSET, claims and settlements sent by the facilitator
 * (FACILITATOR_URL, else the in-process one with FACILITATOR_PRIVATE_KEY, the channels' receiverAuthorizer),
 * and the CHANNEL_* settings (`config.channels`); after each settlement, providers' shares of the calls it
 * paid are credited to the provider ledger (`releaseClaimedCredits`). Started with `start(checkIntervalSeconds)`; `over`
 * replaces any option (tests).
 */
export function channelSettlementOf(services: ChannelServices, log: Logger, over: Partial<ChannelSettlementOptions> = {}): ChannelSettlement {
  const { config } = services;
  const { payment, channels } = config;
  const network = `eip155:${payment.chain.id}` as const;
  const facilitator = payment.facilitatorUrl
    ? createRemoteFacilitator(payment.facilitatorUrl)
    : createInProcessFacilitator({ rpcUrl: payment.rpcUrl, chain: payment.chain, signer: payment.facilitatorPrivateKey!, networks: [network] });
  const scheme = new BatchSettlementEvmScheme(payment.payTo, { storage: createChannelStorage({ redis: services.redis, keys: services.keys }) });
  const chain = channelChainViews(services.paymentClient);
  return new ChannelSettlement({
    redis: services.redis,
    keys: services.keys,
    scheme,
    facilitator,
    network,
    token: payment.asset,
    chain,
    claimThreshold: BigInt(channels.claimThresholdBaseUnits),
    claimIntervalSeconds: channels.claimIntervalSeconds,
    withdrawMarginSeconds: channels.withdrawMarginSeconds,
    refundIdleSeconds: channels.refundIdleSeconds,
    // providers' shares of calls paid by voucher: credited once claimed and settled (docs/decisions.md "batch-settlement channels")
    onSettled: async ({ transaction }) => {
      await releaseClaimedCredits({
        redis: services.redis,
        keys: services.keys,
        chain,
        settlement: transaction as `0x${string}`,
        credit: (c) => services.providerLedger.credit(c),
      });
    },
    log,
    ...over,
  });
}

/**
 * The finality round's `onChannelUnpaid` (`TransferFinality` of `@acg/treasury`): a channel whose deposit was
 * reorged out and can no longer be put back is marked unpaid in the deployment's channel storage (the gateway
 * refuses its vouchers) and its accepted-but-unclaimed charges are reported (`markChannelUnpaid`,
 * docs/decisions.md "Confirmations and reorgs").
 */
export function channelUnpaidHandler(
  services: Pick<ChannelServices, 'redis' | 'keys' | 'paymentClient'>,
  log: Logger,
): NonNullable<TransferFinalityOptions['onChannelUnpaid']> {
  const storage = createChannelStorage({ redis: services.redis, keys: services.keys });
  const chain = channelChainViews(services.paymentClient);
  return async ({ operationId, channelId, payer, deposit }) => {
    await markChannelUnpaid({ redis: services.redis, keys: services.keys, storage, chain, channelId, payer, operationId, deposit, log });
  };
}
