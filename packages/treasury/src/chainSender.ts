import {
  BaseError,
  keccak256,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Account,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { SerialQueue } from './serialQueue.js';

/**
 * The receipt of `hash`, or undefined when the node has none (not mined, or reorged out); any other
 * failure (the node unreachable) throws: a failed read is never a reason to re-send.
 */
export async function receiptOf(publicClient: PublicClient, hash: Hex): Promise<TransactionReceipt | undefined> {
  try {
    return await publicClient.getTransactionReceipt({ hash });
  } catch (e) {
    if (e instanceof TransactionReceiptNotFoundError || (e instanceof BaseError && e.walk((x) => x instanceof TransactionReceiptNotFoundError)))
      return undefined;
    throw e;
  }
}

/**
 * Fee bump of a replacement transaction (same nonce, higher fee), percent of the replaced one's
 * `maxFeePerGas` and `maxPriorityFeePerGas`: 20 (docs/decisions.md "x402 payments", nonces). Nodes
 * accept a replacement only above the pending one's fees by their own minimum (geth 10 %, others
 * 12.5 %); 20 clears every one of them in one step.
 */
export const REPLACEMENT_FEE_BUMP_PERCENT = 20;

/** A transaction {@link ChainSender} signed and broadcast: raw bytes, hash, nonce and the fees it was signed with. */
export interface SentTransaction {
  raw: Hex;
  hash: Hex;
  nonce: number;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

/** What to send: a call to `to` with `data` (and `value` in wei, `gas` when known). */
export interface TransactionCall {
  to: `0x${string}`;
  data: Hex;
  value?: bigint;
  gas?: bigint;
}

/** The node refused a broadcast, or a transaction's nonce went to another transaction: it can never be mined. */
export class TransactionNotMinedError extends Error {
  override name = 'TransactionNotMinedError';
  constructor(
    message: string,
    readonly hash: Hex,
  ) {
    super(message);
  }
}

export interface ChainSenderOptions {
  /** Reads and broadcasts on the chain (its transport bounds every request). */
  publicClient: PublicClient;
  /** Signs with `account` (a local account: the raw bytes are kept to rebroadcast). */
  wallet: WalletClient;
  account: Account;
  chain: Chain;
  /** How often a receipt wait checks that its transaction is still known to the node, ms (default 2 000). */
  checkEveryMs?: number;
  /** Fee bump of a replacement, percent (default {@link REPLACEMENT_FEE_BUMP_PERCENT}). */
  feeBumpPercent?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sends transactions from one account with nonces that follow the chain (issue 33 item 4), for the
 * in-process facilitator's settlements (and anyone who must re-send: `send` and `waitForReceipt`
 * are the public way to "send this transaction, managing the nonce").
 *
 * - Nonces: every send takes the node's `pending` transaction count at that moment, one send at a
 *   time (prepare → sign → broadcast, serialized), never a counter kept in memory. After any error,
 *   timeout or reorg the next send therefore uses the chain's nonce: a reorg that lowers the
 *   chain's count, or a dropped transaction, cannot leave the sender above the chain (viem's
 *   `nonceManager` keeps a floor of the last nonce it gave, so after a reorg every later settlement
 *   queued behind a gap and the stack wedged until restarted). A broadcast refused with "nonce too
 *   low" re-reads the count and signs again (at most 3 times).
 * - Dropped transactions: {@link waitForReceipt} polls the receipt and, every `checkEveryMs`, asks
 *   the node whether it still knows the transaction. Unknown, with its nonce still unused at the
 *   latest block → rebroadcast the same bytes; refused → replaced: the same call at the same nonce
 *   with fees raised by `feeBumpPercent` (at least the node's current estimate), and the wait
 *   follows the replacement ({@link currentHash}). Unknown with its nonce used by another
 *   transaction → {@link TransactionNotMinedError}: it can never be mined.
 */
export class ChainSender {
  private readonly sends = new SerialQueue();
  /** every transaction sent, by hash, and what it replaced: original hash → latest replacement */
  private readonly sent = new Map<Hex, SentTransaction & { call: TransactionCall }>();
  private readonly replacedBy = new Map<Hex, Hex>();

  constructor(private readonly o: ChainSenderOptions) {}

  get address(): `0x${string}` {
    return this.o.account.address;
  }

  /**
   * Signs and broadcasts `call` at the chain's pending nonce (one send at a time) and returns its hash.
   * @throws the node's refusal (e.g. the call reverts in gas estimation, insufficient funds); nothing was sent.
   */
  send(call: TransactionCall): Promise<Hex> {
    return this.sends.run(async () => {
      for (let attempt = 0; ; attempt++) {
        const nonce = await this.o.publicClient.getTransactionCount({ address: this.address, blockTag: 'pending' });
        const tx = await this.sign(call, nonce);
        try {
          await this.broadcast(tx.raw);
        } catch (e) {
          if (attempt < 2 && nonceTooLow(e)) continue; // the chain moved meanwhile: read it again
          throw e;
        }
        this.sent.set(tx.hash, { ...tx, call });
        return tx.hash;
      }
    });
  }

  /** The hash standing for `hash` now: itself, or the replacement that took its nonce with a higher fee. */
  currentHash(hash: Hex): Hex {
    let h = hash;
    for (let next = this.replacedBy.get(h); next; next = this.replacedBy.get(h)) h = next;
    return h;
  }

  /**
   * Waits for the receipt of `hash` (or of its replacement) up to `timeout` ms (default 60 000),
   * rebroadcasting or replacing it when the node dropped it (see the class comment).
   * @throws {TransactionNotMinedError} its nonce went to another transaction.
   * @throws {Error} timeout: no receipt in time (the transaction may still be mined later).
   */
  async waitForReceipt(p: { hash: Hex; timeout?: number }): Promise<TransactionReceipt> {
    const deadline = Date.now() + (p.timeout ?? 60_000);
    const checkEvery = this.o.checkEveryMs ?? 2_000;
    let nextCheck = Date.now() + checkEvery;
    for (;;) {
      const hash = this.currentHash(p.hash);
      const receipt = (await this.receipt(hash)) ?? (await this.replacedReceipt(p.hash, hash));
      if (receipt) return receipt;
      if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after ${p.timeout ?? 60_000} ms`);
      if (Date.now() >= nextCheck) {
        nextCheck = Date.now() + checkEvery;
        await this.keepAlive(hash).catch((e: unknown) => {
          if (e instanceof TransactionNotMinedError) throw e;
          // a failed read proves nothing: check again later
        });
      }
      await sleep(250);
    }
  }

  /** A dropped transaction is rebroadcast, or replaced with a higher fee; one whose nonce was taken throws. */
  private async keepAlive(hash: Hex): Promise<void> {
    const tx = this.sent.get(hash);
    if (!tx || (await this.known(hash))) return;
    const mined = await this.o.publicClient.getTransactionCount({ address: this.address, blockTag: 'latest' });
    if (mined > tx.nonce) {
      if (await this.receipt(hash)) return; // mined just now
      throw new TransactionNotMinedError(`the nonce ${tx.nonce} of ${hash} went to another transaction`, hash);
    }
    try {
      await this.broadcast(tx.raw);
      return;
    } catch {
      // refused (e.g. its fee is now below the base fee, or another transaction holds the nonce in the pool): replace it
    }
    await this.sends.run(async () => {
      const fees = await this.o.publicClient.estimateFeesPerGas().catch(() => undefined);
      const bump = (v: bigint | undefined, floor: bigint | undefined) => {
        const raised = v === undefined ? undefined : (v * BigInt(100 + (this.o.feeBumpPercent ?? REPLACEMENT_FEE_BUMP_PERCENT)) + 99n) / 100n;
        return raised === undefined ? floor : floor !== undefined && floor > raised ? floor : raised;
      };
      const replacement = await this.sign(tx.call, tx.nonce, {
        maxFeePerGas: bump(tx.maxFeePerGas, fees?.maxFeePerGas),
        maxPriorityFeePerGas: bump(tx.maxPriorityFeePerGas, fees?.maxPriorityFeePerGas),
      });
      // followed before it is broadcast: a refused replacement ("replacement transaction
      // underpriced") is replaced again from its own fees at the next check, so the fee grows
      // until the node takes it instead of retrying the same refused fee until the wait times out
      this.sent.set(replacement.hash, { ...replacement, call: tx.call });
      this.replacedBy.set(hash, replacement.hash);
      await this.broadcast(replacement.raw);
    });
  }

  /** The receipt of any earlier transaction in `original`'s replacement chain (an earlier one may be mined after all). */
  private async replacedReceipt(original: Hex, current: Hex): Promise<TransactionReceipt | undefined> {
    for (let h: Hex | undefined = original; h && h !== current; h = this.replacedBy.get(h)) {
      const r = await this.receipt(h);
      if (r) return r;
    }
    return undefined;
  }

  private async sign(call: TransactionCall, nonce: number, fees?: { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint }): Promise<SentTransaction> {
    const request = await this.o.wallet.prepareTransactionRequest({
      account: this.o.account,
      chain: this.o.chain,
      to: call.to,
      data: call.data,
      nonce,
      ...(call.value !== undefined ? { value: call.value } : {}),
      ...(call.gas !== undefined ? { gas: call.gas } : {}),
      ...(fees?.maxFeePerGas !== undefined ? { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas } : {}),
    } as never);
    const raw = await this.o.wallet.signTransaction(request as never);
    const r = request as { maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint };
    return { raw, hash: keccak256(raw), nonce, maxFeePerGas: r.maxFeePerGas, maxPriorityFeePerGas: r.maxPriorityFeePerGas };
  }

  private async broadcast(raw: Hex): Promise<void> {
    try {
      await this.o.publicClient.sendRawTransaction({ serializedTransaction: raw });
    } catch (e) {
      const msg = String((e as Error)?.message ?? e).toLowerCase();
      if (msg.includes('already known') || msg.includes('already imported')) return;
      throw e;
    }
  }

  /** The receipt, or undefined when the node has none (any other failure throws). */
  private receipt(hash: Hex): Promise<TransactionReceipt | undefined> {
    return receiptOf(this.o.publicClient, hash);
  }

  /** Whether the node knows `hash` (pending or mined). */
  private async known(hash: Hex): Promise<boolean> {
    try {
      await this.o.publicClient.getTransaction({ hash });
      return true;
    } catch (e) {
      if (e instanceof TransactionNotFoundError || (e instanceof BaseError && e.walk((x) => x instanceof TransactionNotFoundError))) return false;
      throw e;
    }
  }
}

function nonceTooLow(e: unknown): boolean {
  return String((e as Error)?.message ?? e)
    .toLowerCase()
    .includes('nonce too low');
}
