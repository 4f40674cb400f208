import {
  createPublicClient,
  getAddress,
  encodeDeployData,
  encodeFunctionData,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';

/**
 * Sends transactions on an anvil dev node as unlocked/impersonated accounts (`eth_sendTransaction`,
 * gas estimated with a 30% margin, so a reverting call fails here with its reason).
 * Each call waits for the receipt (anvil automines within milliseconds) and throws on a revert.
 */
export class DevSender {
  readonly client: PublicClient;
  constructor(readonly rpcUrl: string) {
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: 30_000 }) }) as PublicClient;
  }

  /** Raw JSON-RPC request. */
  request(method: string, params: unknown[]): Promise<unknown> {
    return this.client.request({ method: method as never, params: params as never });
  }

  /** Sends `data` to `to` from `from`; resolves with the receipt once mined and successful. */
  async sendData(from: Address, to: Address | undefined, data: Hex): Promise<TransactionReceipt> {
    let hash: Hex;
    try {
      const tx = { from, ...(to ? { to } : {}), data };
      // anvil's own estimate is taken a block earlier (older timestamp): interest accrual can then
      // need more gas than estimated, so send with a margin.
      const estimate = BigInt((await this.request('eth_estimateGas', [tx])) as Hex);
      const gas = `0x${((estimate * 13n) / 10n + 30_000n).toString(16)}`;
      hash = (await this.request('eth_sendTransaction', [{ ...tx, gas }])) as Hex;
    } catch (e) {
      const msg = (e as Error).message.split('\n').slice(0, 3).join(' ');
      throw new Error(`DevSender: transaction from ${from} to ${to ?? '(create)'} failed: ${msg}`);
    }
    // Poll the receipt itself: anvil may mine just after answering, and a block watcher that saw
    // its last block before that would wait for a block that never comes.
    let receipt: TransactionReceipt | undefined;
    for (const deadline = Date.now() + 30_000; !receipt; ) {
      receipt = await this.client.getTransactionReceipt({ hash }).catch(() => undefined);
      if (!receipt) {
        if (Date.now() > deadline) throw new Error(`DevSender: transaction ${hash} not mined within 30 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    if (receipt.status !== 'success') {
      const tx = await this.client.getTransaction({ hash });
      let reason = '';
      try {
        await this.client.call({ account: from, to, data, gas: tx.gas, blockNumber: receipt.blockNumber - 1n });
      } catch (e) {
        reason = ` (${(e as { shortMessage?: string }).shortMessage ?? 'revert'})`;
      }
      throw new Error(`DevSender: transaction ${hash} from ${from} reverted${reason}, gas ${receipt.gasUsed}/${tx.gas}`);
    }
    return receipt;
  }

  /** Calls `functionName(args)` on `address` from `from`. */
  write(from: Address, address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []): Promise<TransactionReceipt> {
    return this.sendData(from, address, encodeFunctionData({ abi, functionName, args } as never));
  }

  /** Deploys `bytecode` with constructor `args`; returns the new contract's address. */
  async deploy(from: Address, abi: Abi, bytecode: Hex, args: readonly unknown[] = []): Promise<Address> {
    const receipt = await this.sendData(from, undefined, encodeDeployData({ abi, bytecode, args } as never));
    if (!receipt.contractAddress) throw new Error(`DevSender: deployment ${receipt.transactionHash} created no contract`);
    return getAddress(receipt.contractAddress);
  }

  /** Gives `address` `wei` of ETH and lets it send without a key (anvil impersonation). */
  async fund(address: Address, wei = 10n ** 21n): Promise<void> {
    await this.request('anvil_setBalance', [address, `0x${wei.toString(16)}`]);
    await this.request('anvil_impersonateAccount', [address]);
  }
}
