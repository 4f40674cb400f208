/**
 * @acg/devnet: the embedded defaults (docs/decisions.md "The dev chain"): local anvil chains with real contracts
 * (Multicall3, Circle FiatTokenV2_2 USDC at the Base address, Uniswap Permit2 at its canonical address),
 * lending dev data, dev accounts, and a
 * Redis found or spawned. A library for tests, the bench and the `npm start` launcher (apps/launcher);
 * it imports no app.
 */
export { DEV_ACCOUNT_COUNT, DEV_MNEMONIC, DEV_ROLES, devAccount, devPrivateKey, SEARCHER_DEBT_FUNDS } from './accounts.js';
export { resolveAnvilCommand, startAnvil, type AnvilInstance, type StartAnvilOptions } from './anvil.js';
export { linkBytecode, loadFiatTokenArtifacts, type HardhatArtifact, type LinkReferences } from './artifacts.js';
export { DEV_POLLING_INTERVAL_MS, devChain, devClients, type DevClients } from './clients.js';
export { BASE_CHAIN_ID, BASE_USDC_ADDRESS, BUYER_USDC_FUNDING, MULTICALL3_ADDRESS, USDC_DECIMALS } from './constants.js';
export { installMulticall3, multicall3CreationCode } from './multicall3.js';
export { setupPaymentChain, type PaymentChainInfo } from './paymentChain.js';
export {
  DETERMINISTIC_DEPLOYER_ADDRESS,
  installPermit2,
  isPermit2Runtime,
  PERMIT2_ADDRESS,
  PERMIT2_SALT,
  permit2Abi,
  permit2Create2Address,
  permit2DomainSeparator,
} from './permit2/index.js';
export { freePort, isPortFree, sleep } from './ports.js';
export { findExecutable, lastLines, spawnManaged, watchParent, type ManagedProcess, type ProcessExit } from './processes.js';
export {
  DEFAULT_LOCAL_REDIS,
  deleteKeysWithPrefix,
  findRedisServer,
  literalGlob,
  pingRedis,
  redisNotInstalledMessage,
  resolveRedis,
  startRedisCluster,
  type RedisClusterHandle,
  type RedisHandle,
  type RedisPersistence,
  type ResolveRedisOptions,
  type StartRedisClusterOptions,
} from './redis.js';
export { DEV_RUN_ALIVE_TTL_MS, DEV_RUN_RENEW_MS, DEV_RUNS_KEY, devRunAliveKey, registerDevRun, removeDeadDevRuns } from './devRuns.js';
export { startDevStack, type DevStack, type StartDevStackOptions } from './stack.js';
export {
  installUsdc,
  mintUsdc,
  mintUsdcBatch,
  usdcBalance,
  USDC_EIP712_NAME,
  USDC_EIP712_VERSION,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  type InstallUsdcOptions,
  type MintUsdcOptions,
  type UsdcDeployment,
} from './usdc.js';
export { usdcAbi } from './usdcAbi.generated.js';
export { DEV_CHAINS, startDevChain, type DevChain, type DevChainName } from './chains.js';
export { ETHEREUM_DEV_CHAIN_ID, startEthereumDevChain } from './ethereum.js';
export * from './lending/index.js';
