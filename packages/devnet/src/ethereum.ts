import { startAnvil, type AnvilInstance } from './anvil.js';
import { installMulticall3 } from './multicall3.js';

/** Chain id of the Ethereum dev chain bundles target (embedded defaults). */
export const ETHEREUM_DEV_CHAIN_ID = 1;

/**
 * Starts the Ethereum dev chain of the embedded defaults: anvil with chain id 1, automine, and
 * `--order fifo` (so a block the builder seals keeps its bundle order), with Multicall3 at its
 * canonical address (what the builder seals blocks on). For tests, the bench and the `npm start`
 * launcher only (never production).
 *
 * @example
 * const eth = await startEthereumDevChain()
 * const builder = await startBuilder(builderConfigFromEnv({}, { ethereumRpcUrl: eth.rpcUrl, devMining: true, ... }))
 */
export async function startEthereumDevChain(opts: { port?: number; quiet?: boolean } = {}): Promise<AnvilInstance> {
  const anvil = await startAnvil({ chainId: ETHEREUM_DEV_CHAIN_ID, port: opts.port, quiet: opts.quiet ?? true, extraArgs: ['--order', 'fifo'] });
  try {
    await installMulticall3(anvil.rpcUrl);
  } catch (e) {
    await anvil.stop();
    throw e;
  }
  return anvil;
}
