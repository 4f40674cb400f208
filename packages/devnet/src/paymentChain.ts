import { installX402Contracts } from '@acg/x402-contracts';
import type { Address, Chain } from 'viem';
import type { HDAccount } from 'viem/accounts';
import { devAccount, DEV_ROLES } from './accounts.js';
import { devClients } from './clients.js';
import { BUYER_USDC_FUNDING } from './constants.js';
import { installMulticall3 } from './multicall3.js';
import { installPermit2 } from './permit2/index.js';
import { installUsdc, mintUsdcBatch, usdcBalance } from './usdc.js';

/** A ready payment chain: where things are and who is who (docs/decisions.md "The dev chain"). */
export type PaymentChainInfo = {
  /** Chain id the node reports (8453 for the embedded payment chain). */
  chainId: number;
  /** CAIP-2 id for x402, e.g. `eip155:8453`. */
  network: `eip155:${number}`;
  /** HTTP JSON-RPC URL. */
  rpcUrl: string;
  /** viem chain for the node (id, RPC URL, Multicall3). */
  chain: Chain;
  /** USDC (FiatTokenV2_2) address, the Base one: `0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`. */
  usdc: Address;
  /** Multicall3 address `0xcA11bde05977b3631167028862bE2a173976CA11`. */
  multicall3: Address;
  /** Uniswap Permit2 at its canonical address `0x000000000022D473030F116dDEE9F6B43aC78BA3` (x402 `upto`, `exact` via Permit2). */
  permit2: Address;
  /** Our dev-chain build of `x402ExactPermit2Proxy` at `0x402085c248EeA27D92E8b30b2C58ed07f9E20001` (x402 `exact`, `permit2` asset transfer method; `@acg/x402-contracts`). */
  exactPermit2Proxy: Address;
  /** Our dev-chain build of `x402UptoPermit2Proxy` at `0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002` (x402 `upto`; `@acg/x402-contracts`). */
  uptoPermit2Proxy: Address;
  /** Our dev-chain build of `x402BatchSettlement` at `0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003` (x402 `batch-settlement`). */
  batchSettlement: Address;
  /** Our dev-chain build of `ERC3009DepositCollector` at `0x4020806089470a89826cB9fB1f4059150b550004` (channel deposits by ERC-3009). */
  erc3009DepositCollector: Address;
  /** Our dev-chain build of `Permit2DepositCollector` at `0x4020425FAf3B746C082C2f942b4E5159887B0005` (channel deposits by Permit2). */
  permit2DepositCollector: Address;
  /** Dev account 0: deployed and owns USDC (sole minter), pays gas for settlements. */
  facilitator: HDAccount;
  /** Dev account 1: the gateway's x402 payTo. Holds no USDC at start. */
  treasury: HDAccount;
  /** Dev accounts 2 to 9, each holding {@link BUYER_USDC_FUNDING} (10,000 USDC) at start. */
  buyers: HDAccount[];
};

/**
 * Turns a fresh anvil node into the payment chain: Multicall3, Uniswap Permit2 and our dev builds of the x402
 * contracts (`exact` and `upto` Permit2 proxies, batch settlement and its ERC-3009 and Permit2 deposit
 * collectors; `@acg/x402-contracts`)
 * at their canonical addresses,
 * real USDC at the Base address (owner and minter: the facilitator), and each buyer (dev accounts 2 to 9) topped up to
 * 10,000 USDC (`10_000_000_000n` base units). Safe to run twice on one node (nothing is doubled). All ten dev accounts already hold 10,000 ETH from anvil.
 *
 * @param rpcUrl - HTTP JSON-RPC URL of an anvil node (any chain id; the embedded default uses 8453).
 * @returns {@link PaymentChainInfo}.
 * @throws {Error} From {@link installMulticall3}, {@link installPermit2}, {@link installUsdc} or minting (node unreachable, revert).
 *
 * @example
 * const anvil = await startAnvil({ chainId: 8453 })
 * const pay = await setupPaymentChain(anvil.rpcUrl) // pay.network === 'eip155:8453'
 */
export async function setupPaymentChain(rpcUrl: string): Promise<PaymentChainInfo> {
  const { chain } = await devClients(rpcUrl);
  const facilitator = devAccount(DEV_ROLES.facilitator);
  const treasury = devAccount(DEV_ROLES.treasury);
  const buyers = DEV_ROLES.buyers.map((i) => devAccount(i));

  const [multicall3, permit2, usdc] = await Promise.all([installMulticall3(rpcUrl), installPermit2(rpcUrl), installUsdc(rpcUrl, { owner: facilitator })]);
  const x402 = await installX402Contracts(rpcUrl);
  // Top up to the funding level, so running setup twice on one node does not double the balances.
  const balances = await Promise.all(buyers.map((b) => usdcBalance(rpcUrl, b.address, usdc.address)));
  const mints = buyers.map((b, i) => ({ to: b.address, amount: BUYER_USDC_FUNDING - balances[i] })).filter((m) => m.amount > 0n);
  if (mints.length > 0) await mintUsdcBatch(rpcUrl, mints, { address: usdc.address, minter: facilitator });

  return {
    chainId: chain.id,
    network: `eip155:${chain.id}`,
    rpcUrl,
    chain,
    usdc: usdc.address,
    multicall3,
    permit2: permit2.address,
    exactPermit2Proxy: x402.exactPermit2Proxy,
    uptoPermit2Proxy: x402.uptoPermit2Proxy,
    batchSettlement: x402.batchSettlement,
    erc3009DepositCollector: x402.erc3009DepositCollector,
    permit2DepositCollector: x402.permit2DepositCollector,
    facilitator,
    treasury,
    buyers,
  };
}
