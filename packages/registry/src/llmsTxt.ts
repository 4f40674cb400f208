import type { Capability, RegistryDocument } from '@acg/schemas';
import type { BuildContext } from './build.js';
import { allDescriptors } from './build.js';
import type { CapabilityDescriptor } from './descriptor.js';
import { paymentSchemeBullets } from './paymentSchemes.js';
import { formatUsdc, toBaseUnits } from './price.js';

/** The discovery documents every gateway serves, relative to {base_url} (docs/spec-notes.md 4 "Discovery"). */
export const DISCOVERY_DOCUMENTS = [
  { path: '/gateway-catalog.json', title: 'Capability catalog', note: 'full catalog (JSON, JSON Schema 2020-12), statuses with evidence' },
  { path: '/registry', title: 'Registry', note: 'legacy registry: prices, x402 terms, input/output JSON Schemas and examples per capability; cached 60 s' },
  {
    path: '/discovery/resources',
    title: 'x402 discovery',
    note: "every paid resource in x402's facilitator discovery API format (Bazaar indexers; query type, limit 1-100, offset); cached 60 s",
  },
  { path: '/openapi.json', title: 'OpenAPI', note: 'OpenAPI 3.0 description of every REST endpoint' },
  { path: '/status/health', title: 'Health', note: 'per-capability status and measured latencies, builder state' },
] as const;

function priceText(d: CapabilityDescriptor | undefined): string {
  const price = d?.price ? toBaseUnits(d.price.base_units) : null;
  if (!d || price === null) {
    if (d?.id === 'gateway.execute') return 'price of the capability executed';
    return d?.x402 === 'accepted' ? 'price set by the request' : 'no published price';
  }
  if (price === 0n) return 'free';
  return `${formatUsdc(price)} USDC per ${d.price?.unit ?? 'call'}`;
}

function authText(c: Capability): string {
  switch (c.auth) {
    case 'none':
      return 'no authentication';
    case 'x402':
      return 'pay per call with x402 (see below)';
    case 'bearer':
      return 'header `Authorization: Bearer <token>`';
    case 'bundle_signature':
      return 'header `X-Bundle-Signature: <address>:<signature>`';
    default:
      return `auth ${c.auth}`;
  }
}

function callText(c: Capability, d: CapabilityDescriptor | undefined): string {
  const method = d?.method ?? 'GET';
  const example = d?.example.request;
  if (example && typeof example === 'object' && method === 'GET') {
    // a GET capability also executable through /api/v1/execute keeps its example in execute form: its input is the query
    const params =
      'capability_id' in example && 'input' in example ? (example as { input: Record<string, unknown> }).input : (example as Record<string, unknown>);
    const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return `\`GET ${c.endpoint}?${query}\``;
  }
  if (example && typeof example === 'object') {
    return `\`${method} ${c.endpoint}\` with JSON body \`${JSON.stringify(example)}\``;
  }
  return `\`${method} ${c.endpoint}\``;
}

function capabilityLine(c: Capability, d: CapabilityDescriptor | undefined): string {
  const description = c.description ? ` ${c.description}` : '';
  return (
    `- [${c.name}](${c.endpoint}): \`${c.id}\`, status ${c.status}, ${c.surface}, ${priceText(d)}.${description} ` + `Call: ${callText(c, d)}; ${authText(c)}.`
  );
}

/** The MCP endpoint: what it serves, host configuration snippets, and x402 over MCP (docs/decisions.md "Agents: MCP and x402 extensions"). */
function mcpSection(base: string): string[] {
  const url = `${base}/mcp`;
  return [
    '## MCP',
    '',
    `- [MCP server](${url}): Model Context Protocol over Streamable HTTP (stateless: POST only, no session; send \`Accept: application/json, text/event-stream\`). ` +
      'Tools: one per executable capability, named by its id with the dot replaced by `_` (`intelligence.wallet_balances` is `intelligence_wallet_balances`; the tool `title` and `_meta.capability_id` carry the id), ' +
      "with the capability's input and output JSON Schemas, plus `gateway_jobs` (a job, runnable as an MCP task) and the free `search_capabilities` (query, product, max_price_usdc), `get_capability` (capability_id) and `get_health`. " +
      'Resources: `acg://capabilities` (the catalog) and `acg://capabilities/{capability_id}` (a capability page in Markdown; `/input-schema` and `/output-schema` for its JSON Schemas). ' +
      'Prompts: `find_and_pay_for_capability` and `run_job_for_objective`.',
    '',
    'Configuration for an MCP host that speaks Streamable HTTP (Cursor, VS Code, Claude Code, `@modelcontextprotocol/sdk` clients):',
    '',
    '```json',
    JSON.stringify({ mcpServers: { acg: { url } } }),
    '```',
    '',
    'For a host that only starts local (stdio) servers, such as Claude Desktop, bridge it with `mcp-remote`:',
    '',
    '```json',
    JSON.stringify({ mcpServers: { acg: { command: 'npx', args: ['-y', 'mcp-remote', url] } } }),
    '```',
    '',
    "Paid tools follow x402's MCP transport (x402 specs/transports-v2/mcp.md); listing and the free tools work in any host, paying needs a client that signs x402 (for example @x402/core with @x402/evm, or @x402/mcp):",
    '',
    '1. Call the tool without payment: the result is `isError: true` with the x402 `PaymentRequired` in `structuredContent` and, as `{"x402/error": {"code": 402, "message", "data"}}`, in `content[0].text`.',
    '2. Sign one of its `accepts` (EIP-3009 `transferWithAuthorization`, as for REST) and call the tool again with the PaymentPayload in `_meta["x402/payment"]`.',
    '3. The result is the capability\'s output in `structuredContent`, with `_meta["x402/payment-response"]` (`success`, `transaction`, `network`, `payer`) and `_meta.execution_id`. The payment runs once: sending it again (or over REST) returns the same execution; an invalid payment is `isError` with the PaymentRequired and its `reason`.',
    '',
    'Jobs as MCP tasks: the tool `gateway_jobs` (a job request: `objective`, `budget_usdc`, `capabilities`, `steps`) is paid the same way for its budget (`exact`: all of it, the unspent part refunded; `upto`: only what the steps spent, settled when the job ends) and declares `execution.taskSupport: "optional"`. ' +
      'Called with `params.task` (MCP 2025-11-25 tasks; `client.experimental.tasks.callToolStream` of `@modelcontextprotocol/sdk`) it returns the task at once; `tasks/get` gives its status (`working`, `completed`, `failed`, `cancelled`) and progress (`_meta.progress`: steps done, USDC spent of the budget), ' +
      "`tasks/result` the job record with each step's proof, and `tasks/cancel` stops it before its next step and refunds the unspent budget on-chain (`upto`: settles only what ran). The task id is the payer's: keep it (a bearer token, if sent, must be the payer's). Without `params.task` the tool answers `{job_id, status, poll_url}`.",
    '',
  ];
}

/** How to get and use a bearer token (Sign-In with Ethereum; docs/decisions.md "Accounts and bearer tokens"). */
function bearerSection(base: string): string[] {
  return [
    '## Bearer tokens (Sign-In with Ethereum)',
    '',
    `1. \`POST ${base}/v1/auth/nonce\` with \`{"address": "0x..."}\` returns \`{nonce, message, expires_at}\`: an EIP-4361 message for this gateway.`,
    '2. Sign `message` with the wallet (EIP-191 `personal_sign`).',
    `3. \`POST ${base}/v1/auth/token\` with \`{"message", "signature"}\` returns \`{access_token, token_type: "Bearer", expires_in}\`; send \`Authorization: Bearer <access_token>\`. \`POST ${base}/v1/auth/revoke\` revokes it.`,
    `4. Bearer calls (liquidation search and plans, wallet monitor) debit the metered account: top it up with the x402-paid \`POST ${base}/v1/account/deposit\` \`{"amount_usdc": "1"}\` and read it at \`GET ${base}/v1/account\`. The liquidation search and plans also take x402 per call (a plan refused as 422 is never charged: docs/liquidation-plans.md), and over MCP every tool is paid per call with x402.`,
    '',
    '### Or sign in with x402 sign-in-with-x (no extra round trip)',
    '',
    `Every 402 carries \`extensions["sign-in-with-x"]\` (x402 sign-in-with-x, CAIP-122): a challenge (domain, uri, nonce, issuedAt, expirationTime; \`supportedChains\` eip155:8453 eip191) that your wallet signs as an EIP-4361 message. Send the signed challenge as the \`SIGN-IN-WITH-X\` header (base64 JSON; \`wrapFetchWithSIWx\` of \`@x402/extensions/sign-in-with-x\` does it) with the payment, or on the request that answered 402: that request is signed in as your wallet and its answer carries \`Authentication-Info: access_token="acg_...", token_type="Bearer", expires_in=86400\`, the same bearer token as above. \`GET ${base}/api/v1/executions/{execution_id}\` without credentials answers 402 with such a challenge; only the payer gets the execution. A signed challenge is single use and valid 5 minutes.`,
    '',
  ];
}

/** The client libraries that exist today. */
function sdkSection(): string[] {
  return [
    '## SDKs',
    '',
    '- JavaScript / TypeScript: `agent-capability-gateway-sdk` on npm (`npm install agent-capability-gateway-sdk viem`; `packages/sdk` of the gateway repository; ESM and CommonJS, Node 20.11+): `createGatewayClient({ baseUrl, account, spendLimits })` discovers, pays x402 challenges with the official x402 client within spend limits, and covers jobs, liquidation search and plans (`client.liquidations.plan`), bundles (`client.bundles.send(plan, signer)`), sign-in, deposits and the wallet monitor; `client.mcp.callTool(mcpClient, { name, arguments })` pays x402 over MCP with the official MCP client.',
    '- Python: `acg_gateway` (`sdk-python-stub/` of the repository; standard library only): discovery, execute, x402 challenges, spend limits; with an optional extra, `signer` (eth-account) or `signer-light` (coincurve, pycryptodome), `local_signer(private_key)` signs payments by itself, else you pass your own signer.',
    '- Any x402 client works against REST directly (`@x402/fetch`, `@x402/axios`), and any MCP client against the MCP endpoint.',
    '',
  ];
}

/** The builder's JSON-RPC (apps/builder README "Wire format" and "Bundle API of 2026"): methods and the 2026 fields. */
function bundleSection(builderUrl: string): string[] {
  const rpc = `${builderUrl.replace(/\/+$/, '')}/rpc`;
  return [
    '## Bundles (builder JSON-RPC)',
    '',
    `The block builder takes bundles at \`POST ${rpc}\` (JSON-RPC 2.0, header \`X-Flashbots-Signature: <address>:<signature>\`, EIP-191 signature of keccak256 of the body; the signer is your identity). 0.10 USD per bundle. A wrong value is error -32602 with \`data.field\` naming the field.`,
    '',
    '- `eth_sendBundle` `[{txs, blockNumber, minTimestamp?, maxTimestamp?, revertingTxHashes?, droppingTxHashes?, replacementUuid?, refundPercent?, refundRecipient?, refundTxHashes?}]` (Flashbots) answers `null`; with BuilderNet\'s `version` (`"v1"` or `"v2"`) it answers `{bundleHash, receivedTimestampMs}` (UNIX ms).',
    '- BuilderNet fields on `eth_sendBundle`: `replacementNonce` (integer, with `replacementUuid`: a higher nonce replaces the bundle under that uuid; a lower one, or the same nonce with another bundle, or none once the uuid has one, is refused); `refundIdentity` (address credited with the bundle\'s refunds instead of the signer); `delayedRefund` (true: the `refundPercent` refund is recorded pending, with no refund transaction in the block, the whole share in wei); `version: "v2"` with `desiredState: "BottomOfBlock"`, `targetAddresses` and `targetSlots` (per address, index-aligned): a bottom-of-block bundle.',
    '- `eth_sendEndOfBlockBundle` `[{txs, blockNumber?, revertingTxHashes?, targetPools, replacementUuid?, replacementSeqNumber?}]` (Titan) answers `{bundleHash, receivedTimestampMs}`. Bottom-of-block bundles are placed after every other bundle of the block, simulated on the state those leave, and (with targets) only when the block before them called one of the targets or a log came from one.',
    '- `mev_sendBundle` (MEV-Share v0.1) answers `{bundleHash, receivedTimestampMs}`; `eth_cancelBundle` `[{replacementUuid}]`; `eth_callBundle` simulates without queueing.',
    '- `flashbots_getBundleStatsV2` `[{bundleHash, blockNumber}]`: received, simulated, considered, sealed, sent to relays, landed; `receivedTimestampMs`, and `inclusionLatencyMs` (receipt to the seal of the block that landed) once landed.',
    "- Refunds, computed in wei from what the bundle paid the builder in the landed block, read by the identity that signs (BuilderNet's shapes, wei and blocks as hex): `buildernet_getFeeRefundTotalsByRecipient` `[recipient]` → `{pending, received, maxBlockNumber}`; `buildernet_getFeeRefundsByRecipient` `[{recipient, cursor?}]` → `{refunds: [{hash, amount, blockNumber, status, recipient, refundRecipient, delayed, txHash?}], cursor?}`; `buildernet_getFeeRefundsByBundle` `[bundle_hash]`; `buildernet_getDelayedRefunds` `[{recipient, blockRangeFrom?, blockRangeTo?, cursor?, hash?}]` → `{refunds, nextCursor?, indexedUpTo}`; `buildernet_getDelayedRefundTotalsByRecipient` `[{recipient, blockRangeFrom?, blockRangeTo?}]`.",
    '',
  ];
}

/**
 * llms.txt (llmstxt.org format) for the gateway: an H1 title, a blockquote summary, a Discovery
 * section linking /gateway-catalog.json, /registry, /openapi.json and /status/health, a
 * Capabilities section (one line each: id, status, price, how to call it), the x402 payment flow
 * in three lines, which scheme suits which caller (./paymentSchemes.ts), the 402's extensions, an MCP section (the endpoint, host configuration
 * snippets, x402 over MCP), how to get a bearer token (SIWE), the SDKs, and an Optional section
 * (sitemap). Capabilities come from `doc` (already built
 * by `buildCatalog`); prices and call examples from the definitions (`ctx.capabilities` + `ctx.extra`).
 * Returns text ending in a newline.
 */
export function renderLlmsTxt(doc: RegistryDocument, ctx: BuildContext): string {
  const base = ctx.baseUrl.replace(/\/+$/, '');
  const descriptors = new Map(allDescriptors(ctx.capabilities, ctx.extra).map((d) => [d.id, d]));
  const organization = doc.network.organization;
  const lines: string[] = [
    `# ${organization}`,
    '',
    '> A public catalog of capabilities for programmatic agents, executed per call and paid with x402 in USDC ' +
      `on ${ctx.payment.network}. Discovery needs no authentication; every capability lists its status and the evidence behind it.`,
    '',
    `Registry version ${doc.registry_version}, generated ${doc.generated_at}; operational status ${doc.network.operational_status} ` +
      `(${doc.network.operational_status_source}). A capability is LIVE only with a recorded successful probe, PILOT when built but not yet probed, PLANNED when not built.`,
    '',
    '## Discovery',
    '',
    ...DISCOVERY_DOCUMENTS.map((d) => `- [${d.title}](${base}${d.path}): ${d.note}`),
    '',
    '## Capabilities',
    '',
    ...doc.capabilities.map((c) => capabilityLine(c, descriptors.get(c.id))),
    '',
    '## Paying with x402',
    '',
    `1. Call \`POST ${base}/api/v1/execute\` with \`{"capability_id": ..., "input": ...}\`; without payment it answers 402 with a challenge (JSON body and \`PAYMENT-REQUIRED\` header): its \`accepts\` offer scheme \`exact\` (and, where listed, \`upto\` or \`batch-settlement\`: see below), network \`${ctx.payment.network}\`, USDC \`asset\` ${ctx.payment.asset}, \`payTo\` ${ctx.payment.payTo}, \`maxAmountRequired\` in USDC base units (6 decimals).`,
    '2. Sign an EIP-3009 `transferWithAuthorization` for that amount with your wallet and retry the same request with the signed payment in the `PAYMENT-SIGNATURE` header (`X-PAYMENT` is accepted too).',
    '3. The gateway settles on-chain, then executes, and returns `execution_id`, `status`, `result` and `payment {tx_hash, amount}` with a `PAYMENT-RESPONSE` header; one payment never runs twice, and a failed run is refunded.',
    '',
    'Which scheme suits which caller (pick the entry of `accepts` whose `scheme` fits; the official `@x402/evm` clients sign all three):',
    '',
    ...paymentSchemeBullets(),
    '',
    'Every 402 carries x402 `extensions`: `bazaar` (how to call the resource, with input and output JSON Schemas) and `payment-identifier`: put an `id` (16-128 characters of letters, digits, `-`, `_`) in your PaymentPayload `extensions["payment-identifier"].info.id`; the same id with the same payload returns the stored response, the same id with another payload is 409.',
    '',
    ...mcpSection(base),
    ...bearerSection(base),
    ...sdkSection(),
    ...bundleSection(ctx.builderUrl),
    '## Becoming a provider',
    '',
    `Anyone with an HTTPS endpoint and a USDC wallet on ${ctx.payment.network} can list capabilities here and be paid per call:`,
    '',
    `1. \`POST ${base}/api/v1/providers/challenge\` with \`{"address": "<your payout address>", "action": "register", name, endpoint, capabilities}\` (the exact body of step 2) answers \`{message, nonce, expires_at}\`; the message names the action and the SHA-256 of that body, so the signature authorizes only it. Sign \`message\` with \`personal_sign\` (EIP-191) within 10 minutes.`,
    `2. \`POST ${base}/api/v1/providers\` with \`{address, message, signature, name, endpoint, capabilities: [{name, product, description, price_usdc, input_schema, output_schema, example_request, timeout_ms, accepts_objective}]}\` (JSON Schema 2020-12) answers 201 with \`provider_id\` and a \`signing_secret\` shown once. The endpoint must answer \`GET\`.`,
    '3. The gateway calls `POST {endpoint}` with `{capability_id, execution_id, input}` and Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) signed with that secret; answer 200 `{result}` valid against `output_schema`. Probes are free and sent exactly like paid calls (an `exe_` id, the same headers and signature): answer every call alike; a capability is PILOT until one passes, then LIVE.',
    `4. Buyers pay the price to the gateway; your share (the price minus the gateway fee) is held through the dispute window, then paid out in USDC to your address. A failed call (non-2xx, timeout, invalid output) is refunded to the buyer and earns nothing. \`GET ${base}/api/v1/providers/{provider_id}\` (Sign-In with Ethereum bearer token of your address) shows balances, payouts and disputes; \`PUT\` and \`DELETE\` the same path with a fresh signed challenge (\`action\` \`update\` with \`provider_id\` and the new body, or \`retire\` with \`provider_id\`) change or retire you.`,
    `5. People can do steps 1 and 2 in a browser with an EIP-1193 wallet at ${base}/providers/onboard, and see the dashboard at ${base}/providers/{provider_id} after signing in with the same wallet.`,
    '',
    '## Optional',
    '',
    `- [Sitemap](${base}/sitemap.xml): every discovery URL`,
    '',
  ];
  return lines.join('\n');
}
