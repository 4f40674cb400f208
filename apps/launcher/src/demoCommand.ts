/** The gateway URL `npm run demo` talks to when `GATEWAY_URL` is unset (packages/sdk/examples/demo.mjs). */
export const DEMO_DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';

/**
 * The exact command that runs the demo against the gateway this launcher started: `npm run demo`
 * when the gateway is at the demo's default URL, else `GATEWAY_URL=<url> npm run demo` (the top
 * docs/overview.md "What it is"). Without the dev payment chain (`PAYMENT_RPC_URL` set) no dev
 * account is funded, so the command also asks for `DEMO_PRIVATE_KEY`.
 *
 * @param gatewayUrl - the gateway's base URL as it listens, e.g. `http://127.0.0.1:18080`
 * @param devChain - whether the launcher started the dev payment chain (its buyers hold USDC)
 * @param script - `demo` (the JS SDK) or `demo:mcp` (the same payment over MCP)
 * @example demoCommand('http://127.0.0.1:18080', true) // 'GATEWAY_URL=http://127.0.0.1:18080 npm run demo'
 */
export function demoCommand(gatewayUrl: string, devChain: boolean, script: 'demo' | 'demo:mcp' = 'demo'): string {
  const url = gatewayUrl.replace(/\/+$/, '');
  const env = [url === DEMO_DEFAULT_GATEWAY_URL ? '' : `GATEWAY_URL=${url}`, devChain ? '' : 'DEMO_PRIVATE_KEY=0x…'].filter(Boolean);
  return [...env, `npm run ${script}`].join(' ');
}
