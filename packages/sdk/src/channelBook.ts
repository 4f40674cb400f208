import { InMemoryClientChannelStorage, type ClientChannelStorage } from '@x402/evm/batch-settlement/client';
import { parseUsdc } from './units.js';

/** Options of {@link ChannelBook}: see `GatewayContextOptions.channelStorage` / `channelDepositUsdc`. */
export interface ChannelBookOptions {
  /** A directory for the official file storage, or a caller-supplied `ClientChannelStorage`; default in memory. */
  storage?: string | ClientChannelStorage;
  /** Deposit size, decimal USDC (at most 6 decimals). */
  depositUsdc?: string | number;
}

/**
 * The batch-settlement channels of one client (README "Channels"): where their state is kept (the
 * official `@x402/evm` client channel storage: cumulative charged amount and balance by channel id),
 * the deposit size, a one-shot top-up for the next channel payment, and a lock so that this client
 * signs one channel payment at a time (each voucher builds on the cumulative amount the previous
 * answer confirmed; two at once would sign the same cumulative amount and one would be refused).
 */
export class ChannelBook {
  /** Deposit size in integer USDC base units, when set. */
  readonly depositBaseUnits: bigint | undefined;
  /** A top-up (base units) the next channel payment deposits, set by `topUpChannel`. */
  nextTopUp: bigint | undefined;
  private readonly storageOption: string | ClientChannelStorage | undefined;
  private storagePromise: Promise<ClientChannelStorage> | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(opts: ChannelBookOptions = {}) {
    this.storageOption = opts.storage;
    this.depositBaseUnits = opts.depositUsdc === undefined ? undefined : parseUsdc(opts.depositUsdc, 'channelDepositUsdc');
  }

  /** The channel storage; a directory loads the official `FileClientChannelStorage` (Node only) on first use. */
  storage(): Promise<ClientChannelStorage> {
    this.storagePromise ??= (async () => {
      const s = this.storageOption;
      if (s === undefined) return new InMemoryClientChannelStorage();
      if (typeof s !== 'string') return s;
      const { FileClientChannelStorage } = await import('@x402/evm/batch-settlement/client/file-storage');
      return new FileClientChannelStorage({ directory: s });
    })();
    return this.storagePromise;
  }

  /** Runs `body` when no other channel payment of this client is running (FIFO). */
  async exclusive<T>(body: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    await previous;
    try {
      return await body();
    } finally {
      done();
    }
  }
}
