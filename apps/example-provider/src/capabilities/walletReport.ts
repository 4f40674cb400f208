import { defineProviderCapability, ProviderRunError } from '@acg/provider-kit';
import { erc20Abi, formatUnits, getAddress, multicall3Abi, type Address } from 'viem';
import { z } from 'zod';
import { CHAIN_NAMES, MULTICALL3, onChain, servedChains, type ChainName, type ChainReader } from '../chains.js';
import { AddressInput, AddressOutput, chainEnum, DecimalString, UintString } from '../primitives.js';

/** Most addresses one report reads (more in the objective are left out and listed in `ignored_addresses`). */
export const MAX_REPORT_ADDRESSES = 10;

/** Words that name each chain in an objective (case-insensitive, whole words). */
const CHAIN_WORDS: Record<ChainName, RegExp> = {
  base: /\bbase\b/i,
  ethereum: /\b(ethereum|eth mainnet|mainnet|l1)\b/i,
  arbitrum: /\b(arbitrum|arb|arbitrum one)\b/i,
};

/**
 * What an objective asks for: every `0x` + 40 hex address in it (first occurrence order, deduped
 * case-insensitively) and every chain it names (`base`; `ethereum`/`mainnet`/`L1`; `arbitrum`/`arb`).
 */
export function parseObjective(objective: string): { addresses: Address[]; chains: ChainName[] } {
  const seen = new Set<string>();
  const addresses: Address[] = [];
  for (const m of objective.matchAll(/0x[0-9a-fA-F]{40}(?![0-9a-fA-F])/g)) {
    const key = m[0].toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    addresses.push(getAddress(key));
  }
  // an address's hex must not name a chain ("...base..." cannot occur in hex, but keep the text clean anyway)
  const words = objective.replace(/0x[0-9a-fA-F]+/g, ' ');
  return { addresses, chains: CHAIN_NAMES.filter((c) => CHAIN_WORDS[c].test(words)) };
}

/**
 * `intelligence.wallet_report` (accepts objectives): from a free-text `objective` (plus optional
 * explicit `addresses` and `chains`), reads the native (ETH, wei) and USDC (base units, 6
 * decimals) balance of every address on every chain asked for, one Multicall3 call per chain at
 * its latest block. Chains: those the objective names, else `chains`, else every chain this
 * provider serves; named chains it does not serve are listed in `unavailable_chains`. At most
 * {@link MAX_REPORT_ADDRESSES} addresses. Errors: 422 `no_address` (none found), 422
 * `no_chain` (only unserved chains named), 503 `chain_unavailable`.
 */
export function walletReportCapability(readers: ReadonlyMap<ChainName, ChainReader>) {
  const { names, first } = servedChains(readers);
  const input = z.strictObject({
    objective: z.string().min(1).max(2000).describe('free text naming 0x addresses and, optionally, chains (base, ethereum, arbitrum)'),
    addresses: z.array(AddressInput).max(MAX_REPORT_ADDRESSES).optional().describe('addresses to report besides those in the objective'),
    chains: z.array(chainEnum(names)).min(1).optional().describe('chains to read when the objective names none (default: all served)'),
  });
  const asset = (symbol: z.ZodType<string>, decimals: z.ZodType<number>) =>
    z.object({ symbol, decimals, balance: UintString.describe('base units'), formatted: DecimalString });
  const output = z.object({
    objective: z.string(),
    addresses: z.array(AddressOutput),
    ignored_addresses: z.array(AddressOutput),
    chains: z.array(chainEnum(names)),
    unavailable_chains: z.array(z.enum(CHAIN_NAMES as [ChainName, ...ChainName[]])),
    balances: z.array(
      z.object({
        address: AddressOutput,
        chain: chainEnum(names),
        chain_id: z.int().positive(),
        block_number: UintString,
        native: asset(z.literal('ETH'), z.literal(18)),
        usdc: asset(z.literal('USDC'), z.literal(6)).extend({ token: AddressOutput }),
      }),
    ),
    totals: z.array(z.object({ address: AddressOutput, native_wei: UintString, usdc_base_units: UintString })),
    summary: z.string(),
  });
  return defineProviderCapability({
    name: 'wallet_report',
    product: 'intelligence',
    description: 'Finds the wallet addresses (and chains) named in an objective and reports their native and USDC balances per chain from live chain reads.',
    price_usdc: '0.003',
    timeout_ms: 20_000,
    accepts_objective: true,
    input,
    output,
    example_request: { objective: `Report the ETH and USDC balances of 0x000000000000000000000000000000000000dEaD on ${first.name}` },
    run: async ({ objective, addresses: extra, chains: wanted }) => {
      const parsed = parseObjective(objective);
      const all = [...parsed.addresses];
      for (const a of extra ?? []) if (!all.some((x) => x.toLowerCase() === a.toLowerCase())) all.push(getAddress(a));
      if (all.length === 0) throw new ProviderRunError('no_address', 'The objective names no 0x address (40 hex characters) and no addresses were given.', 422);
      const addresses = all.slice(0, MAX_REPORT_ADDRESSES);
      const named = parsed.chains.length > 0 ? parsed.chains : (wanted ?? names);
      const chains = named.filter((c) => readers.has(c));
      const unavailable = named.filter((c) => !readers.has(c));
      if (chains.length === 0)
        throw new ProviderRunError('no_chain', `This provider does not read ${unavailable.join(', ')}; it reads ${names.join(', ')}.`, 422);

      const perChain = await Promise.all(chains.map((c) => readChain(readers.get(c)!, addresses)));
      const balances = perChain.flat();
      const totals = addresses.map((address) => {
        const rows = balances.filter((b) => b.address === address);
        return {
          address,
          native_wei: rows.reduce((s, b) => s + BigInt(b.native.balance), 0n).toString(),
          usdc_base_units: rows.reduce((s, b) => s + BigInt(b.usdc.balance), 0n).toString(),
        };
      });
      const summary = totals
        .map(
          (t) =>
            `${t.address} holds ${formatUnits(BigInt(t.native_wei), 18)} ETH and ${formatUnits(BigInt(t.usdc_base_units), 6)} USDC across ${chains.join(', ')}`,
        )
        .join('; ');
      return {
        objective,
        addresses,
        ignored_addresses: all.slice(MAX_REPORT_ADDRESSES),
        chains,
        unavailable_chains: unavailable,
        balances,
        totals,
        summary: `${summary}.`,
      };
    },
  });
}

/** Native and USDC balances of `addresses` on one chain at its latest block, one Multicall3 call. */
async function readChain(reader: ChainReader, addresses: Address[]) {
  return onChain(reader, async () => {
    const blockNumber = await reader.client.getBlockNumber();
    const results = await reader.client.multicall({
      contracts: addresses.flatMap((a) => [
        { address: MULTICALL3, abi: multicall3Abi, functionName: 'getEthBalance', args: [a] } as const,
        { address: reader.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [a] } as const,
      ]),
      allowFailure: false,
      blockNumber,
    });
    return addresses.map((address, i) => {
      const native = results[2 * i] as bigint;
      const usdc = results[2 * i + 1] as bigint;
      return {
        address,
        chain: reader.name,
        chain_id: reader.chainId,
        block_number: blockNumber.toString(),
        native: { symbol: 'ETH' as const, decimals: 18 as const, balance: native.toString(), formatted: formatUnits(native, 18) },
        usdc: { symbol: 'USDC' as const, decimals: 6 as const, balance: usdc.toString(), formatted: formatUnits(usdc, 6), token: reader.usdc },
      };
    });
  });
}
