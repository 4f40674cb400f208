import { startAnvil, type AnvilInstance } from './anvil.js';
import { BASE_CHAIN_ID } from './constants.js';
import { setupPaymentChain, type PaymentChainInfo } from './paymentChain.js';
import { resolveRedis, type RedisHandle, type RedisPersistence } from './redis.js';

/** Options of {@link startDevStack}. */
export type StartDevStackOptions = {
  /** Port of the payment chain's anvil; default: a free port. */
  paymentChainPort?: number;
  /** Use this Redis (see `resolveRedis` `url`). */
  redisUrl?: string;
  /** Always spawn a private Redis (see `resolveRedis` `preferPrivate`). Good for tests. */
  preferPrivateRedis?: boolean;
  /** Persistence of a spawned Redis (see `resolveRedis` `persistence`; default `always`). */
  redisPersistence?: RedisPersistence;
  /** `true` (default): keep anvil's log to itself; `false`: forward it to stderr and log the Redis choice. */
  quiet?: boolean;
};

/** The embedded defaults, running. */
export type DevStack = {
  /** The payment chain (chain id 8453) with its anvil process. */
  payment: PaymentChainInfo & { anvil: AnvilInstance };
  /** The Redis in use (spawned or found). */
  redis: RedisHandle;
  /** Stops the anvil and a spawned Redis (a found Redis is left alone). Idempotent; never throws. */
  stop(): Promise<void>;
};

/**
 * Starts the embedded defaults in parallel: an anvil payment chain with chain id 8453 set up by
 * `setupPaymentChain` (Multicall3, real USDC at the Base address, 8 funded buyers), and a Redis from
 * `resolveRedis`. This is what integration tests (once per file) and the `npm start` launcher call.
 *
 * @param opts - See {@link StartDevStackOptions}.
 * @returns A {@link DevStack}. Whatever started is stopped again if another part fails.
 * @throws {Error} From `startAnvil`, `setupPaymentChain` or `resolveRedis` (e.g. redis-server not installed).
 *
 * @example
 * const stack = await startDevStack({ preferPrivateRedis: true })
 * // stack.payment.rpcUrl, stack.payment.usdc, stack.payment.buyers[0], stack.redis.url
 * await stack.stop()
 */
export async function startDevStack(opts: StartDevStackOptions = {}): Promise<DevStack> {
  const quiet = opts.quiet ?? true;
  const paymentPromise = (async () => {
    const anvil = await startAnvil({ chainId: BASE_CHAIN_ID, port: opts.paymentChainPort, quiet });
    try {
      return { ...(await setupPaymentChain(anvil.rpcUrl)), anvil };
    } catch (err) {
      await anvil.stop();
      throw err;
    }
  })();
  const redisPromise = resolveRedis({
    url: opts.redisUrl,
    preferPrivate: opts.preferPrivateRedis,
    persistence: opts.redisPersistence,
    log: quiet ? undefined : (msg) => console.error(msg),
  });

  const [payment, redis] = await Promise.allSettled([paymentPromise, redisPromise]);
  if (payment.status === 'rejected' || redis.status === 'rejected') {
    await Promise.allSettled([
      payment.status === 'fulfilled' ? payment.value.anvil.stop() : undefined,
      redis.status === 'fulfilled' ? redis.value.stop() : undefined,
    ]);
    throw payment.status === 'rejected' ? payment.reason : (redis as PromiseRejectedResult).reason;
  }

  let stopping: Promise<void> | undefined;
  return {
    payment: payment.value,
    redis: redis.value,
    stop: () => (stopping ??= Promise.allSettled([payment.value.anvil.stop(), redis.value.stop()]).then(() => undefined)),
  };
}
