import type { LendingProtocol } from '@acg/schemas';
import { getAddress, zeroAddress, type Address, type PublicClient } from 'viem';
import { aaveAddressesProviderAbi, aaveOracleAbi, aavePoolAbi, erc20MetaAbi } from '../abis.js';
import { maxLiquidation, type AaveCloseFactorRules, type AaveLiquidationOutcome } from '../math/aave.js';
import { WAD, ratio, toNumber } from '../math/fixed.js';
import { scanEvents } from '../eventScan.js';
import { readAll, readEach, TokenMeta, type Read } from '../multicall.js';
import { DEFAULT_GAS_UNITS } from '../gas.js';
import { MAX_QUERY_HEALTH_FACTOR, type BlockContext, type EvaluatedPosition, type LogScan, type PositionRef, type ProtocolAdapter } from '../types.js';

/** Options of {@link aaveV3Adapter}. */
export interface AaveAdapterOptions {
  protocol: 'aave_v3' | 'spark';
  pool: Address;
  startBlock: bigint;
  /** Default: `v3.3` for `aave_v3`, `v3.0` for `spark` (see math/aave.ts). */
  closeFactorRules?: AaveCloseFactorRules;
  gasUnits?: number;
}

interface Reserve {
  asset: Address;
  id: number;
  aToken: Address;
  stableDebt: Address;
  variableDebt: Address;
  symbol: string;
  decimals: number;
  /** Per block: configuration bitmap and oracle price (base currency units). */
  config: bigint;
  price: bigint;
}

const bits = (x: bigint, from: number, len: number) => (x >> BigInt(from)) & ((1n << BigInt(len)) - 1n);
/** ReserveConfiguration (v3): liquidation threshold bits 16-31, bonus 32-47, protocol fee 152-167, eMode category 168-175. */
const cfg = (c: bigint) => ({ lt: bits(c, 16, 16), bonus: bits(c, 32, 16), fee: bits(c, 152, 16), emode: Number(bits(c, 168, 8)) });

/** How often the reserve list and token addresses are re-read (blocks). */
const STATIC_REFRESH_BLOCKS = 300n;

/**
 * Aave v3 and Spark (SparkLend, an Aave v3 fork) adapter.
 *
 * Health factor: `Pool.getUserAccountData(user).healthFactor` (WAD → unitless), the protocol's
 * own value; collateral_usd / debt_usd: its `totalCollateralBase` / `totalDebtBase` divided by
 * the oracle's `BASE_CURRENCY_UNIT` (USD with 8 decimals on Aave/Spark Ethereum).
 * Best liquidation: over every (collateral reserve used as collateral, borrowed reserve) pair,
 * the largest debt a `liquidationCall` may cover under the deployment's close-factor rules
 * (`v3.0` for Spark, `v3.3` for Aave: math/aave.ts), priced with `AaveOracle.getAssetsPrices`;
 * the profit is collateral received (bonus included, protocol fee excluded) minus debt repaid.
 * eMode: the category's liquidation bonus applies when the collateral belongs to the user's
 * category (v3.0: the reserve's eMode bits; v3.2+: `getEModeCategoryCollateralBitmap`); an eMode
 * price source (v3.0 only, unused on Ethereum markets) is not applied.
 * Events: Borrow (discovers `onBehalfOf`), Supply, Withdraw, Repay, LiquidationCall and the
 * collateral toggles (touch).
 */
export function aaveV3Adapter(opts: AaveAdapterOptions): ProtocolAdapter {
  const protocol: LendingProtocol = opts.protocol;
  const pool = getAddress(opts.pool);
  const rules: AaveCloseFactorRules = opts.closeFactorRules ?? (protocol === 'spark' ? 'v3.0' : 'v3.3');
  const gasUnits = opts.gasUnits ?? DEFAULT_GAS_UNITS[protocol];
  const id = `${protocol}:${pool.toLowerCase()}`;
  const meta = new TokenMeta();
  let reserves: Reserve[] = [];
  let oracle: Address | undefined;
  let baseUnit = 10n ** 8n;
  let staticAt = -1n;

  const ref = (user: Address): PositionRef => ({ key: `${id}:${user.toLowerCase()}`, borrower: getAddress(user) });

  async function loadStatic(ctx: BlockContext) {
    const [list, provider] = (await readAll(ctx, [
      { address: pool, abi: aavePoolAbi, functionName: 'getReservesList' },
      { address: pool, abi: aavePoolAbi, functionName: 'ADDRESSES_PROVIDER' },
    ])) as [Address[] | undefined, Address | undefined];
    if (!list || !provider) throw new Error(`${id}: not an Aave v3 Pool`);
    const [oracleAddr, ...datas] = (await readAll(ctx, [
      { address: provider, abi: aaveAddressesProviderAbi, functionName: 'getPriceOracle' },
      ...list.map((a) => ({ address: pool, abi: aavePoolAbi, functionName: 'getReserveData', args: [a] }) as Read),
    ])) as [Address, ...({ id: number; aTokenAddress: Address; stableDebtTokenAddress: Address; variableDebtTokenAddress: Address } | undefined)[]];
    oracle = oracleAddr;
    const [unit] = (await readAll(ctx, [{ address: oracle, abi: aaveOracleAbi, functionName: 'BASE_CURRENCY_UNIT' }])) as [bigint | undefined];
    baseUnit = unit ?? 10n ** 8n;
    await meta.load(ctx, list);
    reserves = list.flatMap((asset, i) => {
      const d = datas[i];
      if (!d) return [];
      const m = meta.get(asset);
      return [
        {
          asset: getAddress(asset),
          id: d.id,
          aToken: d.aTokenAddress,
          stableDebt: d.stableDebtTokenAddress,
          variableDebt: d.variableDebtTokenAddress,
          symbol: m.symbol,
          decimals: m.decimals,
          config: 0n,
          price: 0n,
        },
      ];
    });
    staticAt = ctx.blockNumber;
  }

  return {
    protocol,
    id,
    startBlock: opts.startBlock,

    scanLogs(client: PublicClient, fromBlock: bigint, toBlock: bigint): Promise<LogScan> {
      return scanEvents(client, pool, aavePoolAbi, fromBlock, toBlock, (log, { discovered, touched }) => {
        const a = log.args as Record<string, Address>;
        switch (log.eventName) {
          case 'Borrow':
            discovered.push(ref(a.onBehalfOf));
            break;
          case 'Supply':
            touched.push(ref(a.onBehalfOf));
            break;
          case 'Withdraw':
          case 'Repay':
          case 'LiquidationCall':
          case 'ReserveUsedAsCollateralEnabled':
          case 'ReserveUsedAsCollateralDisabled':
            touched.push(ref(a.user));
            break;
        }
      });
    },

    async prepare(ctx: BlockContext): Promise<string> {
      if (staticAt < 0n || ctx.blockNumber - staticAt >= STATIC_REFRESH_BLOCKS || ctx.blockNumber < staticAt) await loadStatic(ctx);
      const out = await readAll(ctx, [
        { address: oracle!, abi: aaveOracleAbi, functionName: 'getAssetsPrices', args: [reserves.map((r) => r.asset)] },
        ...reserves.map((r) => ({ address: pool, abi: aavePoolAbi, functionName: 'getConfiguration', args: [r.asset] }) as Read),
      ]);
      const prices = (out[0] as bigint[] | undefined) ?? [];
      reserves.forEach((r, i) => {
        r.price = prices[i] ?? 0n;
        r.config = (out[i + 1] as { data: bigint } | undefined)?.data ?? 0n;
        if (r.price > 0n) ctx.prices.set(r.asset.toLowerCase(), toNumber(r.price) / toNumber(baseUnit));
      });
      return reserves.map((r) => `${r.price}:${r.config}`).join(',');
    },

    async evaluate(ctx: BlockContext, refs: PositionRef[]): Promise<EvaluatedPosition[]> {
      const phase1 = await readEach(ctx, refs, (r) => [
        { address: pool, abi: aavePoolAbi, functionName: 'getUserAccountData', args: [r.borrower] },
        { address: pool, abi: aavePoolAbi, functionName: 'getUserConfiguration', args: [r.borrower] },
        { address: pool, abi: aavePoolAbi, functionName: 'getUserEMode', args: [r.borrower] },
      ]);
      type Acct = readonly [bigint, bigint, bigint, bigint, bigint, bigint];
      const users = refs.map((r, i) => {
        const [acct, configuration, emodeCategory] = phase1[i] as [Acct | undefined, { data: bigint } | undefined, bigint | undefined];
        const conf = configuration?.data ?? 0n;
        const emode = Number(emodeCategory ?? 0n);
        const borrowed = reserves.filter((res) => bits(conf, res.id * 2, 1) === 1n);
        const collateral = reserves.filter((res) => bits(conf, res.id * 2 + 1, 1) === 1n);
        return { ref: r, acct, emode, borrowed, collateral };
      });
      // Phase 2: balances per reserve and eMode data, only for positions a query may return.
      const eligible = users.filter((u) => u.acct && u.acct[1] > 0n && u.acct[5] <= BigInt(Math.round(MAX_QUERY_HEALTH_FACTOR * 1e18)));
      const calls: Read[] = [];
      const slots = new Map<(typeof eligible)[number], { debt: [Reserve, number, number][]; coll: [Reserve, number][]; emode?: number }>();
      for (const u of eligible) {
        const s: { debt: [Reserve, number, number][]; coll: [Reserve, number][]; emode?: number } = { debt: [], coll: [] };
        for (const r of u.borrowed) {
          s.debt.push([r, calls.length, r.stableDebt === zeroAddress ? -1 : calls.length + 1]);
          calls.push({ address: r.variableDebt, abi: erc20MetaAbi, functionName: 'balanceOf', args: [u.ref.borrower] });
          if (r.stableDebt !== zeroAddress) calls.push({ address: r.stableDebt, abi: erc20MetaAbi, functionName: 'balanceOf', args: [u.ref.borrower] });
        }
        for (const r of u.collateral) {
          s.coll.push([r, calls.length]);
          calls.push({ address: r.aToken, abi: erc20MetaAbi, functionName: 'balanceOf', args: [u.ref.borrower] });
        }
        if (u.emode !== 0) {
          s.emode = calls.length;
          if (rules === 'v3.0') calls.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryData', args: [u.emode] });
          else {
            calls.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryCollateralConfig', args: [u.emode] });
            calls.push({ address: pool, abi: aavePoolAbi, functionName: 'getEModeCategoryCollateralBitmap', args: [u.emode] });
          }
        }
        slots.set(u, s);
      }
      const phase2 = await readAll(ctx, calls);
      const big = (x: unknown) => (typeof x === 'bigint' ? x : 0n);

      return users.map((u): EvaluatedPosition => {
        const acct = u.acct ?? ([0n, 0n, 0n, 0n, 0n, 2n ** 256n - 1n] as const);
        const [totalCollateralBase, totalDebtBase, , , , hfWad] = acct;
        const hasDebt = totalDebtBase > 0n;
        const health_factor = hasDebt ? ratio(hfWad, WAD) : Number.POSITIVE_INFINITY;
        const firstColl = u.collateral[0] ?? reserves[0];
        const firstDebt = u.borrowed[0] ?? reserves[0];
        const base: EvaluatedPosition = {
          ref: u.ref,
          protocol,
          market: pool,
          health_factor,
          liquidatable: hasDebt && hfWad < WAD,
          has_debt: hasDebt,
          collateral_usd: toNumber(totalCollateralBase) / toNumber(baseUnit),
          debt_usd: toNumber(totalDebtBase) / toNumber(baseUnit),
          collateral_token: firstColl?.asset ?? zeroAddress,
          collateral_symbol: firstColl?.symbol ?? '?',
          debt_token: firstDebt?.asset ?? zeroAddress,
          debt_symbol: firstDebt?.symbol ?? '?',
          max_repay_amount: 0n,
          max_repay_usd: 0,
          gross_profit_usd: 0,
          gas_units: gasUnits,
        };
        const s = slots.get(u as never);
        if (!s) return base;
        let emodeBonus: bigint | undefined;
        let emodeBitmap: bigint | undefined;
        if (s.emode !== undefined) {
          if (rules === 'v3.0') emodeBonus = BigInt((phase2[s.emode] as { liquidationBonus: number } | undefined)?.liquidationBonus ?? 0);
          else {
            emodeBonus = BigInt((phase2[s.emode] as { liquidationBonus: number } | undefined)?.liquidationBonus ?? 0);
            emodeBitmap = big(phase2[s.emode + 1]);
          }
        }
        // A position that is not liquidatable yet is priced as if it just became so at these prices.
        const hfForRules = hfWad < WAD ? hfWad : WAD - 1n;
        let best: { out: AaveLiquidationOutcome; c: Reserve; d: Reserve } | undefined;
        for (const [d, vi, si] of s.debt) {
          const reserveDebt = big(phase2[vi]) + (si >= 0 ? big(phase2[si]) : 0n);
          for (const [c, ci] of s.coll) {
            const cc = cfg(c.config);
            if (cc.lt === 0n) continue;
            let bonus = cc.bonus;
            if (u.emode !== 0 && emodeBonus && emodeBonus > 0n) {
              const inCategory = rules === 'v3.0' ? cc.emode === u.emode : emodeBitmap !== undefined && ((emodeBitmap >> BigInt(c.id)) & 1n) === 1n;
              if (inCategory) bonus = emodeBonus;
            }
            const out = maxLiquidation(
              {
                healthFactor: hfForRules,
                totalDebtBase,
                reserveDebt,
                debtPrice: d.price,
                debtUnit: 10n ** BigInt(d.decimals),
                collateralBalance: big(phase2[ci]),
                collateralPrice: c.price,
                collateralUnit: 10n ** BigInt(c.decimals),
                liquidationBonus: bonus,
                protocolFee: cc.fee,
              },
              rules,
            );
            if (out && (!best || out.profitBase > best.out.profitBase)) best = { out, c, d };
          }
        }
        if (!best) return base;
        return {
          ...base,
          collateral_token: best.c.asset,
          collateral_symbol: best.c.symbol,
          debt_token: best.d.asset,
          debt_symbol: best.d.symbol,
          max_repay_amount: best.out.debtToCover,
          max_repay_usd: toNumber((best.out.debtToCover * best.d.price) / 10n ** BigInt(best.d.decimals)) / toNumber(baseUnit),
          gross_profit_usd: toNumber(best.out.profitBase) / toNumber(baseUnit),
        };
      });
    },
  };
}
