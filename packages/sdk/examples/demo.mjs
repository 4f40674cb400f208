// `npm run demo`: the built SDK against a running gateway.
//
// Discovers the capabilities from /registry, then executes `intelligence.wallet_balances` for the
// demo account's own address, paying the x402 challenge (0.001 USDC) with spend limits of
// 0.01 USDC per call and 0.05 USDC in total, and prints the result and the payment tx hash.
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080); DEMO_PRIVATE_KEY (0x... hex) to pay
// with your own key, else dev account 2 of anvil's standard mnemonic (funded with 10,000 USDC on
// the embedded dev chain).
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { GatewayRequestError, createGatewayClient, formatUsdc } from '../dist/index.js';

const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const CAPABILITY = 'intelligence.wallet_balances';
const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';

const account = process.env.DEMO_PRIVATE_KEY
  ? privateKeyToAccount(process.env.DEMO_PRIVATE_KEY)
  : mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 2 });

const gateway = createGatewayClient({
  baseUrl,
  account,
  spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' },
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

  console.log(`\nExecuting ${CAPABILITY} for ${account.address} (limits: 0.01 USDC per call, 0.05 USDC total)...`);
  const execution = await gateway.execute(CAPABILITY, { address: account.address });

  console.log(`execution_id: ${execution.execution_id}`);
  console.log(`status:       ${execution.status}`);
  console.log('result:', JSON.stringify(execution.result, null, 2));
  console.log(`paid:         ${formatUsdc(BigInt(execution.payment.amount))} USDC (${execution.payment.amount} base units)`);
  console.log(`payment tx:   ${execution.payment.tx_hash}`);
  console.log(`spent by this client: ${gateway.spent().usdc} USDC`);
}

main().catch((e) => {
  console.error(`demo failed: ${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  process.exit(1);
});
