import type { Abi, AbiEvent, Address, PublicClient } from 'viem';
import type { LogScan } from './types.js';

/** One decoded event as {@link scanEvents} hands it to an adapter: its name and its arguments by name. */
export interface ScannedEvent {
  eventName: string;
  args: Record<string, unknown>;
}

/**
 * Reads every event of `abi` that `address` emitted in [fromBlock, toBlock] (one `eth_getLogs`,
 * decoded by viem) and hands each, in log order, to `sort`, which adds the positions it names to
 * `scan.discovered` (new borrowers) or `scan.touched` (positions to refresh). A protocol adapter's
 * `scanLogs` (types.ts `ProtocolAdapter`).
 */
export async function scanEvents(
  client: PublicClient,
  address: Address,
  abi: Abi,
  fromBlock: bigint,
  toBlock: bigint,
  sort: (event: ScannedEvent, scan: LogScan) => void,
): Promise<LogScan> {
  const logs = await client.getLogs({ address, events: abi.filter((x): x is AbiEvent => x.type === 'event'), fromBlock, toBlock });
  const scan: LogScan = { discovered: [], touched: [] };
  for (const log of logs) sort(log as unknown as ScannedEvent, scan);
  return scan;
}
