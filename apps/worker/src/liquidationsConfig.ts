import type { GatewayConfig } from '@acg/config';
import type { LiquidationIndexerConfig, ProtocolDeployment } from '@acg/liquidations';
import { getAddress, isAddress } from 'viem';

/**
 * The liquidation indexer of a standalone worker, from the environment:
 * `LIQUIDATION_DEPLOYMENTS` is a JSON array of protocol deployments on Ethereum, e.g.
 * `[{"protocol":"aave_v3","pool":"0x87870Bca3F3fD6335C3F4ce8392D69350B4fA4E2","startBlock":"16291127"},
 *   {"protocol":"compound_v3","comet":"0xc3d688B66703497DAA19211EEdff47f25384cdc3","startBlock":"15331586"},
 *   {"protocol":"morpho_blue","morpho":"0xBBBBBbbBBb9cC5e90e3b3Af64bdAF62C37EEFFCb","startBlock":"18883124"}]`;
 * optional `LIQUIDATION_USD_FEEDS` (JSON `{token: chainlinkFeed}`) and `LIQUIDATION_NATIVE_TOKEN`
 * (WETH, prices gas). Needs `ETHEREUM_RPC_URL`. Undefined when `LIQUIDATION_DEPLOYMENTS` is unset.
 * Throws an Error naming the variable when malformed.
 */
export function liquidationsFromEnv(env: NodeJS.ProcessEnv, config: GatewayConfig): Omit<LiquidationIndexerConfig, 'redis' | 'keyPrefix' | 'log'> | undefined {
  if (!env.LIQUIDATION_DEPLOYMENTS) return undefined;
  if (!config.chains.ethereum) throw new Error('LIQUIDATION_DEPLOYMENTS needs ETHEREUM_RPC_URL');
  let raw: unknown;
  try {
    raw = JSON.parse(env.LIQUIDATION_DEPLOYMENTS);
  } catch {
    throw new Error('LIQUIDATION_DEPLOYMENTS must be a JSON array');
  }
  if (!Array.isArray(raw) || raw.length === 0) throw new Error('LIQUIDATION_DEPLOYMENTS must be a non-empty JSON array');
  const addr = (v: unknown, what: string) => {
    if (typeof v !== 'string' || !isAddress(v, { strict: false })) throw new Error(`LIQUIDATION_DEPLOYMENTS: ${what} must be an address`);
    return getAddress(v);
  };
  const deployments = raw.map((d: Record<string, unknown>, i): ProtocolDeployment => {
    const startBlock = BigInt(String(d.startBlock ?? '0'));
    switch (d.protocol) {
      case 'aave_v3':
      case 'spark':
        return {
          protocol: d.protocol,
          pool: addr(d.pool, `[${i}].pool`),
          startBlock,
          ...(d.closeFactorRules ? { closeFactorRules: d.closeFactorRules as 'v3.0' | 'v3.3' } : {}),
        };
      case 'compound_v3':
        return { protocol: 'compound_v3', comet: addr(d.comet, `[${i}].comet`), startBlock };
      case 'morpho_blue':
        return { protocol: 'morpho_blue', morpho: addr(d.morpho, `[${i}].morpho`), startBlock };
      default:
        throw new Error(`LIQUIDATION_DEPLOYMENTS: [${i}].protocol must be aave_v3, spark, compound_v3 or morpho_blue`);
    }
  });
  const feeds = env.LIQUIDATION_USD_FEEDS ? (JSON.parse(env.LIQUIDATION_USD_FEEDS) as Record<string, string>) : undefined;
  return {
    chain: 'ethereum',
    rpcUrl: config.chains.ethereum,
    deployments,
    ...(feeds ? { usdFeeds: Object.fromEntries(Object.entries(feeds).map(([t, f]) => [addr(t, 'a token'), addr(f, 'a feed')])) } : {}),
    ...(env.LIQUIDATION_NATIVE_TOKEN ? { nativeToken: addr(env.LIQUIDATION_NATIVE_TOKEN, 'LIQUIDATION_NATIVE_TOKEN') } : {}),
  };
}
