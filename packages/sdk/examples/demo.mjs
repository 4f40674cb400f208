// `npm run demo`: the built SDK against a running gateway.
//
// Discovers the capabilities from /registry, then executes `intelligence.wallet_balances` for the
// demo account's own address, paying the x402 challenge (0.001 USDC) with spend limits of
// 0.03 USDC per call (the liquidation search costs 0.02) and 0.05 USDC in total, and prints the
// result and the payment tx hash; then runs the same capability as a budgeted job (refund of the
// rest) and a paid liquidation search (DEMO_SKIP_EXTRAS=1 skips those).
//
// `npm run demo` builds the SDK quietly first (tsup --silent, packages/sdk/tsup.config.ts only).
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080; `npm start` prints the exact command);
// DEMO_PRIVATE_KEY (0x... hex) to pay with your own key, else dev account 2 of anvil's standard mnemonic (funded with 10,000 USDC on
// the embedded dev chain).
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { GatewayRequestError, createGatewayClient, formatUsdc } from '../dist/index.js';

const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const CAPABILITY = 'intelligence.wallet_balances';
const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';

const account = process.env.DEMO_PRIVATE_KEY ? privateKeyToAccount(process.env.DEMO_PRIVATE_KEY) : mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 2 });

const gateway = createGatewayClient({
  baseUrl,
  account,
  spendLimits: { perCallUsdc: '0.03', totalUsdc: '0.05' },
});

async function main() {
  let capabilities;
  try {
    capabilities = await gateway.capabilities();
  } catch (e) {
    if (e instanceof GatewayRequestError && e.paymentOutcome === 'none') {
      console.error(`No gateway answers at ${baseUrl}: start it with \`npm start\` (or set GATEWAY_URL).`);
      process.exit(1);
    }
    throw e;
  }

  console.log(`Gateway ${baseUrl}: ${capabilities.length} capabilities`);
  const idWidth = Math.max(...capabilities.map((c) => c.id.length));
  for (const c of capabilities) {
    const price = c.price === null ? 'price set per call' : `${c.price} ${c.currency}${c.price_unit ? `/${c.price_unit}` : ''}`;
    console.log(`  ${c.id.padEnd(idWidth)}  ${c.status.padEnd(7)}  ${price}`);
  }

  console.log(`\nExecuting ${CAPABILITY} for ${account.address} (limits: 0.03 USDC per call, 0.05 USDC total)...`);
  const execution = await gateway.execute(CAPABILITY, { address: account.address });

  console.log(`execution_id: ${execution.execution_id}`);
  console.log(`status:       ${execution.status}`);
  console.log('result:', JSON.stringify(execution.result, null, 2));
  console.log(`paid:         ${formatUsdc(BigInt(execution.payment.amount))} USDC (${execution.payment.amount} base units)`);
  console.log(`payment tx:   ${execution.payment.tx_hash}`);
  console.log(`spent by this client: ${gateway.spent().usdc} USDC`);

  // The same capability as a 2-step job with a 0.003 USDC budget: 0.002 spent, 0.001 refunded on-chain.
  if (process.env.DEMO_SKIP_EXTRAS) return;
  console.log('\nA job of two steps with a budget of 0.003 USDC...');
  const job = await gateway.jobs.create({
    objective: 'Read my balances twice',
    budget_usdc: 0.003,
    capabilities: [CAPABILITY],
    steps: [
      { capability_id: CAPABILITY, input: { address: account.address } },
      { capability_id: CAPABILITY, input: { address: account.address, chain: 'base' } },
    ],
  });
  const done = await gateway.jobs.wait(job.job_id, { onProgress: (j) => console.log(`  ${j.status.padEnd(9)} spent ${j.spent_usdc} USDC`) });
  console.log(
    `job ${done.job_id}: ${done.status}, spent ${done.spent_usdc} USDC, refund ${done.refund ? `${formatUsdc(BigInt(done.refund.amount))} USDC tx ${done.refund.tx_hash}` : 'none'}`,
  );

  // Liquidation search (0.02 USDC per query, paid with x402) on the Ethereum dev chain's seeded positions.
  const liq = await gateway.liquidations.search({ chain: 'ethereum', max_health_factor: 1.1, limit: 3 }).catch((e) => e);
  if (liq instanceof Error) console.log(`\nliquidation search: ${liq.message}`);
  else {
    console.log(`\nLiquidation search at block ${liq.block_number}: ${liq.opportunities.length} shown`);
    for (const o of liq.opportunities) {
      console.log(`  ${o.protocol.padEnd(12)} ${o.borrower}  health_factor ${o.health_factor.toFixed(3)}  profit ${o.estimated_profit_usd.toFixed(2)} USD`);
    }
  }
  console.log(`\nspent by this client: ${gateway.spent().usdc} USDC (limit 0.05)`);
}

main().catch((e) => {
  console.error(`demo failed: ${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  process.exit(1);
});
