import { getAddress, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import { morphoAbi, morphoIrmAbi, morphoOracleAbi } from '../abis.js';
import { ratio, toNumber } from '../math/fixed.js';
import { accruedTotalBorrowAssets, morphoHealth, morphoMaxLiquidation, ORACLE_PRICE_SCALE } from '../math/morpho.js';
import { scanEvents } from '../eventScan.js';
import { readAll, TokenMeta, type Read } from '../multicall.js';
import { DEFAULT_GAS_UNITS } from '../gas.js';
import type { BlockContext, EvaluatedPosition, LogScan, PositionRef, ProtocolAdapter } from '../types.js';

/** Options of {@link morphoBlueAdapter}. */
export interface MorphoAdapterOptions {
  morpho: Address;
  startBlock: bigint;
  /** Only these markets (default: every market seen in events). */
  markets?: Hex[];
  gasUnits?: number;
}

interface MarketState {
  id: Hex;
  params: { loanToken: Address; collateralToken: Address; oracle: Address; irm: Address; lltv: bigint };
  totalBorrowAssets: bigint;
  totalBorrowShares: bigint;
  price: bigint;
  loan: { symbol: string; decimals: number };
  collateral: { symbol: string; decimals: number };
}

/**
 * Morpho Blue adapter (math/morpho.ts for the rules and sources).
 *
 * Per block and market: `idToMarketParams` (cached), `market(id)`, `IOracle.price()` (collateral
 * quoted in loan token, scaled 1e36) and `IIrm.borrowRateView`, then interest is accrued to the
 * block timestamp exactly as `MorphoBalancesLib.expectedMarketBalances` (what `liquidate` sees).
 * Per position: `position(id, borrower)`; health_factor = maxBorrow / borrowed (< 1 exactly when
 * `liquidate` accepts). Liquidation: any amount, the best is all the debt (or all the collateral),
 * profit = seized collateral value − repaid assets = repaid × (LIF − 1), in loan token, priced in USD
 * with the loan token's USD price from the block's price book (Aave/Comet oracles or a configured
 * Chainlink feed; a market whose loan token has no USD price reports USD fields as 0).
 * Events: Borrow (discovers `onBehalf`), SupplyCollateral, WithdrawCollateral, Repay, Liquidate
 * (touch), CreateMarket (market discovery).
 */
export function morphoBlueAdapter(opts: MorphoAdapterOptions): ProtocolAdapter {
  const morpho = getAddress(opts.morpho);
  const id = `morpho_blue:${morpho.toLowerCase()}`;
  const gasUnits = opts.gasUnits ?? DEFAULT_GAS_UNITS.morpho_blue;
  const only = opts.markets ? new Set(opts.markets.map((m) => m.toLowerCase())) : undefined;
  const meta = new TokenMeta();
  const known = new Set<Hex>();
  const params = new Map<Hex, MarketState['params']>();
  const state = new Map<Hex, MarketState>();

  const accept = (m: Hex) => !only || only.has(m.toLowerCase());
  const ref = (m: Hex, b: Address): PositionRef => ({
    key: `${id}:${m.toLowerCase()}:${b.toLowerCase()}`,
    borrower: getAddress(b),
    marketId: m.toLowerCase() as Hex,
  });

  async function loadMarkets(ctx: BlockContext, ids: Hex[]): Promise<void> {
    const missing = ids.filter((m) => !params.has(m));
    if (missing.length > 0) {
      const out = await readAll(
        ctx,
        missing.map((m) => ({ address: morpho, abi: morphoAbi, functionName: 'idToMarketParams', args: [m] }) as Read),
      );
      missing.forEach((m, i) => {
        const p = out[i] as readonly [Address, Address, Address, Address, bigint] | undefined;
        if (p && p[0] !== zeroAddress) params.set(m, { loanToken: getAddress(p[0]), collateralToken: getAddress(p[1]), oracle: p[2], irm: p[3], lltv: p[4] });
      });
      await meta.load(
        ctx,
        [...params.values()].flatMap((p) => [p.loanToken, p.collateralToken]),
      );
    }
    const live = ids.filter((m) => params.has(m));
    const out = await readAll(
      ctx,
      live.flatMap((m) => [
        { address: morpho, abi: morphoAbi, functionName: 'market', args: [m] },
        { address: params.get(m)!.oracle, abi: morphoOracleAbi, functionName: 'price' },
      ]),
    );
    const markets = live.map((m, i) => ({
      m,
      p: params.get(m)!,
      mk: out[2 * i] as readonly bigint[] | undefined,
      price: (out[2 * i + 1] as bigint | undefined) ?? 0n,
    }));
    const withIrm = markets.filter((x) => x.mk && x.p.irm !== zeroAddress);
    const rates = await readAll(
      ctx,
      withIrm.map((x) => ({
        address: x.p.irm,
        abi: morphoIrmAbi,
        functionName: 'borrowRateView',
        args: [
          x.p,
          {
            totalSupplyAssets: x.mk![0],
            totalSupplyShares: x.mk![1],
            totalBorrowAssets: x.mk![2],
            totalBorrowShares: x.mk![3],
            lastUpdate: x.mk![4],
            fee: x.mk![5],
          },
        ],
      })),
    );
    const rateOf = new Map(withIrm.map((x, i) => [x.m, (rates[i] as bigint | undefined) ?? 0n]));
    for (const x of markets) {
      if (!x.mk) continue;
      const elapsed = ctx.timestamp - x.mk[4];
      state.set(x.m, {
        id: x.m,
        params: x.p,
        totalBorrowAssets: accruedTotalBorrowAssets(x.mk[2], rateOf.get(x.m) ?? 0n, elapsed),
        totalBorrowShares: x.mk[3],
        price: x.price,
        loan: meta.get(x.p.loanToken),
        collateral: meta.get(x.p.collateralToken),
      });
    }
  }

  return {
    protocol: 'morpho_blue',
    id,
    startBlock: opts.startBlock,

    scanLogs(client: PublicClient, fromBlock: bigint, toBlock: bigint): Promise<LogScan> {
      return scanEvents(client, morpho, morphoAbi, fromBlock, toBlock, (log, { discovered, touched }) => {
        const a = log.args as Record<string, Address> & { id: Hex };
        const m = a.id.toLowerCase() as Hex;
        if (!accept(m)) return;
        known.add(m);
        if (log.eventName === 'Borrow') discovered.push(ref(m, a.onBehalf));
        else if (log.eventName === 'SupplyCollateral' || log.eventName === 'WithdrawCollateral' || log.eventName === 'Repay') touched.push(ref(m, a.onBehalf));
        else if (log.eventName === 'Liquidate') touched.push(ref(m, a.borrower));
      });
    },

    async prepare(ctx: BlockContext): Promise<string> {
      await loadMarkets(ctx, [...known]);
      return [...state.values()].map((s) => `${s.id}:${s.price}`).join(',');
    },

    async evaluate(ctx: BlockContext, refs: PositionRef[]): Promise<EvaluatedPosition[]> {
      const unknown = [...new Set(refs.map((r) => r.marketId!))].filter((m) => !state.has(m));
      if (unknown.length > 0) {
        for (const m of unknown) known.add(m);
        await loadMarkets(ctx, unknown);
      }
      const out = await readAll(
        ctx,
        refs.map((r) => ({ address: morpho, abi: morphoAbi, functionName: 'position', args: [r.marketId, r.borrower] }) as Read),
      );
      return refs.flatMap((r, i): EvaluatedPosition[] => {
        const m = state.get(r.marketId!);
        const pos = out[i] as readonly [bigint, bigint, bigint] | undefined;
        if (!m || !pos) return [];
        const [, borrowShares, collateral] = pos;
        const mkt = { totalBorrowAssets: m.totalBorrowAssets, totalBorrowShares: m.totalBorrowShares, price: m.price, lltv: m.params.lltv };
        const h = morphoHealth(borrowShares, collateral, mkt);
        const loanUsd = ctx.prices.get(m.params.loanToken.toLowerCase()) ?? 0;
        const loanUnit = 10 ** m.loan.decimals;
        const usd = (loanAssets: bigint) => (toNumber(loanAssets) / loanUnit) * loanUsd;
        const hasDebt = borrowShares > 0n;
        const base: EvaluatedPosition = {
          ref: r,
          protocol: 'morpho_blue',
          market: morpho,
          health_factor: hasDebt ? ratio(h.maxBorrow, h.borrowed) : Number.POSITIVE_INFINITY,
          liquidatable: h.liquidatable,
          has_debt: hasDebt,
          collateral_usd: usd((collateral * m.price) / ORACLE_PRICE_SCALE),
          debt_usd: usd(h.borrowed),
          collateral_token: m.params.collateralToken,
          collateral_symbol: m.collateral.symbol,
          debt_token: m.params.loanToken,
          debt_symbol: m.loan.symbol,
          max_repay_amount: 0n,
          max_repay_usd: 0,
          gross_profit_usd: 0,
          gas_units: gasUnits,
        };
        if (!hasDebt || collateral === 0n || m.price === 0n) return [base];
        const liq = morphoMaxLiquidation(borrowShares, collateral, mkt);
        return [
          {
            ...base,
            max_repay_amount: liq.repaidAssets,
            max_repay_usd: usd(liq.repaidAssets),
            gross_profit_usd: liq.profitLoan > 0n ? usd(liq.profitLoan) : -usd(-liq.profitLoan),
          },
        ];
      });
    },
  };
}
