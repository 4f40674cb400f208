import type { ChannelSettlement, ChannelSettlementOptions } from '@acg/channels';
import { usdcAbi } from '@acg/devnet';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { PERMIT2_ADDRESS, toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme, InMemoryClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { pino } from 'pino';
import { createPublicClient, createWalletClient, http, maxUint256, type LocalAccount, type PublicClient } from 'viem';
import { channelSettlementOf } from '../../../worker/src/channels.js';
import type { TestGateway } from '../harness.js';
import { anvil, type FaultKit } from './faults.js';

// Apart from channelCommands.ts so that `Real` (commands.ts) can hold it without an import circle.

const log = pino({ level: 'silent' });

/** One payer's official `batch-settlement` client of a sequence: its own channel storage (as a client keeps it). */
export interface ChannelPayer {
  client: x402Client;
  http: x402HTTPClient;
  storage: InMemoryClientChannelStorage;
}

/**
 * What the scheme commands keep for one sequence: each payer's official clients, the Permit2 allowances
 * given, and the worker's channel pass.
 */
export class SequenceChannels {
  private readonly payers = new Map<number, ChannelPayer>();
  private readonly approved = new Set<number>();
  readonly publicClient: PublicClient;

  constructor(private readonly r: { t: TestGateway; payers: LocalAccount[]; faults: FaultKit }) {
    this.publicClient = createPublicClient({ chain: r.t.stack.payment.chain, transport: http(r.t.stack.payment.rpcUrl) }) as PublicClient;
  }

  /** The payer's official batch-settlement client (deposits sized by the 402's `minDeposit` hint, 10 calls' worth). */
  payer(i: number): ChannelPayer {
    let p = this.payers.get(i);
    if (!p) {
      const storage = new InMemoryClientChannelStorage();
      const client = new x402Client().register(
        'eip155:*',
        new BatchClientScheme(toClientEvmSigner(this.r.payers[i] as never, this.publicClient as never), { storage }),
      );
      p = { client, http: new x402HTTPClient(client), storage };
      this.payers.set(i, p);
    }
    return p;
  }

  /** Gas for the payer's own transactions (a Permit2 approval, a timed withdrawal): 1 ETH on the dev chain. */
  async gas(i: number): Promise<void> {
    await anvil(this.r.t, 'anvil_setBalance', [this.r.payers[i].address, '0xde0b6b3a7640000']);
  }

  /** The payer lets Permit2 move its USDC (once per sequence), as an `upto` payer must. */
  async approvePermit2(i: number): Promise<void> {
    if (this.approved.has(i)) return;
    await this.gas(i);
    const pay = this.r.t.stack.payment;
    const wallet = createWalletClient({ account: this.r.payers[i], chain: pay.chain, transport: http(pay.rpcUrl) });
    const hash = await wallet.writeContract({ address: pay.usdc, abi: usdcAbi, functionName: 'approve', args: [PERMIT2_ADDRESS, maxUint256] });
    await this.publicClient.waitForTransactionReceipt({ hash });
    this.approved.add(i);
  }

  /** The worker's channel pass (apps/worker `channelSettlementOf`) on the worker's services; `over` replaces options. */
  worker(over: Partial<ChannelSettlementOptions> = {}): ChannelSettlement {
    return channelSettlementOf(this.r.faults.worker, log, { claimIntervalSeconds: 86_400, refundIdleSeconds: 0, ...over });
  }
}
