import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, http, nonceManager, publicActions, type Chain } from 'viem';
import { isTransportError, type PaymentChainMonitor } from './chainHealth.js';
import { privateKeyToAccount, type LocalAccount } from 'viem/accounts';

/** Options of {@link createInProcessFacilitator}. */
export interface InProcessFacilitatorOptions {
  /** JSON-RPC URL of the payment chain (anvil on the embedded defaults, Base in production). */
  rpcUrl: string;
  /** viem chain of the payment network (id 8453 for Base). */
  chain: Chain;
  /** The account that submits `transferWithAuthorization` and pays gas: a private key or a viem local account. */
  signer: `0x${string}` | LocalAccount;
  /** CAIP-2 networks to register, e.g. `eip155:8453`. */
  networks: `${string}:${string}`[];
  /** Receipt wait bound, milliseconds (default 60 000). */
  confirmationTimeoutMs?: number;
  /**
   * Reports every RPC outcome of the facilitator's client (so the paywall can tell an unreachable
   * node from an invalid payment) and bounds each request by its timeout (PAYMENT_RPC_TIMEOUT_MS).
   * Without it: viem's default http transport (10 s timeout), no retry.
   */
  monitor?: PaymentChainMonitor;
  /**
   * Runs the on-chain simulation of `transferWithAuthorization` inside settle's own re-verify
   * (`simulateInSettle` of @x402/evm's exact facilitator; default false, as in the library). Needed
   * by the x402 `upfront` payment flow, where the resource server settles without calling `verify`
   * first: without it a payment that cannot transfer (balance, used nonce) would be broadcast and
   * revert, with the gas paid for nothing.
   */
  simulateInSettle?: boolean;
}

/**
 * An x402 facilitator running inside this process (docs/decisions.md "x402 payments"): `x402Facilitator`
 * with the exact EVM scheme (EIP-3009 `transferWithAuthorization`), signing with a viem wallet
 * whose account uses viem's `nonceManager`, so concurrent settlements get distinct nonces
 * (without it they fail with "nonce too low" and payments are lost).
 *
 * Returns a `FacilitatorClient` (verify, settle, getSupported) - the same interface as the
 * remote `HTTPFacilitatorClient`, so the paywall does not know which one it talks to.
 */
export function createInProcessFacilitator(opts: InProcessFacilitatorOptions): FacilitatorClient & { address: `0x${string}` } {
  const account: LocalAccount =
    typeof opts.signer === 'string'
      ? privateKeyToAccount(opts.signer, { nonceManager })
      : ({ ...(opts.signer as LocalAccount), nonceManager: (opts.signer as LocalAccount).nonceManager ?? nonceManager } as LocalAccount);
  const client = createWalletClient({
    account,
    chain: opts.chain,
    // no retry: a write must not be re-sent blindly, and a dead node must fail within one timeout
    transport: opts.monitor ? opts.monitor.transport({ retryCount: 0 }) : http(opts.rpcUrl, { retryCount: 0 }),
    pollingInterval: 250,
  }).extend(publicActions);
  // One send at a time from the facilitator wallet: the nonce is taken and the transaction handed
  // to the node as one step. With concurrent sends, one that failed after taking nonce N (viem
  // then resets its nonce manager) left N+1 waiting behind a gap until the next send filled it,
  // and a payment could hang for the whole confirmation timeout. Only the hand-over is serialized
  // (eth_sendRawTransaction answers at once); waiting for receipts stays concurrent.
  const sends = new SerialQueue();
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as never),
      verifyTypedData: (args) => client.verifyTypedData(args as never),
      writeContract: (args) => sends.run(() => client.writeContract({ ...(args as object), account, chain: opts.chain } as never)),
      sendTransaction: (args) => sends.run(() => client.sendTransaction({ ...args, account, chain: opts.chain })),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
      // @x402/evm starts an asset getCode check it may never await (an early return on a bad
      // signature): a rejection there would be unhandled and crash the process. An unreachable
      // node reads as "no code" instead; the transport failure is still recorded by the monitor,
      // so the paywall answers 503, not a payment refusal.
      getCode: (args) =>
        client.getCode(args).catch((e: unknown) => {
          if (isTransportError(e)) return undefined;
          throw e;
        }),
    },
    { confirmationTimeoutMs: opts.confirmationTimeoutMs ?? 60_000 },
  );
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: opts.networks, simulateInSettle: opts.simulateInSettle ?? false });
  return {
    address: account.address,
    verify: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> => facilitator.verify(payload, requirements),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => facilitator.settle(payload, requirements),
    getSupported: async (): Promise<SupportedResponse> => facilitator.getSupported() as SupportedResponse,
  };
}

/**
 * A remote x402 facilitator reached over HTTP (`FACILITATOR_URL`), e.g. a hosted one.
 * Same interface as {@link createInProcessFacilitator}.
 */
export function createRemoteFacilitator(url: string): FacilitatorClient {
  return new HTTPFacilitatorClient({ url });
}

/** Runs async steps one after another, in call order; a failed step does not stop the next. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(step, step);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
