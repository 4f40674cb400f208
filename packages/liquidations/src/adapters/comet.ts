import { getAddress, zeroAddress, type Address, type PublicClient } from 'viem';
import { cometAbi } from '../abis.js';
import { cometBuyCost, cometLiquidity, mulFactor, mulPrice, type CometCollateral } from '../math/comet.js';
import { ratio, toNumber } from '../math/fixed.js';
import { scanEvents } from '../eventScan.js';
import { readAll, readEach, TokenMeta, type Read } from '../multicall.js';
import { COMET_EXTRA_ASSET_GAS, DEFAULT_GAS_UNITS } from '../gas.js';
import type { BlockContext, EvaluatedPosition, LogScan, PositionRef, ProtocolAdapter } from '../types.js';

/** Options of {@link compoundV3Adapter}. */
export interface CometAdapterOptions {
  comet: Address;
  startBlock: bigint;
  gasUnits?: number;
}

interface Asset {
  offset: number;
  asset: Address;
  priceFeed: Address;
  scale: bigint;
  liquidateCollateralFactor: bigint;
  liquidationFactor: bigint;
  symbol: string;
  price: bigint;
}

const STATIC_REFRESH_BLOCKS = 300n;
const PRICE_SCALE = 1e8;

/**
 * Compound III (Comet) adapter (math/comet.ts for the rules and sources).
 *
 * Health factor: Comet's `isLiquidatable` sides, computed from `userBasic` (principal, assetsIn),
 * `totalsBasic().baseBorrowIndex`, `collateralBalanceOf`, `getAssetInfo` and `getPrice`, so that
 * health_factor < 1 exactly when `isLiquidatable(account)` is true. debt_usd uses the accrued
 * `borrowBalanceOf`; collateral_usd is the collateral at Comet's prices (no factor).
 * Liquidation economics: `absorb` takes the whole position, then the liquidator buys the absorbed
 * collateral with `buyCollateral` at the store-front discount `storeFrontPriceFactor × (1 −
 * liquidationFactor)`; the profit is that discount on every collateral asset, and zero when
 * reserves after the absorb would be at or above `targetReserves` (`NotForSale`).
 * `max_repay_amount` is the base the liquidator pays for all the collateral (the protocol itself
 * repays the debt). Events: Withdraw (discovers `src`: base withdrawals are borrows), Supply,
 * SupplyCollateral, WithdrawCollateral, TransferCollateral, AbsorbDebt (touch).
 */
export function compoundV3Adapter(opts: CometAdapterOptions): ProtocolAdapter {
  const comet = getAddress(opts.comet);
  const id = `compound_v3:${comet.toLowerCase()}`;
  const gasUnits = opts.gasUnits ?? DEFAULT_GAS_UNITS.compound_v3;
  const meta = new TokenMeta();
  let staticAt = -1n;
  let baseToken: Address = zeroAddress;
  let baseFeed: Address = zeroAddress;
  let baseScale = 1n;
  let baseSymbol = '?';
  let storeFront = 0n;
  let targetReserves = 0n;
  let assets: Asset[] = [];
  let basePrice = 0n;
  let baseBorrowIndex = 0n;
  let reserves = 0n;

  const ref = (a: Address): PositionRef => ({ key: `${id}:${a.toLowerCase()}`, borrower: getAddress(a) });

  async function loadStatic(ctx: BlockContext) {
    const head = (await readAll(ctx, [
      { address: comet, abi: cometAbi, functionName: 'baseToken' },
      { address: comet, abi: cometAbi, functionName: 'baseTokenPriceFeed' },
      { address: comet, abi: cometAbi, functionName: 'baseScale' },
      { address: comet, abi: cometAbi, functionName: 'numAssets' },
      { address: comet, abi: cometAbi, functionName: 'storeFrontPriceFactor' },
      { address: comet, abi: cometAbi, functionName: 'targetReserves' },
    ])) as [Address, Address, bigint, number, bigint, bigint];
    if (!head[0]) throw new Error(`${id}: not a Comet`);
    [baseToken, baseFeed, baseScale] = head;
    storeFront = head[4];
    targetReserves = head[5];
    const infos = (await readAll(
      ctx,
      Array.from({ length: head[3] }, (_, i) => ({ address: comet, abi: cometAbi, functionName: 'getAssetInfo', args: [i] }) as Read),
    )) as { offset: number; asset: Address; priceFeed: Address; scale: bigint; liquidateCollateralFactor: bigint; liquidationFactor: bigint }[];
    await meta.load(ctx, [baseToken, ...infos.map((a) => a.asset)]);
    baseSymbol = meta.get(baseToken).symbol;
    assets = infos.map((a) => ({ ...a, asset: getAddress(a.asset), symbol: meta.get(a.asset).symbol, price: 0n }));
    staticAt = ctx.blockNumber;
  }

  return {
    protocol: 'compound_v3',
    id,
    startBlock: opts.startBlock,

    scanLogs(client: PublicClient, fromBlock: bigint, toBlock: bigint): Promise<LogScan> {
      return scanEvents(client, comet, cometAbi, fromBlock, toBlock, (log, { discovered, touched }) => {
        const a = log.args as Record<string, Address>;
        if (log.eventName === 'Withdraw') discovered.push(ref(a.src));
        else if (log.eventName === 'Supply' || log.eventName === 'SupplyCollateral') touched.push(ref(a.dst));
        else if (log.eventName === 'WithdrawCollateral') touched.push(ref(a.src));
        else if (log.eventName === 'TransferCollateral') touched.push(ref(a.from), ref(a.to));
        else if (log.eventName === 'AbsorbDebt') touched.push(ref(a.borrower));
      });
    },

    async prepare(ctx: BlockContext): Promise<string> {
      if (staticAt < 0n || ctx.blockNumber - staticAt >= STATIC_REFRESH_BLOCKS || ctx.blockNumber < staticAt) await loadStatic(ctx);
      const out = await readAll(ctx, [
        { address: comet, abi: cometAbi, functionName: 'getPrice', args: [baseFeed] },
        { address: comet, abi: cometAbi, functionName: 'totalsBasic' },
        { address: comet, abi: cometAbi, functionName: 'getReserves' },
        ...assets.map((a) => ({ address: comet, abi: cometAbi, functionName: 'getPrice', args: [a.priceFeed] }) as Read),
      ]);
      basePrice = (out[0] as bigint | undefined) ?? 0n;
      baseBorrowIndex = (out[1] as { baseBorrowIndex: bigint } | undefined)?.baseBorrowIndex ?? 0n;
      reserves = (out[2] as bigint | undefined) ?? 0n;
      for (const [i, a] of assets.entries()) a.price = (out[3 + i] as bigint | undefined) ?? 0n;
      if (basePrice > 0n) ctx.prices.set(baseToken.toLowerCase(), Number(basePrice) / PRICE_SCALE);
      for (const a of assets) if (a.price > 0n) ctx.prices.set(a.asset.toLowerCase(), Number(a.price) / PRICE_SCALE);
      return [basePrice, ...assets.map((a) => a.price)].join(',');
    },

    async evaluate(ctx: BlockContext, refs: PositionRef[]): Promise<EvaluatedPosition[]> {
      const phase1 = await readEach(ctx, refs, (r) => [
        { address: comet, abi: cometAbi, functionName: 'userBasic', args: [r.borrower] },
        { address: comet, abi: cometAbi, functionName: 'borrowBalanceOf', args: [r.borrower] },
      ]);
      const users = refs.map((r, i) => {
        const [ub, borrowBalance] = phase1[i] as [readonly [bigint, bigint, bigint, number, number] | undefined, bigint | undefined];
        const principal = ub?.[0] ?? 0n;
        const assetsIn = ub?.[3] ?? 0;
        const held = assets.filter((a) => ((assetsIn >> a.offset) & 1) === 1);
        return { ref: r, principal, borrowBalance: borrowBalance ?? 0n, held };
      });
      const calls: Read[] = [];
      const at = new Map<number, number>();
      users.forEach((u, i) => {
        if (u.principal >= 0n) return;
        at.set(i, calls.length);
        for (const a of u.held) calls.push({ address: comet, abi: cometAbi, functionName: 'collateralBalanceOf', args: [u.ref.borrower, a.asset] });
      });
      const phase2 = await readAll(ctx, calls);

      return users.map((u, i): EvaluatedPosition => {
        const start = at.get(i);
        const collaterals: (CometCollateral & Asset)[] =
          start === undefined ? [] : u.held.map((a, j) => ({ ...a, balance: (phase2[start + j] as bigint | undefined) ?? 0n }));
        const { debtValue, collateralValue, liquidatable } = cometLiquidity(u.principal, baseBorrowIndex, basePrice, baseScale, collaterals);
        const hasDebt = u.principal < 0n;
        const values = collaterals.map((c) => mulPrice(c.balance, c.price, c.scale));
        const top = values.reduce((b, v, j) => (v > values[b] ? j : b), 0);
        const base: EvaluatedPosition = {
          ref: u.ref,
          protocol: 'compound_v3',
          market: comet,
          health_factor: hasDebt ? ratio(collateralValue, debtValue) : Number.POSITIVE_INFINITY,
          liquidatable,
          has_debt: hasDebt,
          collateral_usd: values.reduce((s, v) => s + Number(v), 0) / PRICE_SCALE,
          debt_usd: (toNumber(u.borrowBalance) * Number(basePrice)) / toNumber(baseScale) / PRICE_SCALE,
          collateral_token: collaterals[top]?.asset ?? assets[0]?.asset ?? zeroAddress,
          collateral_symbol: collaterals[top]?.symbol ?? assets[0]?.symbol ?? '?',
          debt_token: getAddress(baseToken),
          debt_symbol: baseSymbol,
          max_repay_amount: 0n,
          max_repay_usd: 0,
          gross_profit_usd: 0,
          gas_units: gasUnits + Math.max(0, collaterals.length - 1) * COMET_EXTRA_ASSET_GAS,
        };
        if (!hasDebt || collaterals.length === 0) return base;
        // Reserves after the absorb: the protocol writes off the debt and credits any surplus to the account.
        const absorbedBase = collaterals.reduce((s, c, j) => s + mulFactor(values[j], c.liquidationFactor), 0n);
        const absorbedInBase = (absorbedBase * baseScale) / basePrice;
        const surplus = absorbedInBase > u.borrowBalance ? absorbedInBase - u.borrowBalance : 0n;
        const reservesAfter = reserves - u.borrowBalance - surplus;
        if (reservesAfter >= targetReserves) return base; // NotForSale: nothing to buy at a discount
        let cost = 0n;
        let gain = 0;
        collaterals.forEach((c, j) => {
          const { baseAmount } = cometBuyCost(c.balance, c, storeFront, basePrice, baseScale);
          cost += baseAmount;
          gain += Number(values[j]) / PRICE_SCALE - (toNumber(baseAmount) * Number(basePrice)) / toNumber(baseScale) / PRICE_SCALE;
        });
        return {
          ...base,
          max_repay_amount: cost,
          max_repay_usd: (toNumber(cost) * Number(basePrice)) / toNumber(baseScale) / PRICE_SCALE,
          gross_profit_usd: gain,
        };
      });
    },
  };
}
