import { randomBytes } from 'node:crypto';
import { devPrivateKey, startDevStack, type DevStack } from '@acg/devnet';
import { ulid } from 'ulid';
import { devReceiptKeys } from '@acg/receipts';
import { configFromEnv, type ConfigDefaults, type GatewayConfig } from '@acg/config';
import { createInProcessFacilitator, Paywall } from '@acg/payments';
import { recoverOrphanedPayments, type PaymentRecoveryOptions, type RecoveryRound } from '@acg/reconciliation';
import { TreasurySender } from '@acg/treasury';
import { ProviderLedger } from '@acg/provider-ledger';
import type { FacilitatorClient } from '@x402/core/server';
import { startGateway, type RunningGateway, type StartGatewayOptions } from '../src/app.js';
import { usdcReader } from './x402.js';

/** A running gateway on a fresh dev chain and a private Redis that this test run started. */
export interface RunningTestGateway {
  stack: DevStack;
  gateway: RunningGateway;
  url: string;
  /** `${url}/api/v1/execute`, the paid execute route. */
  executeUrl: string;
  config: GatewayConfig;
  /** The on-chain USDC balance (base units) of an address on the dev payment chain, optionally at a block. */
  usdc: ReturnType<typeof usdcReader>;
}

/** A {@link RunningTestGateway} that its starter stops: `close()` stops the gateway, then the chain and Redis. */
export interface TestGateway extends RunningTestGateway {
  close(): Promise<void>;
}

/**
 * The options of {@link startTestGateway}: the gateway's start options and config overrides, and
 * `stack`: a dev stack the test started itself, used instead of a fresh one (and left running by `close()`).
 */
export type TestGatewayOptions = StartGatewayOptions & {
  config?: ConfigDefaults;
  stack?: DevStack;
  /** The payment RPC URL the gateway uses, given anvil's (e.g. a JSON-RPC proxy counting calls in front of it); default anvil's. */
  paymentRpcUrl?: (anvilUrl: string) => string | Promise<string>;
};

/**
 * Starts anvil (chain id 8453, real USDC, Multicall3), a private redis-server, and the gateway on
 * a free port with the dev accounts (0 facilitator, 1 treasury). Keys carry a unique prefix.
 */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const stack = opts.stack ?? (await startDevStack({ quiet: true, preferPrivateRedis: true }));
  const stopStack = () => (opts.stack ? Promise.resolve() : stack.stop());
  try {
    const config = configFromEnv(
      {},
      {
        port: 0,
        redisUrl: stack.redis.url,
        keyPrefix: `acg:test:${ulid()}:`,
        logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
        probeIntervalSeconds: 0,
        receipts: devReceiptKeys(),
        ...opts.config,
        payment: {
          rpcUrl: opts.paymentRpcUrl ? await opts.paymentRpcUrl(stack.payment.rpcUrl) : stack.payment.rpcUrl,
          payTo: stack.payment.treasury.address,
          facilitatorPrivateKey: devPrivateKey(0),
          treasuryPrivateKey: devPrivateKey(1),
          // a test's own payment settings (e.g. `schemes`) go over the stack's
          ...opts.config?.payment,
        },
        // webhook signing secrets are encrypted at rest in every test stack
        walletMonitor: { webhookPolicy: 'production', webhookSecretKey: randomBytes(32).toString('hex'), ...opts.config?.walletMonitor },
      },
    );
    const gateway = await startGateway(config, opts);
    return {
      stack,
      gateway,
      url: gateway.url,
      executeUrl: `${gateway.url}/api/v1/execute`,
      config,
      usdc: usdcReader(stack.payment.rpcUrl, stack.payment.usdc),
      async close() {
        await gateway.close();
        await stopStack();
      },
    };
  } catch (e) {
    await stopStack();
    throw e;
  }
}

/**
 * One crash-recovery round (`recoverOrphanedPayments`) over `t`'s paid requests, on the gateway's own
 * Redis, keys, payment chain, refund queue, log and credit reversals; `olderThanMs` (default: the
 * sweep's own) is how long a reservation must have made no progress to count as orphaned, and
 * `finishedAnswer` (default none) what the worker passes (`succeededExecutionAnswer` of @acg/execution).
 * Resolves with what the round did (the refunded, released and completed operation ids).
 */
export function recoverPayments(t: RunningTestGateway, opts: Pick<PaymentRecoveryOptions, 'olderThanMs' | 'finishedAnswer'> = {}): Promise<RecoveryRound> {
  const { services } = t.gateway;
  return recoverOrphanedPayments({
    redis: services.redis,
    reversals: services.creditReversal,
    keys: services.keys,
    publicClient: services.paymentClient,
    refunds: services.refunds,
    log: services.log,
    ...opts,
  });
}

/**
 * A Paywall on `gw`'s Redis, chain monitor and refund queue whose facilitator is the in-process one
 * (dev account 0) with `settle` replaced by `settle(inner, payload, requirements)`: a test holds,
 * fails or interrupts settlement deterministically. Assign it to `gw.gateway.services.paywall`
 * to put it on the gateway's paid routes.
 */
export function paywallWithSettle(
  gw: RunningTestGateway,
  settle: (inner: FacilitatorClient, ...args: Parameters<FacilitatorClient['settle']>) => ReturnType<FacilitatorClient['settle']>,
  opts: {
    /** The x402 payment flow (default `authorization`: verify, then settle, as with a remote facilitator; the gateway's own is `upfront`). */
    paymentFlow?: 'authorization' | 'upfront';
    /** Replaces the facilitator's verify (default: the in-process one's). */
    verify?: FacilitatorClient['verify'];
  } = {},
): Paywall {
  const paymentFlow = opts.paymentFlow ?? 'authorization';
  const { services } = gw.gateway;
  const inner = createInProcessFacilitator({
    rpcUrl: gw.config.payment.rpcUrl,
    chain: gw.config.payment.chain,
    signer: devPrivateKey(0),
    networks: ['eip155:8453'],
    monitor: services.paymentChain,
    simulateInSettle: paymentFlow === 'upfront',
  });
  const facilitator: FacilitatorClient = {
    verify: opts.verify ?? ((p, r) => inner.verify(p, r)),
    settle: (p, r) => settle(inner, p, r),
    getSupported: () => inner.getSupported(),
  };
  return new Paywall({
    redis: services.redis,
    keys: services.keys,
    facilitator,
    publicClient: services.paymentClient,
    refunds: services.refunds,
    chain: services.paymentChain,
    log: services.log,
    terms: { ...services.paywall.terms, paymentFlow },
  });
}

/**
 * The gateway's provider ledger as the payout worker builds it (`t`'s Redis, keys, refunds and
 * `providers` config: fee in basis points, dispute window in seconds) with its clock at `now()` (ms
 * since the epoch), e.g. past the dispute window so credits are releasable.
 */
export function providerLedgerAt(t: RunningTestGateway, now: () => number): ProviderLedger {
  const { services } = t.gateway;
  return new ProviderLedger({
    redis: services.redis,
    keys: services.keys,
    feeBps: t.config.providers.feeBps,
    disputeWindowSeconds: t.config.providers.disputeWindowSeconds,
    now,
    refunds: services.refunds,
  });
}

/** A sender of USDC payouts from the dev stack's treasury on `t`'s payment chain (its Redis, keys and `payment` config), for `runPayoutPass`. */
export function treasurySender(t: RunningTestGateway): TreasurySender {
  const { services } = t.gateway;
  return new TreasurySender({
    redis: services.redis,
    keys: services.keys,
    rpcUrl: t.config.payment.rpcUrl,
    chain: t.config.payment.chain,
    treasury: t.stack.payment.treasury,
    asset: t.config.payment.asset,
  });
}
