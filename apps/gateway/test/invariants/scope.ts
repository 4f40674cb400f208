// The scope of one sequence of the money invariant suite, apart from conservation.ts so that the
// channel equations (channelTruth.ts), which conservation.ts runs, can name it without an import circle.

type Address = `0x${string}`;

/** What one sequence owns: its payers and provider, and the chain state when it began. */
export interface Scope {
  /** first block of the sequence (its payments, refunds and payouts are mined from here) */
  fromBlock: bigint;
  /** the treasury's USDC balance (base units) at `fromBlock - 1` */
  treasuryBefore: bigint;
  /** the fresh payers of this sequence (every payment into the treasury in range must be theirs) */
  payers: Address[];
  /** each payer's USDC balance (base units) at `fromBlock - 1`, by lower-case address */
  payersBefore: Record<string, bigint>;
  /** the provider registered for this sequence and its capability id (the first of `providerIds` and `capabilityIds`) */
  providerId: string;
  capabilityId: string;
  /** every provider of the sequence: the single-offer provider, then the routed contract's offers */
  providerIds: string[];
  /** every provider capability of the sequence: the single-offer one, then the routed contract */
  capabilityIds: string[];
  /** the x402BatchSettlement contract's USDC balance (the channels' escrow) at `fromBlock - 1` */
  escrowBefore: bigint;
  /** `receivers(treasury, usdc)` of the batch settlement contract at `fromBlock - 1` */
  receiverBefore: { totalClaimed: bigint; totalSettled: bigint };
}
