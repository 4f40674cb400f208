import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchSettlementFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { createWalletClient, encodeFunctionData, http, publicActions, type Abi, type Chain, type PublicClient } from 'viem';
import { ChainSender } from '@acg/treasury';
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

/** The in-process facilitator: an x402 `FacilitatorClient` plus its wallet address and its {@link ChainSender}. */
export type InProcessFacilitator = FacilitatorClient & { address: `0x${string}`; sender: ChainSender };

/**
 * An x402 facilitator running inside this process (docs/decisions.md "x402 payments"): `x402Facilitator`
 * with the exact EVM scheme (EIP-3009 `transferWithAuthorization`), the upto EVM scheme (Permit2
 * through `x402UptoPermit2Proxy.settle`, docs/decisions.md "Payment schemes") and the
 * `batch-settlement` scheme (channel deposits, claims, settlement, refunds; its account is the
 * receiverAuthorizer), sending through a
 * {@link ChainSender}: one send at a time at the chain's `pending` nonce (never a nonce kept in
 * memory, so a reorg or a dropped transaction cannot wedge later settlements behind a gap), and a
 * receipt wait that rebroadcasts or replaces (same nonce, higher fee) a settlement the node dropped.
 * A settlement replaced that way is answered with the replacement's hash (`transaction`).
 *
 * Returns a `FacilitatorClient` (verify, settle, getSupported) - the same interface as the
 * remote `HTTPFacilitatorClient`, so the paywall does not know which one it talks to - plus
 * `address` and `sender`.
 */
export function createInProcessFacilitator(opts: InProcessFacilitatorOptions): InProcessFacilitator {
  const account: LocalAccount = typeof opts.signer === 'string' ? privateKeyToAccount(opts.signer) : opts.signer;
  const client = createWalletClient({
    account,
    chain: opts.chain,
    // no retry: a write must not be re-sent blindly, and a dead node must fail within one timeout
    transport: opts.monitor ? opts.monitor.transport({ retryCount: 0 }) : http(opts.rpcUrl, { retryCount: 0 }),
    pollingInterval: 250,
  }).extend(publicActions);
  const sender = new ChainSender({ publicClient: client as unknown as PublicClient, wallet: client, account, chain: opts.chain });
  const signer = toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as never),
      verifyTypedData: (args) => client.verifyTypedData(args as never),
      writeContract: (args) => {
        const a = args as { address: `0x${string}`; abi: Abi; functionName: string; args?: readonly unknown[]; gas?: bigint };
        return sender.send({ to: a.address, data: encodeFunctionData({ abi: a.abi, functionName: a.functionName, args: a.args } as never), gas: a.gas });
      },
      sendTransaction: (args) => sender.send({ to: args.to, data: args.data }),
      waitForTransactionReceipt: (args) => sender.waitForReceipt({ hash: args.hash, timeout: (args as { timeout?: number }).timeout }),
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
  // x402 `upto` (Permit2 through x402UptoPermit2Proxy): settled by this same wallet, named in the
  // payer's witness (its address is the `facilitatorAddress` of the scheme's /supported extra)
  facilitator.register(opts.networks, new UptoEvmScheme(signer));
  // `batch-settlement` (docs/decisions.md "batch-settlement channels"): deposits, claims, settlements and
  // refunds go through the same ChainSender; the facilitator account also signs as the channels'
  // receiverAuthorizer (`ClaimBatch`, `Refund`), which it advertises in getSupported's `extra`.
  facilitator.register(opts.networks, new BatchSettlementFacilitatorScheme(signer, account));
  return {
    address: account.address,
    sender,
    verify: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> => facilitator.verify(payload, requirements),
    settle: async (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => {
      const settled = (await facilitator.settle(payload, requirements)) as SettleResponse;
      // the settlement the chain holds: a replacement (same nonce, higher fee) has its own hash
      return settled.transaction ? { ...settled, transaction: sender.currentHash(settled.transaction as `0x${string}`) } : settled;
    },
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
