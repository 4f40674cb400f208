import { connectRedis, RedisKeys } from '@acg/redis';
import type { LiquidationOpportunity } from '@acg/schemas';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import { chainlinkAbi } from './abis.js';
import { aaveV3Adapter } from './adapters/aave.js';
import { compoundV3Adapter } from './adapters/comet.js';
import { morphoBlueAdapter } from './adapters/morpho.js';
import { gasCostUsd } from './gas.js';
import { readAll } from './multicall.js';
import { LiquidationIndexStore, type PositionWrite } from './store.js';
import type { BlockContext, EvaluatedPosition, LiquidationChain, PositionRef, ProtocolAdapter, ProtocolDeployment } from './types.js';

/** Configuration of {@link startLiquidationIndexer}. */
export interface LiquidationIndexerConfig {
  chain: LiquidationChain;
  /** JSON-RPC URL of the chain (or pass `client`). */
  rpcUrl?: string;
  client?: PublicClient;
  /** Redis URL (a connection is opened and closed by the indexer) or an open connection (left open). */
  redis: string | Redis;
  /** Key prefix of the deployment (default `acg:`), as `REDIS_KEY_PREFIX`. */
  keyPrefix?: string;
  deployments: ProtocolDeployment[];
  /** Chainlink USD feeds by token, for tokens no protocol oracle prices (e.g. a Morpho loan token). */
  usdFeeds?: Record<Address, Address>;
  /** Wrapped native token (WETH) whose USD price (from the price book) prices gas. */
  nativeToken?: Address;
  /** Or a Chainlink ETH/USD feed for gas. */
  nativeUsdFeed?: Address;
  /** Gas units per liquidation by deployment protocol (defaults: gas.ts). */
  gasUnits?: Partial<Record<ProtocolDeployment['protocol'], number>>;
  /** Poll for new blocks every this many ms (default 1000). */
  pollIntervalMs?: number;
  /** Blocks per getLogs request while catching up (default 2000). */
  logChunkBlocks?: number;
  /** Logs of this many already-read blocks are read again, for reorgs (default 3). */
  reorgDepth?: number;
  /** Positions at or below this health factor are refreshed every block (default 1.25). */
  refreshBelowHealthFactor?: number;
  /** Every tracked position is refreshed every this many blocks (default 50), besides price moves. */
  fullRefreshEveryBlocks?: number;
  /** Positions per multicall round (default 2000). */
  positionsPerRound?: number;
  /** Multicall chunk in bytes of calldata (default 24576). */
  multicallBatchBytes?: number;
  log?: Logger;
}

/** A running indexer. */
export interface LiquidationIndexer {
  /** Last block written to the index (undefined before the first). */
  lastBlock(): bigint | undefined;
  /** Resolves once a block >= `block` is indexed; rejects after `timeoutMs` (default 30 s). */
  waitForBlock(block: bigint, timeoutMs?: number): Promise<void>;
  /** Indexes the current head now (also what the loop does); resolves with the block indexed. */
  indexNow(): Promise<bigint>;
  /** Stops the loop (after the block in progress) and closes what it opened. */
  stop(): Promise<void>;
}

/** Builds the adapter of a deployment. */
export function adapterFor(d: ProtocolDeployment, gasUnits?: number): ProtocolAdapter {
  switch (d.protocol) {
    case 'aave_v3':
    case 'spark':
      return aaveV3Adapter({ protocol: d.protocol, pool: d.pool, startBlock: d.startBlock, closeFactorRules: d.closeFactorRules, gasUnits });
    case 'compound_v3':
      return compoundV3Adapter({ comet: d.comet, startBlock: d.startBlock, gasUnits });
    case 'morpho_blue':
      return morphoBlueAdapter({ morpho: d.morpho, startBlock: d.startBlock, markets: d.markets, gasUnits });
  }
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Starts the liquidation indexer of one chain (docs/decisions.md "Liquidation search"): a long-lived loop
 * that, for every new block,
 * 1. reads each deployment's events from its cursor (or `startBlock`) to the head with `getLogs`
 *    (chunks of `logChunkBlocks`, re-reading `reorgDepth` blocks) and tracks the borrowers found;
 * 2. reads each deployment's market state and prices by multicall; when a price (or reserve
 *    configuration) moved, every tracked position of that deployment is refreshed, otherwise only
 *    touched positions and those at or below `refreshBelowHealthFactor` (plus all of them every
 *    `fullRefreshEveryBlocks`);
 * 3. evaluates them with the protocol's own math (adapters/*) and writes the block to Redis in one
 *    transaction (store.ts), with estimated_profit_usd = gross profit − gas × base fee × ETH/USD and
 *    deadline_block = block + 1.
 * Run one indexer per chain (the index is written by one process and read by every gateway).
 * State survives restarts: tracked borrowers and cursors are in Redis.
 *
 * @returns A {@link LiquidationIndexer}; the first block is indexed before it resolves.
 * @throws If the RPC or Redis is unreachable at start, or a deployment is not the contract it claims.
 */
export async function startLiquidationIndexer(config: LiquidationIndexerConfig): Promise<LiquidationIndexer> {
  const client =
    config.client ?? (createPublicClient({ transport: http(config.rpcUrl, { timeout: 20_000, retryCount: 2 }), batch: { multicall: false } }) as PublicClient);
  const ownRedis = typeof config.redis === 'string';
  const redis = typeof config.redis === 'string' ? connectRedis({ url: config.redis, name: `liquidation-indexer-${config.chain}` }) : config.redis;
  const store = new LiquidationIndexStore(redis, new RedisKeys(config.keyPrefix ?? 'acg:'), config.chain);
  const log = config.log;
  const pollMs = config.pollIntervalMs ?? 1000;
  const chunk = BigInt(config.logChunkBlocks ?? 2000);
  const reorgDepth = BigInt(config.reorgDepth ?? 3);
  const refreshBelow = config.refreshBelowHealthFactor ?? 1.25;
  const fullEvery = BigInt(config.fullRefreshEveryBlocks ?? 50);
  const perRound = config.positionsPerRound ?? 2000;
  const batchSize = config.multicallBatchBytes ?? 24_576;

  // Oracle-backed adapters first: Morpho's USD prices come from their price book.
  const order = { aave_v3: 0, spark: 1, compound_v3: 2, morpho_blue: 3 } as const;
  const adapters = [...config.deployments].sort((a, b) => order[a.protocol] - order[b.protocol]).map((d) => adapterFor(d, config.gasUnits?.[d.protocol]));
  const state = new Map<string, { tracked: Map<string, PositionRef>; cursor: bigint | undefined; fingerprint?: string; lastFull: bigint }>();
  for (const a of adapters) {
    const tracked = new Map((await store.tracked(a.id)).map((r) => [r.key, r]));
    state.set(a.id, { tracked, cursor: await store.cursor(a.id), lastFull: -1n });
  }
  const hf = await store.healthFactors();

  let last: bigint | undefined;
  let running = true;
  let busy: Promise<bigint> | undefined;
  const waiters: { block: bigint; resolve: () => void }[] = [];

  async function indexBlock(): Promise<bigint> {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (last !== undefined && head <= last) return last;
    const block = await client.getBlock({ blockNumber: head });
    const ctx: BlockContext = { client, blockNumber: head, timestamp: block.timestamp, prices: new Map(), batchSize };

    // 1. Events.
    const touched = new Map<string, Set<string>>();
    for (const a of adapters) {
      const s = state.get(a.id)!;
      const t = new Set<string>();
      let from = s.cursor === undefined ? a.startBlock : s.cursor + 1n - reorgDepth;
      if (from < a.startBlock) from = a.startBlock;
      const fresh: PositionRef[] = [];
      for (let f = from; f <= head; f += chunk) {
        const to = f + chunk - 1n < head ? f + chunk - 1n : head;
        const scan = await a.scanLogs(client, f, to);
        for (const r of scan.discovered) {
          if (!s.tracked.has(r.key)) fresh.push(r);
          s.tracked.set(r.key, r);
          t.add(r.key);
        }
        for (const r of scan.touched) if (s.tracked.has(r.key)) t.add(r.key);
      }
      await store.track(a.id, fresh);
      touched.set(a.id, t);
    }

    // 2. Prices: configured feeds first, then each adapter's market state.
    const feeds = Object.entries(config.usdFeeds ?? {}) as [Address, Address][];
    if (config.nativeUsdFeed) feeds.push(['0x0000000000000000000000000000000000000000', config.nativeUsdFeed]);
    if (feeds.length > 0) {
      const out = await readAll(
        ctx,
        feeds.flatMap(([, f]) => [
          { address: f, abi: chainlinkAbi, functionName: 'latestRoundData' },
          { address: f, abi: chainlinkAbi, functionName: 'decimals' },
        ]),
      );
      feeds.forEach(([token], i) => {
        const round = out[2 * i] as readonly [bigint, bigint, bigint, bigint, bigint] | undefined;
        const dec = (out[2 * i + 1] as number | undefined) ?? 8;
        if (round && round[1] > 0n) ctx.prices.set(token.toLowerCase(), Number(round[1]) / 10 ** dec);
      });
    }

    // 3. Evaluate.
    const writes: PositionWrite[] = [];
    const evaluated: EvaluatedPosition[] = [];
    const adapterOf = new Map<EvaluatedPosition, string>();
    for (const a of adapters) {
      const s = state.get(a.id)!;
      const fingerprint = await a.prepare(ctx);
      const full = s.fingerprint !== fingerprint || s.lastFull < 0n || head - s.lastFull >= fullEvery;
      s.fingerprint = fingerprint;
      if (full) s.lastFull = head;
      const t = touched.get(a.id)!;
      const refs = [...s.tracked.values()].filter((r) => full || t.has(r.key) || (hf.get(r.key) ?? 0) <= refreshBelow);
      for (let i = 0; i < refs.length; i += perRound) {
        for (const e of await a.evaluate(ctx, refs.slice(i, i + perRound))) {
          evaluated.push(e);
          adapterOf.set(e, a.id);
        }
      }
    }
    const ethUsd =
      (config.nativeUsdFeed ? ctx.prices.get('0x0000000000000000000000000000000000000000') : undefined) ??
      (config.nativeToken ? ctx.prices.get(config.nativeToken.toLowerCase()) : undefined) ??
      0;
    const baseFee = block.baseFeePerGas ?? 0n;
    for (const e of evaluated) {
      const gas = round6(gasCostUsd(e.gas_units, baseFee, ethUsd));
      const doc: LiquidationOpportunity = {
        protocol: e.protocol,
        borrower: e.ref.borrower,
        collateral_token: e.collateral_token,
        collateral_symbol: e.collateral_symbol,
        debt_token: e.debt_token,
        debt_symbol: e.debt_symbol,
        collateral_usd: round6(e.collateral_usd),
        debt_usd: round6(e.debt_usd),
        health_factor: e.health_factor,
        estimated_profit_usd: round6(e.gross_profit_usd - gas),
        deadline_block: Number(head) + 1,
        market: e.market,
        ...(e.ref.marketId ? { market_id: e.ref.marketId } : {}),
        max_repay_amount: e.max_repay_amount.toString(),
        max_repay_usd: round6(e.max_repay_usd),
        gas_cost_usd: gas,
      };
      const adapterId = adapterOf.get(e)!;
      writes.push({ key: e.ref.key, adapterId, protocol: e.protocol, health_factor: e.health_factor, has_debt: e.has_debt, doc });
      if (e.has_debt) hf.set(e.ref.key, e.health_factor);
      else {
        hf.delete(e.ref.key);
        state.get(adapterId)!.tracked.delete(e.ref.key);
      }
    }
    const cursors = Object.fromEntries(adapters.map((a) => [a.id, head]));
    await store.writeBlock(
      {
        block_number: Number(head),
        block_timestamp: Number(block.timestamp),
        base_fee_wei: baseFee.toString(),
        eth_usd: ethUsd,
        updated_at: new Date().toISOString(),
        usd_prices: Object.fromEntries(ctx.prices),
      },
      cursors,
      writes,
    );
    for (const a of adapters) state.get(a.id)!.cursor = head;
    last = head;
    log?.debug({ chain: config.chain, block: Number(head), refreshed: writes.length }, 'liquidation index updated');
    for (const w of waiters.splice(0)) {
      if (w.block <= head) w.resolve();
      else waiters.push(w);
    }
    return head;
  }

  const indexNow = () => (busy ??= indexBlock().finally(() => (busy = undefined)));

  await indexNow();
  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    if (!running) return;
    try {
      await indexNow();
    } catch (e) {
      log?.warn({ chain: config.chain, err: String((e as Error)?.message ?? e).slice(0, 300) }, 'liquidation indexer: block failed; retrying');
    }
    if (running) timer = setTimeout(loop, pollMs);
  };
  timer = setTimeout(loop, pollMs);

  return {
    lastBlock: () => last,
    indexNow,
    waitForBlock(block, timeoutMs = 30_000) {
      if (last !== undefined && last >= block) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`liquidation indexer: block ${block} not indexed within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          block,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await busy?.catch(() => undefined);
      if (ownRedis) redis.disconnect();
    },
  };
}
