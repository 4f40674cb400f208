import { BATCH_SETTLEMENT_ADDRESS } from '@x402/evm';
import { parseAbi, type Address, type Hex, type PublicClient } from 'viem';

/**
 * The two views of the x402 `batch-settlement` contract the worker reads (its interface as `@x402/evm`
 * and packages/x402-contracts README give it): per channel `(balance, totalClaimed)` and per receiver and
 * token `(totalClaimed, totalSettled)`, token base units.
 */
const VIEWS = parseAbi([
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
]);

/** On-chain reads of the batch settlement contract at its canonical address (`BATCH_SETTLEMENT_ADDRESS`). */
export interface ChannelChainViews {
  /** `channels(id)`: escrowed balance and cumulative claims of a channel, base units. */
  channel(channelId: Hex): Promise<{ balance: bigint; totalClaimed: bigint }>;
  /** `receivers(receiver, token)`: what was claimed for the receiver and what of it was settled (paid out), base units. */
  receiver(receiver: Address, token: Address): Promise<{ totalClaimed: bigint; totalSettled: bigint }>;
  /**
   * `pendingWithdrawals(id)`: the payer's timed withdrawal of a channel, `initiatedAt` in unix seconds (0: none
   * pending), `amount` in base units. The worker reads it: a payer who started a withdrawal and sends no more
   * vouchers is never seen by the gateway's mirror.
   */
  pendingWithdrawal?(channelId: Hex): Promise<{ amount: bigint; initiatedAt: number }>;
}

/** {@link ChannelChainViews} through `client` (the payment chain); errors are viem's. */
export function channelChainViews(client: Pick<PublicClient, 'readContract'>, address: Address = BATCH_SETTLEMENT_ADDRESS): ChannelChainViews {
  return {
    async channel(channelId) {
      const [balance, totalClaimed] = await client.readContract({ address, abi: VIEWS, functionName: 'channels', args: [channelId] });
      return { balance, totalClaimed };
    },
    async receiver(receiver, token) {
      const [totalClaimed, totalSettled] = await client.readContract({ address, abi: VIEWS, functionName: 'receivers', args: [receiver, token] });
      return { totalClaimed, totalSettled };
    },
    async pendingWithdrawal(channelId) {
      const [amount, initiatedAt] = await client.readContract({ address, abi: VIEWS, functionName: 'pendingWithdrawals', args: [channelId] });
      return { amount, initiatedAt: Number(initiatedAt) };
    },
  };
}
