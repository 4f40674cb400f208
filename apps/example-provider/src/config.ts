import { EXAMPLE_PROVIDER_ENV, readEnv } from '@acg/env';
import type { Hex } from 'viem';
import type { ChainRpcUrls } from './chains.js';

/** The example provider's configuration, from the environment (see `EXAMPLE_PROVIDER_ENV` of `@acg/env`). */
export interface ExampleProviderConfig {
  gatewayUrl: string;
  port: number;
  host: string;
  /** The endpoint to register; undefined: the URL it listens on. */
  publicUrl: string | undefined;
  privateKey: Hex;
  name: string;
  rpcUrls: ChainRpcUrls;
  logLevel: string;
  /** LOG_PRETTY: readable one-line logs (pino-pretty) instead of JSON lines (default false; `npm start` sets it like its own). */
  logPretty: boolean;
  /** Capability ids whose contracts it joins (`EXAMPLE_PROVIDER_JOIN`), offering only those; undefined: it creates all of its contracts. */
  join: string[] | undefined;
  /** Price of every offer, decimal USDC (`EXAMPLE_PROVIDER_PRICE_USDC`); undefined: each capability's own. */
  priceUsdc: string | undefined;
  /** Extra milliseconds before each answer (`EXAMPLE_PROVIDER_DELAY_MS`, default 0). */
  delayMs: number;
}

/**
 * Reads and checks the environment: every variable's format (zod, `@acg/env`), then what is
 * required: `GATEWAY_URL`, `EXAMPLE_PROVIDER_PRIVATE_KEY` and at least one
 * `EXAMPLE_PROVIDER_RPC_*`. Defaults: port 8090, host 127.0.0.1, name `Example Provider`, log level info,
 * no joins (it creates its contracts), each capability's own price, no delay.
 *
 * @returns `config`, or `problems` (one line per variable, naming it; secrets never echoed).
 */
export function exampleProviderConfig(env: NodeJS.ProcessEnv): { config?: ExampleProviderConfig; problems: string[] } {
  const { values: v, problems } = readEnv(EXAMPLE_PROVIDER_ENV, env);
  const unset = (name: string) => env[name] === undefined || env[name] === '';
  if (unset('GATEWAY_URL')) problems.push('GATEWAY_URL: required (the gateway to onboard with, e.g. http://127.0.0.1:8080)');
  if (unset('EXAMPLE_PROVIDER_PRIVATE_KEY')) problems.push('EXAMPLE_PROVIDER_PRIVATE_KEY: required (0x + 64 hex: the payout wallet, which also signs results)');
  const rpcUrls: ChainRpcUrls = { base: v.EXAMPLE_PROVIDER_RPC_BASE, ethereum: v.EXAMPLE_PROVIDER_RPC_ETHEREUM, arbitrum: v.EXAMPLE_PROVIDER_RPC_ARBITRUM };
  if (['EXAMPLE_PROVIDER_RPC_BASE', 'EXAMPLE_PROVIDER_RPC_ETHEREUM', 'EXAMPLE_PROVIDER_RPC_ARBITRUM'].every(unset)) {
    problems.push(
      'EXAMPLE_PROVIDER_RPC_BASE, EXAMPLE_PROVIDER_RPC_ETHEREUM or EXAMPLE_PROVIDER_RPC_ARBITRUM: at least one is required (HTTP JSON-RPC URL of a chain to read)',
    );
  }
  if (problems.length > 0) return { problems };
  return {
    problems,
    config: {
      gatewayUrl: v.GATEWAY_URL!,
      port: v.EXAMPLE_PROVIDER_PORT ?? 8090,
      host: v.EXAMPLE_PROVIDER_HOST ?? '127.0.0.1',
      publicUrl: v.EXAMPLE_PROVIDER_PUBLIC_URL,
      privateKey: v.EXAMPLE_PROVIDER_PRIVATE_KEY!,
      name: v.EXAMPLE_PROVIDER_NAME ?? 'Example Provider',
      rpcUrls,
      logLevel: v.LOG_LEVEL ?? 'info',
      logPretty: v.LOG_PRETTY ?? false,
      join: v.EXAMPLE_PROVIDER_JOIN,
      priceUsdc: v.EXAMPLE_PROVIDER_PRICE_USDC,
      delayMs: v.EXAMPLE_PROVIDER_DELAY_MS ?? 0,
    },
  };
}
