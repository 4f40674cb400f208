import { mcpToolName, type LegacyRegistryEntry } from '@acg/schemas';
import { SDK_INSTALL_COMMENT_LINES } from './sdkInstall.js';

/** One copy-paste snippet: a title, its language (for people) and the text. */
export interface Snippet {
  id: string;
  title: string;
  language: string;
  code: string;
}

/** A string in single quotes for a POSIX shell (`'` written as `'\''`). */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

const json = (v: unknown) => JSON.stringify(v);
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** The input part of an example request: `input` of an execute body, else the request itself, else `{}`. */
export function exampleInput(c: LegacyRegistryEntry): unknown {
  const r = c.example_request as { capability_id?: unknown; input?: unknown } | null | undefined;
  if (r && typeof r === 'object' && 'capability_id' in r && 'input' in r) return r.input;
  return r ?? {};
}

/** Title and language of each kind of snippet (the same for every capability). */
const SNIPPET_KINDS = {
  curl: { title: 'curl', language: 'shell' },
  js: { title: 'JavaScript SDK', language: 'JavaScript' },
  python: { title: 'Python', language: 'Python' },
  mcp: { title: 'MCP host', language: 'JSON' },
} as const;

/** The snippet of kind `id` whose code is `lines`, one per line. */
function snippet(id: keyof typeof SNIPPET_KINDS, lines: readonly string[]): Snippet {
  return { id, ...SNIPPET_KINDS[id], code: lines.join('\n') };
}

const X402_RETRY = [
  '# 2. Pay: sign an EIP-3009 transferWithAuthorization of maxAmountRequired (USDC base units) to payTo,',
  '#    as an x402 v2 PaymentPayload (base64 JSON; the SDKs below do this for you), and send the same',
  '#    request again with it:',
];

/**
 * Copy-paste snippets for a capability: curl (with the 402 challenge and the paid retry when it
 * takes x402), the JavaScript SDK (`agent-capability-gateway-sdk`, `execute(capability_id,
 * input)`), the Python stub (`acg_gateway`) and an MCP host configuration. `executable`: runs
 * through `POST /api/v1/execute`.
 */
export function snippetsFor(c: LegacyRegistryEntry, base: string, executable: boolean): Snippet[] {
  const out: Snippet[] = [];
  const input = exampleInput(c);
  if (executable) {
    const body = json({ capability_id: c.id, input });
    out.push(
      snippet('curl', [
        '# 1. Ask: without payment the answer is 402 with the x402 challenge',
        '#    (PAYMENT-REQUIRED header and JSON body: scheme, network, asset, payTo, maxAmountRequired)',
        `curl -i -X POST ${shellQuote(`${base}/api/v1/execute`)} \\`,
        "  -H 'Content-Type: application/json' \\",
        `  -d ${shellQuote(body)}`,
        '',
        ...X402_RETRY,
        `curl -X POST ${shellQuote(`${base}/api/v1/execute`)} \\`,
        "  -H 'Content-Type: application/json' \\",
        '  -H "PAYMENT-SIGNATURE: $PAYMENT_SIGNATURE" \\',
        `  -d ${shellQuote(body)}`,
        '# → 200 {execution_id, status, result, payment: {tx_hash, amount}, proof} and a PAYMENT-RESPONSE header',
      ]),
    );
    out.push(
      snippet('js', [
        ...SDK_INSTALL_COMMENT_LINES,
        "import { createGatewayClient } from 'agent-capability-gateway-sdk';",
        "import { privateKeyToAccount } from 'viem/accounts';",
        '',
        'const gateway = createGatewayClient({',
        `  baseUrl: ${json(base)},`,
        '  account: privateKeyToAccount(process.env.PRIVATE_KEY), // pays the x402 challenge (USDC, no ETH needed)',
        `  spendLimits: { perCallUsdc: ${json(c.price ?? '0.01')} },`,
        '});',
        `const execution = await gateway.execute(${json(c.id)}, ${pretty(input)});`,
        'console.log(execution.result, execution.payment.tx_hash);',
      ]),
    );
    out.push(
      snippet('python', [
        '# pip install "./sdk-python-stub[signer-light]"   (acg_gateway, from this repository)',
        'import json, os',
        'from acg_gateway import GatewayClient, local_signer',
        '',
        `gw = GatewayClient(${json(base)}, payment_signer=local_signer(os.environ["PRIVATE_KEY"]))`,
        `result = gw.execute(${json(c.id)}, json.loads(${json(json(input))}))`,
        'print(result["result"], result["payment"]["tx_hash"])',
      ]),
    );
  } else {
    const lines: string[] = [];
    const auth: string[] = [];
    if (c.auth === 'bearer') {
      lines.push('# A bearer token from Sign-In with Ethereum: POST /v1/auth/nonce, sign the message, POST /v1/auth/token');
      auth.push('  -H "Authorization: Bearer $TOKEN" \\');
    } else if (c.auth === 'bundle_signature') {
      lines.push('# X-Bundle-Signature: <address>:<EIP-191 signature of 0x + hex(keccak256(body))> (the Flashbots construction)');
      auth.push('  -H "X-Bundle-Signature: $ADDRESS:$SIGNATURE" \\');
    }
    const hasBody = c.method === 'POST';
    const body = hasBody ? json(c.example_request ?? {}) : undefined;
    const request = (extra: string[]) => [
      `curl -i -X ${c.method} ${shellQuote(c.endpoint)}${hasBody || auth.length || extra.length ? ' \\' : ''}`,
      ...(hasBody ? ["  -H 'Content-Type: application/json' \\"] : []),
      ...auth,
      ...extra,
      ...(hasBody ? [`  -d ${shellQuote(body ?? '{}')}`] : []),
    ];
    const trimContinuation = (ls: string[]) => {
      const last = ls.length - 1;
      ls[last] = ls[last].replace(/ \\$/, '');
      return ls;
    };
    if (c.auth === 'x402') {
      lines.push('# 1. Ask: without payment the answer is 402 with the x402 challenge', ...trimContinuation(request([])), '', ...X402_RETRY);
      lines.push(...trimContinuation(request(['  -H "PAYMENT-SIGNATURE: $PAYMENT_SIGNATURE" \\'])));
    } else {
      lines.push(...trimContinuation(request([])));
    }
    out.push(snippet('curl', lines));
    out.push(
      snippet('js', [
        ...SDK_INSTALL_COMMENT_LINES,
        "import { createGatewayClient } from 'agent-capability-gateway-sdk';",
        '',
        `const gateway = createGatewayClient({ baseUrl: ${json(base)} });`,
        `const capability = (await gateway.capabilities()).find((c) => c.id === ${json(c.id)});`,
        'console.log(capability.status, capability.endpoint);',
        '// jobs, bundles, the wallet monitor and SIWE sign-in have their own SDK calls (packages/sdk/README.md)',
      ]),
    );
    out.push(
      snippet('python', [
        'from acg_gateway import GatewayClient',
        '',
        `gw = GatewayClient(${json(base)})`,
        `capability = next(c for c in gw.capabilities() if c["id"] == ${json(c.id)})`,
        'print(capability["status"], capability["endpoint"])',
      ]),
    );
  }
  out.push(
    snippet('mcp', [
      pretty({ mcpServers: { acg: { url: `${base}/mcp` } } }),
      executable
        ? `// tool: ${mcpToolName(c.id)} (paid with x402 over MCP: _meta["x402/payment"])`
        : '// free tools: search_capabilities, get_capability, get_health',
      `// resource: acg://capabilities/${c.id} (this page in Markdown)`,
    ]),
  );
  return out;
}
