import { decodeErrorResult, getAddress, hexToBigInt, toHex, type Address, type Hex, type PublicClient } from 'viem';

/** ERC-20 `Transfer(address,address,uint256)` topic. */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** ERC-7528 pseudo-address `traceTransfers` uses for native ETH moves (not a token: left out of the flows). */
const ETH_PSEUDO_TOKEN = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/** One call of the simulated plan, sent by the searcher. */
export interface SimulatedCall {
  to: Address;
  data: Hex;
  value: bigint;
}

/** Outcome of one call: status, gas used (units), and the revert reason when it reverted. */
export interface SimulatedCallResult {
  status: 'success' | 'reverted';
  gasUsed: bigint;
  /** Decoded `Error(string)` / `Panic(uint256)`, or the node's message, for a revert. */
  reason?: string;
}

/** An ERC-20 transfer the simulation logged (base units). */
export interface SimulatedTransfer {
  token: Address;
  from: Address;
  to: Address;
  amount: bigint;
}

/** What {@link simulatePlanCalls} saw. */
export interface PlanSimulation {
  calls: SimulatedCallResult[];
  transfers: SimulatedTransfer[];
  gasUsed: bigint;
}

/** Where the plan is simulated: on the state after block `parent`, as block `parent + 1` at `timestamp`. */
export interface PlanSimulationTarget {
  parent: bigint;
  timestamp: bigint;
}

function revertReason(data: Hex | undefined, fallback: string | undefined): string {
  if (data && data !== '0x') {
    try {
      const e = decodeErrorResult({ data });
      if (e.errorName === 'Error') return String(e.args?.[0]);
      if (e.errorName === 'Panic') return `panic ${String(e.args?.[0])}`;
    } catch {
      return `custom error ${data.slice(0, 10)}`;
    }
  }
  return fallback ? fallback.split('\n')[0].slice(0, 160) : 'execution reverted';
}

/**
 * Runs `calls` in order from `from` with `eth_simulateV1` (one block: number `parent + 1`, time
 * `timestamp`, on the state of `parent`; `traceTransfers: true`, `validation: false`, so no gas is
 * paid and nonces are the node's) and returns each call's status and gas, and every ERC-20
 * `Transfer` log of the successful calls. A reverted call stops nothing in the node; the caller
 * decides (a plan with a reverted call is refused). Throws when the node refuses the request.
 */
export async function simulatePlanCalls(
  client: PublicClient,
  from: Address,
  calls: readonly SimulatedCall[],
  target: PlanSimulationTarget,
): Promise<PlanSimulation> {
  type RpcCallResult = {
    status: Hex;
    gasUsed: Hex;
    returnData: Hex;
    logs?: { address: Address; topics: Hex[]; data: Hex }[];
    error?: { message?: string; data?: Hex };
  };
  const res = (await client.request({
    method: 'eth_simulateV1' as never,
    params: [
      {
        blockStateCalls: [
          {
            blockOverrides: { number: toHex(target.parent + 1n), time: toHex(target.timestamp) },
            calls: calls.map((c) => ({ from, to: c.to, input: c.data, value: toHex(c.value) })),
          },
        ],
        traceTransfers: true,
        validation: false,
      },
      toHex(target.parent),
    ] as never,
  })) as unknown as { calls: RpcCallResult[] }[];
  const results = res[0]?.calls ?? [];
  const out: SimulatedCallResult[] = [];
  const transfers: SimulatedTransfer[] = [];
  let gasUsed = 0n;
  for (const r of results) {
    const used = hexToBigInt(r.gasUsed);
    gasUsed += used;
    if (r.status !== '0x1') {
      out.push({ status: 'reverted', gasUsed: used, reason: revertReason(r.error?.data ?? r.returnData, r.error?.message) });
      continue;
    }
    out.push({ status: 'success', gasUsed: used });
    for (const log of r.logs ?? []) {
      if (log.address.toLowerCase() === ETH_PSEUDO_TOKEN) continue;
      if (log.topics[0] !== TRANSFER_TOPIC || log.topics.length !== 3) continue;
      transfers.push({
        token: getAddress(log.address),
        from: getAddress(`0x${log.topics[1].slice(26)}`),
        to: getAddress(`0x${log.topics[2].slice(26)}`),
        amount: hexToBigInt(log.data),
      });
    }
  }
  return { calls: out, transfers, gasUsed };
}

/**
 * EIP-1559 base fee of the block after `parent` (wei): the parent's base fee moved by at most 1/8
 * towards the gas target (half the gas limit), as every execution client computes it.
 */
export function nextBaseFee(parent: { baseFeePerGas: bigint | null; gasUsed: bigint; gasLimit: bigint }): bigint {
  const base = parent.baseFeePerGas ?? 0n;
  const target = parent.gasLimit / 2n;
  if (target === 0n || parent.gasUsed === target) return base;
  if (parent.gasUsed > target) {
    const delta = (base * (parent.gasUsed - target)) / target / 8n;
    return base + (delta > 1n ? delta : 1n);
  }
  return base - (base * (target - parent.gasUsed)) / target / 8n;
}
