import { keccak256, encodeAbiParameters, parseUnits, type Abi, type Address, type Hex } from 'viem';
import { devAccount } from '../accounts.js';
import { aaveBytecode, aaveCoreVersion } from './artifacts.js';
import { compileLendingContracts } from './compile.js';
import { DevSender } from './tx.js';

/** Symbols of the dev ERC-20 tokens. */
export type DevTokenSymbol = 'WETH' | 'WBTC' | 'USDC' | 'DAI';

/** One dev token with its USD feed (DevPriceFeed, 8 decimals). */
export type DevToken = { symbol: DevTokenSymbol; address: Address; decimals: number; feed: Address };

/** USD prices the tokens start at (before the seed moves WETH to {@link SEED_PRICES}). */
export const INITIAL_PRICES: Record<DevTokenSymbol, number> = { WETH: 2500, WBTC: 60000, USDC: 1, DAI: 1 };

const DECIMALS: Record<DevTokenSymbol, number> = { WETH: 18, WBTC: 8, USDC: 6, DAI: 18 };

/** One Aave v3 market (Aave or Spark) deployed from `@aave/core-v3` artifacts. */
export type AaveMarketInfo = {
  pool: Address;
  addressesProvider: Address;
  configurator: Address;
  oracle: Address;
  dataProvider: Address;
  /** Reserve parameters as configured (basis points). */
  reserves: Partial<Record<DevTokenSymbol, AaveReserveSpec>>;
};

/** Reserve configuration in basis points (Aave `configureReserveAsCollateral`). */
export type AaveReserveSpec = { ltv: number; liquidationThreshold: number; liquidationBonus: number; protocolFee: number; borrowable: boolean };

/** Morpho Blue market parameters (`MarketParams`) and its id. */
export type MorphoMarketInfo = {
  id: Hex;
  params: { loanToken: Address; collateralToken: Address; oracle: Address; irm: Address; lltv: bigint };
};

/** Everything the lending dev data deployed, with addresses. */
export type LendingDeployment = {
  chainId: number;
  /** Block of the first lending deployment transaction (the indexers' start block). */
  startBlock: bigint;
  /** Version of `@aave/core-v3` the Aave and Spark markets run (1.19.x = aave-v3-core v3.0.2). */
  aaveCoreVersion: string;
  deployer: Address;
  tokens: Record<DevTokenSymbol, DevToken>;
  aave: AaveMarketInfo;
  spark: AaveMarketInfo;
  comet: { address: Address; baseToken: Address; collaterals: DevTokenSymbol[] };
  morpho: { address: Address; irm: Address; lens: Address; markets: Record<'WETH/USDC' | 'WBTC/USDC', MorphoMarketInfo> };
};

/** Aave reserves: mainnet-like parameters (bps). WETH carries a 10% liquidation protocol fee. */
export const AAVE_RESERVES: Partial<Record<DevTokenSymbol, AaveReserveSpec>> = {
  WETH: { ltv: 8000, liquidationThreshold: 8250, liquidationBonus: 10500, protocolFee: 1000, borrowable: true },
  WBTC: { ltv: 7300, liquidationThreshold: 7800, liquidationBonus: 10500, protocolFee: 1000, borrowable: true },
  USDC: { ltv: 7700, liquidationThreshold: 8000, liquidationBonus: 10450, protocolFee: 1000, borrowable: true },
};

/** Spark (SparkLend) reserves: DAI is the borrowed asset (not collateral), bps. */
export const SPARK_RESERVES: Partial<Record<DevTokenSymbol, AaveReserveSpec>> = {
  WETH: { ltv: 8000, liquidationThreshold: 8250, liquidationBonus: 10500, protocolFee: 0, borrowable: true },
  WBTC: { ltv: 7000, liquidationThreshold: 7500, liquidationBonus: 10700, protocolFee: 0, borrowable: false },
  DAI: { ltv: 0, liquidationThreshold: 0, liquidationBonus: 0, protocolFee: 0, borrowable: true },
};

/** Comet (cUSDCv3-like) collateral parameters, 1e18-scaled factors. */
export const COMET_ASSETS: { symbol: DevTokenSymbol; borrowCF: number; liquidateCF: number; liquidationFactor: number }[] = [
  { symbol: 'WETH', borrowCF: 0.825, liquidateCF: 0.895, liquidationFactor: 0.95 },
  { symbol: 'WBTC', borrowCF: 0.75, liquidateCF: 0.8, liquidationFactor: 0.95 },
];

/** Comet store-front price factor (1e18 scale): buyCollateral discount = 0.6 * (1 - liquidationFactor). */
export const COMET_STORE_FRONT_PRICE_FACTOR = 0.6;

/** Morpho Blue LLTVs of the two dev markets (WAD). */
export const MORPHO_LLTV = { 'WETH/USDC': 860000000000000000n, 'WBTC/USDC': 915000000000000000n } as const;

const factor = (x: number) => BigInt(Math.round(x * 1e6)) * 10n ** 12n;

/**
 * Deploys the four lending protocols of the dev chain (docs/decisions.md "Liquidation search", dev data):
 * - ERC-20 tokens WETH, WBTC, USDC, DAI and one DevPriceFeed (USD, 8 decimals) each, at {@link INITIAL_PRICES};
 * - Aave v3 **twice** from the `@aave/core-v3` artifacts (libraries linked): once as `aave` (WETH, WBTC, USDC),
 *   once as `spark` (WETH, WBTC, DAI); each with its own AaveOracle over the same feeds;
 * - Morpho Blue compiled from `@morpho-org/morpho-blue` with its IrmMock and two markets (WETH/USDC, WBTC/USDC)
 *   whose oracles (DevMorphoOracle) read the same feeds; plus MorphoHealthLens for tests;
 * - DevComet (Comet ABI) with base USDC and collaterals WETH, WBTC.
 * Dev account 0 deploys and owns everything. Takes a few seconds on anvil (solc output is cached on disk).
 *
 * @param rpcUrl - anvil JSON-RPC URL (any chain id; the tests use 1).
 * @returns The {@link LendingDeployment}.
 */
export async function deployLendingProtocols(rpcUrl: string): Promise<LendingDeployment> {
  const tx = new DevSender(rpcUrl);
  const compiled = compileLendingContracts();
  const deployer = devAccount(0).address;
  const chainId = await tx.client.getChainId();
  const startBlock = (await tx.client.getBlockNumber()) + 1n;
  const C = (name: keyof typeof compiled) => compiled[name];

  // Tokens and feeds.
  const tokens = {} as Record<DevTokenSymbol, DevToken>;
  for (const symbol of Object.keys(DECIMALS) as DevTokenSymbol[]) {
    const address = await tx.deploy(deployer, C('DevToken').abi, C('DevToken').bytecode, [`Dev ${symbol}`, symbol, DECIMALS[symbol]]);
    const feed = await tx.deploy(deployer, C('DevPriceFeed').abi, C('DevPriceFeed').bytecode, [
      `${symbol} / USD`,
      BigInt(Math.round(INITIAL_PRICES[symbol] * 1e8)),
    ]);
    tokens[symbol] = { symbol, address, decimals: DECIMALS[symbol], feed };
  }

  // Aave v3 libraries are stateless: one set serves both markets.
  const libs: Record<string, Address> = {};
  for (const name of ['BorrowLogic', 'BridgeLogic', 'EModeLogic', 'LiquidationLogic', 'PoolLogic', 'SupplyLogic', 'ConfiguratorLogic'] as const) {
    const { abi, bytecode } = aaveBytecode(name);
    libs[name] = await tx.deploy(deployer, abi, bytecode);
  }
  {
    const { abi, bytecode } = aaveBytecode('FlashLoanLogic', libs);
    libs.FlashLoanLogic = await tx.deploy(deployer, abi, bytecode);
  }
  const aave = await deployAaveMarket(tx, deployer, 'Aave Dev Market', libs, tokens, AAVE_RESERVES);
  const spark = await deployAaveMarket(tx, deployer, 'Spark Dev Market', libs, tokens, SPARK_RESERVES);

  // Morpho Blue.
  const morpho = await tx.deploy(deployer, C('Morpho').abi, C('Morpho').bytecode, [deployer]);
  const irm = await tx.deploy(deployer, C('IrmMock').abi, C('IrmMock').bytecode);
  const lens = await tx.deploy(deployer, C('MorphoHealthLens').abi, C('MorphoHealthLens').bytecode);
  await tx.write(deployer, morpho, C('Morpho').abi, 'enableIrm', [irm]);
  const markets = {} as LendingDeployment['morpho']['markets'];
  for (const [pair, lltv] of Object.entries(MORPHO_LLTV) as [keyof typeof MORPHO_LLTV, bigint][]) {
    const [coll, loan] = pair.split('/') as [DevTokenSymbol, DevTokenSymbol];
    const oracle = await tx.deploy(deployer, C('DevMorphoOracle').abi, C('DevMorphoOracle').bytecode, [
      tokens[coll].feed,
      tokens[coll].decimals,
      tokens[loan].feed,
      tokens[loan].decimals,
    ]);
    await tx.write(deployer, morpho, C('Morpho').abi, 'enableLltv', [lltv]);
    const params = { loanToken: tokens[loan].address, collateralToken: tokens[coll].address, oracle, irm, lltv };
    await tx.write(deployer, morpho, C('Morpho').abi, 'createMarket', [params]);
    markets[pair] = { id: morphoMarketId(params), params };
  }

  // Comet (our Comet-ABI-compatible contract), base USDC.
  const usdc = tokens.USDC;
  const assets = COMET_ASSETS.map((a) => ({
    offset: 0,
    asset: tokens[a.symbol].address,
    priceFeed: tokens[a.symbol].feed,
    scale: 10n ** BigInt(tokens[a.symbol].decimals),
    borrowCollateralFactor: factor(a.borrowCF),
    liquidateCollateralFactor: factor(a.liquidateCF),
    liquidationFactor: factor(a.liquidationFactor),
    supplyCap: 0n,
  }));
  const comet = await tx.deploy(deployer, C('DevComet').abi, C('DevComet').bytecode, [
    usdc.address,
    usdc.feed,
    usdc.decimals,
    factor(COMET_STORE_FRONT_PRICE_FACTOR),
    parseUnits('5000000', usdc.decimals), // targetReserves: 5M USDC, so absorbed collateral is for sale
    parseUnits('100', usdc.decimals), // baseBorrowMin
    1585489599n, // borrow: 5% a year per second (1e18 scale)
    0n, // supply: 0, so reserves grow
    assets,
  ]);

  return {
    chainId,
    startBlock,
    aaveCoreVersion: aaveCoreVersion(),
    deployer,
    tokens,
    aave,
    spark,
    comet: { address: comet, baseToken: usdc.address, collaterals: COMET_ASSETS.map((a) => a.symbol) },
    morpho: { address: morpho, irm, lens, markets },
  };
}

/** Morpho Blue market id: keccak256 of the ABI-encoded MarketParams (MarketParamsLib.id). */
export function morphoMarketId(p: MorphoMarketInfo['params']): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
      [p.loanToken, p.collateralToken, p.oracle, p.irm, p.lltv],
    ),
  );
}

const RAY = 10n ** 27n;

/** One Aave v3 market from the artifacts, configured like aave-v3-deploy does. */
async function deployAaveMarket(
  tx: DevSender,
  deployer: Address,
  marketId: string,
  libs: Record<string, Address>,
  tokens: Record<DevTokenSymbol, DevToken>,
  reserves: Partial<Record<DevTokenSymbol, AaveReserveSpec>>,
): Promise<AaveMarketInfo> {
  const A = aaveBytecode;
  const PAP = A('PoolAddressesProvider');
  const provider = await tx.deploy(deployer, PAP.abi, PAP.bytecode, [marketId, deployer]);
  await tx.write(deployer, provider, PAP.abi, 'setACLAdmin', [deployer]);
  const ACL = A('ACLManager');
  const acl = await tx.deploy(deployer, ACL.abi, ACL.bytecode, [provider]);
  await tx.write(deployer, provider, PAP.abi, 'setACLManager', [acl]);
  await tx.write(deployer, acl, ACL.abi, 'addPoolAdmin', [deployer]);

  const POOL = A('Pool', libs);
  const poolImpl = await tx.deploy(deployer, POOL.abi, POOL.bytecode, [provider]);
  await tx.write(deployer, provider, PAP.abi, 'setPoolImpl', [poolImpl]);
  const CONF = A('PoolConfigurator', libs);
  const confImpl = await tx.deploy(deployer, CONF.abi, CONF.bytecode);
  await tx.write(deployer, provider, PAP.abi, 'setPoolConfiguratorImpl', [confImpl]);

  const symbols = Object.keys(reserves) as DevTokenSymbol[];
  const ORACLE = A('AaveOracle');
  const oracle = await tx.deploy(deployer, ORACLE.abi, ORACLE.bytecode, [
    provider,
    symbols.map((s) => tokens[s].address),
    symbols.map((s) => tokens[s].feed),
    '0x0000000000000000000000000000000000000000',
    '0x0000000000000000000000000000000000000000',
    10n ** 8n,
  ]);
  await tx.write(deployer, provider, PAP.abi, 'setPriceOracle', [oracle]);
  const DP = A('AaveProtocolDataProvider');
  const dataProvider = await tx.deploy(deployer, DP.abi, DP.bytecode, [provider]);
  await tx.write(deployer, provider, PAP.abi, 'setPoolDataProvider', [dataProvider]);

  const read = (abi: Abi, fn: string) => tx.client.readContract({ address: provider, abi, functionName: fn }) as Promise<Address>;
  const pool = await read(PAP.abi, 'getPool');
  const configurator = await read(PAP.abi, 'getPoolConfigurator');

  const AT = A('AToken');
  const SD = A('StableDebtToken');
  const VD = A('VariableDebtToken');
  const IRS = A('DefaultReserveInterestRateStrategy');
  const aTokenImpl = await tx.deploy(deployer, AT.abi, AT.bytecode, [pool]);
  const stableImpl = await tx.deploy(deployer, SD.abi, SD.bytecode, [pool]);
  const variableImpl = await tx.deploy(deployer, VD.abi, VD.bytecode, [pool]);
  const strategy = await tx.deploy(deployer, IRS.abi, IRS.bytecode, [
    provider,
    (RAY * 80n) / 100n, // optimal usage 80%
    0n,
    (RAY * 4n) / 100n,
    (RAY * 60n) / 100n,
    0n,
    0n,
    0n,
    0n,
    (RAY * 20n) / 100n,
  ]);
  const prefix = marketId.startsWith('Spark') ? 'sp' : 'a';
  await tx.write(deployer, configurator, CONF.abi, 'initReserves', [
    symbols.map((s) => ({
      aTokenImpl,
      stableDebtTokenImpl: stableImpl,
      variableDebtTokenImpl: variableImpl,
      underlyingAssetDecimals: tokens[s].decimals,
      interestRateStrategyAddress: strategy,
      underlyingAsset: tokens[s].address,
      treasury: deployer,
      incentivesController: '0x0000000000000000000000000000000000000000',
      aTokenName: `${marketId} ${s}`,
      aTokenSymbol: `${prefix}${s}`,
      variableDebtTokenName: `${marketId} variable debt ${s}`,
      variableDebtTokenSymbol: `variableDebt${s}`,
      stableDebtTokenName: `${marketId} stable debt ${s}`,
      stableDebtTokenSymbol: `stableDebt${s}`,
      params: '0x',
    })),
  ]);
  for (const s of symbols) {
    const r = reserves[s]!;
    if (r.liquidationThreshold > 0) {
      await tx.write(deployer, configurator, CONF.abi, 'configureReserveAsCollateral', [
        tokens[s].address,
        BigInt(r.ltv),
        BigInt(r.liquidationThreshold),
        BigInt(r.liquidationBonus),
      ]);
    }
    if (r.borrowable) await tx.write(deployer, configurator, CONF.abi, 'setReserveBorrowing', [tokens[s].address, true]);
    if (r.protocolFee > 0) await tx.write(deployer, configurator, CONF.abi, 'setLiquidationProtocolFee', [tokens[s].address, BigInt(r.protocolFee)]);
  }
  return { pool, addressesProvider: provider, configurator, oracle, dataProvider, reserves };
}
