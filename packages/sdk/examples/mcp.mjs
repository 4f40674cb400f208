// `npm run demo:mcp`: an agent's view of the gateway over MCP, with the built SDK paying.
//
// Connects the official MCP client (@modelcontextprotocol/sdk) to `{GATEWAY_URL}/mcp`, lists the
// tools, calls the free `search_capabilities`, then calls the paid tool
// `intelligence_wallet_balances` through `gateway.mcp.callTool`, which answers the x402
// PaymentRequired with one signed payment (0.001 USDC; spend limits 0.01 USDC per call, 0.05 USDC
// in total) and prints the result and the payment transaction (packages/sdk/README.md "MCP").
// The tool list marks each tool free or paid, with its price in USDC (gateway_jobs: the budget you set).
//
// Environment: as the demo (demo.mjs): GATEWAY_URL (default http://127.0.0.1:8080; `npm start`
// prints the exact command), DEMO_PRIVATE_KEY (0x... hex), else dev account 2 of anvil's standard
// mnemonic (funded with 10,000 USDC on the embedded dev chain).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { createGatewayClient, formatUsdc } from '../dist/index.js';

const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const TOOL = 'intelligence_wallet_balances';
const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const account = process.env.DEMO_PRIVATE_KEY ? privateKeyToAccount(process.env.DEMO_PRIVATE_KEY) : mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 2 });

const gateway = createGatewayClient({ baseUrl, account, spendLimits: { perCallUsdc: '0.01', totalUsdc: '0.05' } });
const mcp = new Client({ name: 'acg-mcp-example', version: '1.0.0' });

async function main() {
  try {
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)));
  } catch (e) {
    console.error(`No MCP server answers at ${baseUrl}/mcp (${e.message}): start the gateway with \`npm start\` (or set GATEWAY_URL).`);
    process.exit(1);
  }
  const { tools } = await mcp.listTools();
  console.log(`MCP ${baseUrl}/mcp: ${tools.length} tools`);
  // a tool is paid when its _meta says x402: a fixed price in USDC, or (gateway_jobs) the budget the caller sets
  const priceOf = (t) =>
    t._meta?.payment !== 'x402'
      ? 'free'
      : t._meta.price_base_units === null
        ? `paid: the ${t._meta.price_unit} you set (x402)`
        : `paid: ${t._meta.price_usdc ?? formatUsdc(BigInt(t._meta.price_base_units))} USDC per ${t._meta.price_unit ?? 'call'} (x402)`;
  for (const t of tools) console.log(`  ${t.name.padEnd(36)} ${priceOf(t)}`);

  const found = await mcp.callTool({ name: 'search_capabilities', arguments: { query: 'wallet balances' } });
  console.log(`\nsearch_capabilities("wallet balances"): ${found.content?.[0]?.text?.slice(0, 160) ?? ''}…`);

  const price = tools.find((t) => t.name === TOOL)?._meta?.price_usdc ?? '0.001';
  console.log(`\nCalling ${TOOL} for ${account.address}: this spends ${price} USDC from that account (x402 over MCP)...`);
  const result = await gateway.mcp.callTool(mcp, { name: TOOL, arguments: { address: account.address } });
  if (result.isError) {
    console.error('tool error:', result.content?.[0]?.text);
    process.exitCode = 1;
    return;
  }
  console.log('result:      ', JSON.stringify(result.structuredContent));
  const receipt = result._meta?.['x402/payment-response'];
  console.log(`payment:      ${receipt?.success ? 'settled' : 'none'} tx ${receipt?.transaction} on ${receipt?.network}`);
  console.log(`spent by this client: ${gateway.spent().usdc} USDC`);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => mcp.close());
