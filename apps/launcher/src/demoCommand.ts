/** The gateway URL `npm run demo` talks to when `GATEWAY_URL` is unset (packages/sdk/examples/demo.mjs). */
export const DEMO_DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080';

/** The payment chain JSON-RPC `npm run demo` reads its channel from when `DEMO_RPC_URL` is unset (the dev payment chain's default port). */
export const DEMO_DEFAULT_RPC_URL = 'http://127.0.0.1:8545';

/**
 * The exact command that runs the demo against the gateway this launcher started: `npm run demo`
 * when the gateway is at the demo's default URL, else `GATEWAY_URL=<url> npm run demo` (the top
 * docs/overview.md "What it is"). Without the dev payment chain (`PAYMENT_RPC_URL` set) no dev
 * account is funded, so the command also asks for `DEMO_PRIVATE_KEY`. The JS SDK demo reads its
 * batch-settlement channel from the payment chain (to resynchronise a channel an earlier run left
 * open): `DEMO_RPC_URL=<paymentRpcUrl>` when that is not {@link DEMO_DEFAULT_RPC_URL}.
 *
 * @param gatewayUrl - the gateway's base URL as it listens, e.g. `http://127.0.0.1:18080`
 * @param devChain - whether the launcher started the dev payment chain (its buyers hold USDC)
 * @param script - `demo` (the JS SDK) or `demo:mcp` (the same payment over MCP)
 * @param paymentRpcUrl - the payment chain's JSON-RPC URL (`demo` only; default {@link DEMO_DEFAULT_RPC_URL})
 * @example demoCommand('http://127.0.0.1:18080', true) // 'GATEWAY_URL=http://127.0.0.1:18080 npm run demo'
 */
export function demoCommand(gatewayUrl: string, devChain: boolean, script: 'demo' | 'demo:mcp' = 'demo', paymentRpcUrl = DEMO_DEFAULT_RPC_URL): string {
  const url = gatewayUrl.replace(/\/+$/, '');
  const rpc = paymentRpcUrl.replace(/\/+$/, '');
  const env = [
    url === DEMO_DEFAULT_GATEWAY_URL ? '' : `GATEWAY_URL=${url}`,
    script === 'demo' && rpc !== DEMO_DEFAULT_RPC_URL ? `DEMO_RPC_URL=${rpc}` : '',
    devChain ? '' : 'DEMO_PRIVATE_KEY=0x…',
  ].filter(Boolean);
  return [...env, `npm run ${script}`].join(' ');
}
