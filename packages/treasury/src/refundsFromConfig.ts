import type { Worker } from 'bullmq';
import type { Chain, Hex } from 'viem';
import { startRefunds, type StartRefundsOptions } from './refunds.js';

/** Options of {@link startRefundsFromConfig}: {@link StartRefundsOptions} with the chain settings as one `payment` object. */
export interface RefundsFromConfigOptions extends Omit<StartRefundsOptions, 'rpcUrl' | 'chain' | 'asset' | 'treasuryPrivateKey'> {
  /**
   * The payment chain settings (`config.payment` of @acg/config): PAYMENT_RPC_URL, its viem chain,
   * the USDC contract (PAYMENT_ASSET) and the treasury key that sends refunds (TREASURY_PRIVATE_KEY).
   */
  payment: { rpcUrl: string; chain: Chain; asset: `0x${string}`; treasuryPrivateKey?: Hex };
}

/**
 * {@link startRefunds} for a process (the gateway's or the worker's) configured by `payment`.
 *
 * @returns the BullMQ worker, or undefined when `payment.treasuryPrivateKey` is unset (refunds then stay `pending`, queued).
 */
export function startRefundsFromConfig(o: RefundsFromConfigOptions): Worker | undefined {
  const { payment, ...rest } = o;
  return startRefunds({ ...rest, rpcUrl: payment.rpcUrl, chain: payment.chain, asset: payment.asset, treasuryPrivateKey: payment.treasuryPrivateKey });
}
