// `npm run demo`: the built SDK against a running gateway.
//
// Discovers the capabilities from /registry, then executes `intelligence.wallet_balances` for the
// demo account's own address, paying the x402 challenge (0.001 USDC) with spend limits of
// 0.03 USDC per call (the liquidation search costs 0.02) and 0.05 USDC in total, and prints the
// result and the payment tx hash; then runs the same capability as a budgeted job (refund of the
// rest), the same job again as an MCP task (the official MCP client's experimental task API, paid
// with x402 over MCP, polled with tasks/get, its record read with tasks/result), and a paid
// liquidation search (DEMO_SKIP_EXTRAS=1 skips those). Before those, when the gateway's 402 offers the
// x402 `batch-settlement` scheme (`npm start` on its dev chain does; else PAYMENT_SCHEMES=exact,batch-settlement),
// a burst of DEMO_BURST calls (default 20) over one payment channel: one deposit, then a voucher per
// call signed off-chain; when it does not, it says how to enable it (DEMO_BURST=0 skips it).
//
// `npm run demo` builds the SDK quietly first (tsup --silent, packages/sdk/tsup.config.ts only).
//
// Environment: GATEWAY_URL (default http://127.0.0.1:8080; `npm start` prints the exact command);
// DEMO_RPC_URL (default http://127.0.0.1:8545, the dev payment chain; the banner names it when it is elsewhere)
// for the channel's on-chain reads; DEMO_PRIVATE_KEY (0x... hex) to pay with your own key, else dev account 2 of anvil's standard mnemonic (funded with 10,000 USDC on
// the embedded dev chain).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { GatewayRequestError, PaymentTermsMismatchError, createGatewayClient, formatUsdc } from '../dist/index.js';

const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
const CAPABILITY = 'intelligence.wallet_balances';
const baseUrl = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
// the payment chain's JSON-RPC (reads only: the channel's on-chain state); `npm start`'s dev chain by default
const rpcUrl = process.env.DEMO_RPC_URL ?? 'http://127.0.0.1:8545';

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

  const price = capabilities.find((c) => c.id === CAPABILITY)?.price ?? '0.001';
  const liquidationPrice = capabilities.find((c) => c.id === 'mev.liquidation_search')?.price ?? '0.02';
  const extras = !process.env.DEMO_SKIP_EXTRAS;
  console.log(`\nThis demo spends from ${account.address} (limits: 0.03 USDC per call, 0.05 USDC in total):`);
  console.log(`  ${price} USDC   one call of ${CAPABILITY}`);
  if (extras) {
    console.log('  0.002 USDC   a job of two steps (budget 0.003 USDC paid up front, 0.001 refunded on-chain)');
    console.log('  0.001 USDC   a one-step job run as an MCP task (budget 0.002 USDC, 0.001 refunded)');
    console.log(`  ${liquidationPrice} USDC    a liquidation search on the Ethereum dev chain`);
    console.log('  (DEMO_SKIP_EXTRAS=1 runs the first call only)');
  }
  console.log(`\nExecuting ${CAPABILITY} for ${account.address}: ${price} USDC...`);
  const execution = await gateway.execute(CAPABILITY, { address: account.address });

  console.log(`execution_id: ${execution.execution_id}`);
  console.log(`status:       ${execution.status}`);
  console.log('result:', JSON.stringify(execution.result, null, 2));
  console.log(`paid:         ${formatUsdc(BigInt(execution.payment.amount))} USDC (${execution.payment.amount} base units)`);
  console.log(`payment tx:   ${execution.payment.tx_hash}`);
  console.log(`spent by this client: ${gateway.spent().usdc} USDC`);

  await channelBurst(price);

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

  await jobAsMcpTask();

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

// A burst of paid calls over one batch-settlement channel (README "Which x402 scheme suits which
// caller"), with a client of its own that prefers that scheme: the first call deposits enough for the
// whole burst (counted towards its total limit), each call after it only signs a cumulative voucher
// (no transaction), and the gateway's worker claims the vouchers on-chain in batches. The deposit's
// unspent rest stays in escrow for later calls; the worker returns it cooperatively once the channel
// is idle (CHANNEL_REFUND_IDLE_SECONDS), or the payer withdraws it after the channel's withdrawDelay.
async function channelBurst(price) {
  const calls = Number(process.env.DEMO_BURST ?? 20);
  if (!(calls > 0)) return;
  const priceUnits = BigInt(Math.round(Number(price) * 1e6));
  // one deposit for the whole burst, at least the 402's minDeposit (10 calls' worth)
  const depositUnits = priceUnits * BigInt(Math.max(calls, 10));
  const totalUsdc = formatUsdc(depositUnits > 50_000n ? depositUnits : 50_000n);
  const channelClient = createGatewayClient({
    baseUrl,
    account,
    schemes: ['batch-settlement'],
    channelDepositUsdc: formatUsdc(depositUnits),
    // chain reads let the client resynchronise a channel an earlier run left open (x402's corrective 402)
    rpcUrl,
    spendLimits: { perCallUsdc: '0.01', totalUsdc },
  });
  const paid = { path: '/api/v1/execute', method: 'POST', body: JSON.stringify({ capability_id: CAPABILITY, input: { address: account.address } }) };
  let channel;
  try {
    channel = await channelClient.channels.get(paid);
  } catch (e) {
    const why = e instanceof PaymentTermsMismatchError ? 'its 402 does not offer batch-settlement' : (e?.message ?? String(e));
    console.log(`\nbatch-settlement: not offered by this gateway (${why}); skipping the channel burst.`);
    console.log('  Start the gateway with PAYMENT_SCHEMES=exact,batch-settlement (`npm start` on its dev chain offers it by default).');
    return;
  }
  console.log(
    `\n${calls} calls of ${CAPABILITY} over one batch-settlement channel ${channel.channelId.slice(0, 10)}… (deposit ${formatUsdc(depositUnits)} USDC)`,
  );
  const started = Date.now();
  for (let i = 0; i < calls; i++) await channelClient.execute(CAPABILITY, { address: account.address });
  const ms = Date.now() - started;
  const after = await channelClient.channels.get(paid);
  const spent = channelClient.spent();
  const balance = BigInt(after.state?.balance ?? '0');
  console.log(`  ${calls} calls in ${ms} ms: one deposit on-chain, then a voucher per call signed off-chain (no transaction)`);
  console.log(
    `  the channel so far (every run): vouchers charged ${formatUsdc(BigInt(after.state?.chargedCumulativeAmount ?? '0'))} USDC, balance ${formatUsdc(balance)} USDC`,
  );
  console.log(
    `  spent by this run ${spent.usdc} USDC, in escrow ${formatUsdc(spent.escrowBaseUnits ?? 0n)} USDC (the gateway's worker claims the vouchers in batches)`,
  );
}

// A one-step job run as an MCP task (apps/gateway docs/mcp-tasks.md): the unpaid tools/call of
// gateway_jobs answers the x402 PaymentRequired, the official x402 client signs it, and the
// task-augmented call returns the task at once; the official MCP client then polls tasks/get and
// reads tasks/result (the job record with its proofs). The budget's unspent part is refunded.
async function jobAsMcpTask() {
  console.log('\nThe same kind of job as an MCP task (budget 0.002 USDC, paid with x402 over MCP)...');
  const mcp = new Client({ name: 'acg-demo', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)));
  try {
    await mcp.listTools();
    const args = {
      objective: 'Read my balances as an MCP task',
      budget_usdc: 0.002,
      capabilities: [CAPABILITY],
      steps: [{ capability_id: CAPABILITY, input: { address: account.address } }],
    };
    const unpaid = await mcp.callTool({ name: 'gateway_jobs', arguments: args });
    const signer = new x402Client();
    registerExactEvmScheme(signer, { signer: account });
    const payment = await signer.createPaymentPayload(unpaid.structuredContent);
    let last = '';
    for await (const m of mcp.experimental.tasks.callToolStream(
      { name: 'gateway_jobs', arguments: args, _meta: { 'x402/payment': payment } },
      CallToolResultSchema,
      { task: { ttl: 600_000 } },
    )) {
      if (m.type === 'taskCreated') console.log(`  task created: ${m.task.taskId.split('.')[0]} (${m.task.status})`);
      else if (m.type === 'taskStatus' && m.task.statusMessage !== last) {
        last = m.task.statusMessage;
        console.log(`  ${m.task.status}: ${last}`);
      } else if (m.type === 'error') throw m.error;
      else if (m.type === 'result') {
        const job = m.result.structuredContent;
        const proofs = job.steps.filter((s) => s.proof).length;
        console.log(`  tasks/result: job ${job.status}, spent ${job.spent_usdc} USDC, ${proofs} step proof(s)`);
      }
    }
  } finally {
    await mcp.close();
  }
}

main().catch((e) => {
  console.error(`demo failed: ${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  process.exit(1);
});
