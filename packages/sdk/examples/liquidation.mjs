// `npm run demo:liquidation`: a searcher's whole loop against a running `npm start` (docs/liquidation-plans.md).
//
// 1. the paid liquidation search (0.02 USDC) on the Ethereum dev chain's lending data;
// 2. a paid plan (mev.liquidation_plan, 0.05 USDC) for the most profitable Aave v3 / Spark opportunity
//    (the protocols with a planner on this gateway; it tries the next one when a plan is refused, free);
// 3. the plan's transactions signed by the searcher and sent with eth_sendBundle to the builder
//    (its URL from /registry, `builder.send_bundle`), the request signed the Flashbots way;
// 4. waits for the target block, then prints each receipt and the searcher's token balance changes
//    next to what the simulation said.
//
// The searcher is dev account 9 (`DEV_ROLES.searcher` of @acg/devnet): `npm start`'s lending seed gives
// it 5,000,000 USDC and DAI on the Ethereum dev chain, and it pays the gateway with its USDC on the
// dev payment chain (it is also a funded buyer there).
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080), ETHEREUM_RPC_URL (default
// http://127.0.0.1:8546, the Ethereum dev chain `npm start` prints), DEMO_PRIVATE_KEY (0x... hex) for another key.
import { createPublicClient, erc20Abi, http, keccak256 } from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { GatewayError, GatewayRequestError, createGatewayClient } from '../dist/index.js';

const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const ethereumRpcUrl = process.env.ETHEREUM_RPC_URL ?? 'http://127.0.0.1:8546';
const searcher = process.env.DEMO_PRIVATE_KEY ? privateKeyToAccount(process.env.DEMO_PRIVATE_KEY) : mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 9 });
const PLANNED = ['aave_v3', 'spark'];

const gateway = createGatewayClient({ baseUrl, account: searcher, spendLimits: { perCallUsdc: '0.05', totalUsdc: '0.3' } });
const eth = createPublicClient({ transport: http(ethereumRpcUrl) });

async function main() {
  let search;
  try {
    search = await gateway.liquidations.search({ protocol: PLANNED, max_health_factor: 1, limit: 20 });
  } catch (e) {
    if (e instanceof GatewayRequestError && e.paymentOutcome === 'none') {
      console.error(`No gateway answers at ${baseUrl}: start it with \`npm start\` (or set GATEWAY_URL).`);
      process.exit(1);
    }
    throw e;
  }
  console.log(
    `Searcher ${searcher.address}; liquidation search at block ${search.block_number}: ${search.opportunities.length} liquidatable on ${PLANNED.join(', ')}`,
  );

  let plan;
  for (const o of search.opportunities) {
    try {
      plan = await gateway.liquidations.plan(o, { searcher: searcher.address });
      break;
    } catch (e) {
      if (!(e instanceof GatewayError) || e.status !== 422) throw e;
      console.log(`  ${o.protocol} ${o.borrower}: refused (${e.problem.reason}), not charged: ${e.detail}`);
    }
  }
  if (!plan) {
    console.log('No opportunity could be planned (restart `npm start` for fresh dev positions).');
    return;
  }
  console.log(`\nPlan for ${plan.protocol} borrower ${plan.borrower}, target block ${plan.target_block} (simulated with ${plan.simulation.method}):`);
  for (const t of plan.transactions) console.log(`  ${t.purpose.padEnd(16)} to ${t.to}  gas ${t.gas}`);
  for (const f of plan.tokens_out) console.log(`  out ${f.amount} ${f.symbol} base units ($${f.usd.toFixed(2)})`);
  for (const f of plan.tokens_in) console.log(`  in  ${f.amount} ${f.symbol} base units ($${f.usd.toFixed(2)})`);
  console.log(`  gas ${plan.gas_used} units at ${plan.base_fee_per_gas} wei = $${plan.gas_cost_usd}; profit after gas $${plan.profit_usd.toFixed(2)}`);

  const tokens = [...new Set([...plan.tokens_in, ...plan.tokens_out].map((f) => f.token))];
  const balances = (blockNumber) =>
    Promise.all(tokens.map((address) => eth.readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [searcher.address], blockNumber })));
  const sent = await gateway.bundles.send(plan, searcher, { ethereumRpcUrl });
  console.log(`\neth_sendBundle: bundle ${sent.bundleHash} for block ${BigInt(sent.blockNumber)} (searcher identity ${sent.searcher})`);

  // the builder builds on each new head and every slot (12 s on the dev chain)
  const deadline = Date.now() + 60_000;
  while ((await eth.getBlockNumber({ cacheTime: 0 })) < BigInt(plan.target_block)) {
    if (Date.now() > deadline) throw new Error(`block ${plan.target_block} did not come within 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const block = await eth.getBlock({ blockNumber: BigInt(plan.target_block) });
  const hashes = sent.txs.map((raw) => keccak256(raw));
  const landed = hashes.every((h) => block.transactions.includes(h));
  console.log(`Block ${block.number}: ${landed ? 'the bundle landed' : 'the bundle is not in it (another block won the slot)'}`);
  if (!landed) return;
  for (const h of hashes) console.log(`  ${h} ${(await eth.getTransactionReceipt({ hash: h })).status}`);
  const [before, after] = [await balances(BigInt(plan.based_on_block)), await balances(BigInt(plan.target_block))];
  tokens.forEach((token, i) => {
    const simulated =
      plan.tokens_in.filter((f) => f.token === token).reduce((s, f) => s + BigInt(f.amount), 0n) -
      plan.tokens_out.filter((f) => f.token === token).reduce((s, f) => s + BigInt(f.amount), 0n);
    const actual = after[i] - before[i];
    console.log(`  ${token}: balance change ${actual} base units, simulated ${simulated} ${actual === simulated ? '(exact)' : '(DIFFERS)'}`);
  });
  console.log(`\nSpent ${gateway.spent().usdc} USDC on the gateway.`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
