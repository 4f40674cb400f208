import { defineProviderCapability } from '@acg/provider-kit';
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeEventLog,
  decodeFunctionResult,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  multicall3Abi,
  parseAbi,
  type Address,
  type Hex,
  type Log,
} from 'viem';
import { simulateBlocks } from 'viem/actions';
import { z } from 'zod';
import { MULTICALL3, onChain, servedChains, type ChainName, type ChainReader } from '../chains.js';
import { AddressInput, AddressOutput, chainEnum, HexBytes, IntString, UintString } from '../primitives.js';

/** Where `eth_simulateV1` with `traceTransfers` reports native (ETH) movements, as ERC-20-style `Transfer` logs. */
const NATIVE_TRANSFER_ADDRESS = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/** Most (address, asset) pairs whose balances one simulation reads before and after. */
const MAX_BALANCE_READS = 60;

/**
 * Events decoded by name (ERC-20 and ERC-721 share `Transfer`/`Approval` signatures and differ in
 * indexed topics: ERC-20 has 3 topics and the amount in data, ERC-721 4 topics with the token id).
 */
const erc20Events = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event Deposit(address indexed dst, uint256 wad)',
  'event Withdrawal(address indexed src, uint256 wad)',
]);
const erc721Events = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)',
  'event ApprovalForAll(address indexed owner, address indexed operator, bool approved)',
]);

type DecodedLog = {
  index: number;
  address: Address;
  event: string | null;
  standard: 'erc20' | 'erc721' | 'weth' | null;
  args: Record<string, string> | null;
  topics: Hex[];
  data: Hex;
};

function decodeLog(log: Log, index: number): DecodedLog {
  const topics = log.topics as Hex[];
  const base = { index, address: getAddress(log.address), topics, data: log.data };
  for (const [abi, standard] of [
    [erc721Events, 'erc721'],
    [erc20Events, 'erc20'],
  ] as const) {
    try {
      const decoded = decodeEventLog({ abi, topics: topics as [Hex, ...Hex[]], data: log.data, strict: true });
      const args = Object.fromEntries(
        Object.entries(decoded.args as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v) ? getAddress(v) : String(v),
        ]),
      );
      const kind = decoded.eventName === 'Deposit' || decoded.eventName === 'Withdrawal' ? 'weth' : standard;
      return { ...base, event: decoded.eventName, standard: kind, args };
    } catch {
      // not this standard's shape (topic count or data length differ)
    }
  }
  return { ...base, event: null, standard: null, args: null };
}

const topicAddress = (topic: Hex | undefined): Address | undefined => (topic && topic.length === 66 ? getAddress(`0x${topic.slice(26)}`) : undefined);

/**
 * `mev.simulate_transaction`: runs one transaction `{from, to, data, value}` on top of the latest
 * block with `eth_simulateV1` (no signature, no gas payment, nothing sent) and reports:
 * `success`, `gas_used`, `return_data`, `error` (revert reason, if any); `balance_changes` of every
 * address involved (`from`, `to` and each party of a token or native transfer) in ETH (wei) and in
 * every ERC-20 that moved (token base units), read with Multicall3 before and after (`before`,
 * `after`, signed `delta`; rows with a zero delta are left out); `native_transfers` (internal ETH
 * movements, from `traceTransfers`); `logs` with ERC-20/ERC-721 `Transfer`/`Approval`,
 * `ApprovalForAll` and WETH `Deposit`/`Withdrawal` decoded (`args` as strings), others raw.
 * Gas fees are not charged in the simulation, so native deltas exclude them.
 */
export function simulateTransactionCapability(readers: ReadonlyMap<ChainName, ChainReader>) {
  const { names, first } = servedChains(readers);
  const input = z.strictObject({
    chain: chainEnum(names).describe('chain to simulate on'),
    from: AddressInput.describe('sender (msg.sender); no signature needed'),
    to: AddressInput.describe('recipient or contract'),
    data: HexBytes.default('0x').describe('calldata'),
    value: UintString.default('0').describe('wei sent with the call'),
  });
  const output = z.object({
    chain: chainEnum(names),
    chain_id: z.int().positive(),
    block_number: UintString.describe('the block the transaction was simulated on top of'),
    success: z.boolean(),
    gas_used: UintString,
    return_data: HexBytes,
    error: z.string().nullable().describe('revert reason or error, null on success'),
    balance_changes: z.array(
      z.object({
        address: AddressOutput,
        asset: z.union([z.literal('native'), AddressOutput]).describe('"native" (ETH, wei) or the ERC-20 contract'),
        symbol: z.string().nullable(),
        decimals: z.int().nullable(),
        before: UintString,
        after: UintString,
        delta: IntString,
      }),
    ),
    native_transfers: z.array(z.object({ from: AddressOutput, to: AddressOutput, value: UintString })),
    logs: z.array(
      z.object({
        index: z.int().nonnegative(),
        address: AddressOutput,
        event: z.string().nullable(),
        standard: z.enum(['erc20', 'erc721', 'weth']).nullable(),
        args: z.record(z.string(), z.string()).nullable(),
        topics: z.array(HexBytes),
        data: HexBytes,
      }),
    ),
  });
  const spender = '0x000000000000000000000000000000000000dEaD';
  return defineProviderCapability({
    name: 'simulate_transaction',
    product: 'mev',
    description:
      'Simulates a transaction on the latest block (eth_simulateV1) and returns the native and ERC-20 balance changes of every address involved and its decoded Transfer and Approval logs.',
    price_usdc: '0.005',
    timeout_ms: 20_000,
    input,
    output,
    example_request: {
      chain: first.name,
      from: '0x0000000000000000000000000000000000000001',
      to: first.usdc,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, 1_000_000n] }),
    },
    run: async ({ chain, from: rawFrom, to: rawTo, data, value }) => {
      const reader = readers.get(chain)!;
      const from = getAddress(rawFrom);
      const to = getAddress(rawTo);
      const tx = { from, to, data: data as Hex, value: BigInt(value) };
      return onChain(reader, async () => {
        const blockNumber = await reader.client.getBlockNumber();
        const [simulated] = await simulateBlocks(reader.client, { blockNumber, traceTransfers: true, validation: false, blocks: [{ calls: [tx] }] });
        const call = simulated.calls[0];
        const rawLogs = (call.logs ?? []) as Log[];
        const nativeLogs = rawLogs.filter((l) => l.address.toLowerCase() === NATIVE_TRANSFER_ADDRESS);
        const logs = rawLogs.filter((l) => l.address.toLowerCase() !== NATIVE_TRANSFER_ADDRESS).map(decodeLog);
        const nativeTransfers = nativeLogs.flatMap((l) => {
          const [, f, t] = l.topics as Hex[];
          const a = topicAddress(f);
          const b = topicAddress(t);
          return a && b ? [{ from: a, to: b, value: BigInt(l.data).toString() }] : [];
        });

        // who and what to read: every party of a transfer, for the native coin and each ERC-20 that moved
        const parties = new Set<Address>([from, to, ...nativeTransfers.flatMap((t) => [t.from, t.to])]);
        const tokenParties = new Map<Address, Set<Address>>();
        for (const l of logs) {
          if (l.standard !== 'erc20' || l.event !== 'Transfer' || !l.args) continue;
          const holders = tokenParties.get(l.address) ?? new Set<Address>();
          for (const who of [l.args.from, l.args.to] as Address[]) {
            if (who !== '0x0000000000000000000000000000000000000000') holders.add(who);
          }
          tokenParties.set(l.address, holders);
          for (const who of holders) parties.add(who);
        }
        parties.delete('0x0000000000000000000000000000000000000000');
        const reads: { address: Address; asset: 'native' | Address }[] = [
          ...[...parties].map((address) => ({ address, asset: 'native' as const })),
          ...[...tokenParties].flatMap(([token, holders]) => [...holders].map((address) => ({ address, asset: token }))),
        ].slice(0, MAX_BALANCE_READS);
        const calls = reads.map((r) => ({
          target: r.asset === 'native' ? MULTICALL3 : r.asset,
          allowFailure: true,
          callData:
            r.asset === 'native'
              ? encodeFunctionData({ abi: multicall3Abi, functionName: 'getEthBalance', args: [r.address] })
              : encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [r.address] }),
        }));
        const aggregate = encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [calls] });
        const decodeBalances = (hex: Hex) =>
          decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: hex }).map((r) =>
            r.success && r.returnData.length === 66 ? BigInt(r.returnData) : null,
          );

        const tokens = [...tokenParties.keys()];
        const [before, after, metadata] = await Promise.all([
          reads.length ? reader.client.call({ to: MULTICALL3, data: aggregate, blockNumber }).then((r) => decodeBalances(r.data ?? '0x')) : [],
          reads.length
            ? simulateBlocks(reader.client, {
                blockNumber,
                validation: false,
                blocks: [{ calls: [tx] }, { calls: [{ to: MULTICALL3, data: aggregate }] }],
              }).then(([, post]) => decodeBalances(post.calls[0].data))
            : [],
          tokens.length
            ? reader.client.multicall({
                contracts: tokens.flatMap((t) => [
                  { address: t, abi: erc20Abi, functionName: 'symbol' } as const,
                  { address: t, abi: erc20Abi, functionName: 'decimals' } as const,
                ]),
                allowFailure: true,
                blockNumber,
              })
            : [],
        ]);
        const meta = new Map(
          tokens.map((t, i) => {
            const symbol = metadata[2 * i];
            const decimals = metadata[2 * i + 1];
            return [
              t,
              {
                symbol: symbol?.status === 'success' ? String(symbol.result) : null,
                decimals: decimals?.status === 'success' ? Number(decimals.result) : null,
              },
            ];
          }),
        );
        const balanceChanges = reads.flatMap((r, i) => {
          const b = before[i];
          const a = after[i];
          if (b === null || a === null || b === undefined || a === undefined || a === b) return [];
          const m = r.asset === 'native' ? { symbol: 'ETH', decimals: 18 } : (meta.get(r.asset) ?? { symbol: null, decimals: null });
          return [{ address: r.address, asset: r.asset, ...m, before: b.toString(), after: a.toString(), delta: (a - b).toString() }];
        });

        return {
          chain,
          chain_id: reader.chainId,
          block_number: blockNumber.toString(),
          success: call.status === 'success',
          gas_used: call.gasUsed.toString(),
          return_data: call.data,
          error: call.status === 'success' ? null : errorText(call.error),
          balance_changes: balanceChanges,
          native_transfers: nativeTransfers,
          logs,
        };
      });
    },
  });
}

/**
 * A failed call's reason for people: `reverted: <reason>` (Error(string)), `reverted: Panic...`,
 * `reverted with custom error 0x<selector>`, `reverted without a reason`, or the first line of
 * viem's `shortMessage` for other failures (at most 300 characters; never an RPC URL).
 */
function errorText(error: unknown): string {
  let text = error instanceof Error ? error.message : 'execution failed';
  if (error instanceof BaseError) {
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) {
      if (reverted.reason) text = `reverted: ${reverted.reason}`;
      else if (reverted.signature) text = `reverted with custom error ${reverted.signature}`;
      else text = 'reverted without a reason';
    } else {
      text = error.shortMessage.split('\n')[0];
    }
  }
  return text.replace(/https?:\/\/\S+/g, '<url>').slice(0, 300);
}
