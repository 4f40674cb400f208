import type { RedisKeys } from '@acg/redis';
import type { Redis } from 'ioredis';
import { erc20Abi, getAddress, hexToString, type PublicClient } from 'viem';
import { walletMonitorKeys } from './commands/keys.js';

/** Asset metadata of a webhook payload: `address` null for native ETH. */
export interface AssetInfo {
  address: `0x${string}` | null;
  symbol: string;
  decimals: number;
}

/** Native ETH on all three chains (Base and Arbitrum use ETH for gas too). */
export const NATIVE_ASSET: AssetInfo = { address: null, symbol: 'ETH', decimals: 18 };

const bytes32SymbolAbi = [{ type: 'function', name: 'symbol', stateMutability: 'view', inputs: [], outputs: [{ type: 'bytes32' }] }] as const;

/**
 * ERC-20 `symbol` and `decimals` per token, read once from the chain and kept in memory and in
 * Redis (`wm:token:<chain>`, a hash). A token whose metadata cannot be read is described as
 * symbol `""` and decimals 0 (the amount is still exact, in base units); a bytes32 symbol (old
 * tokens such as MKR) is decoded.
 */
export class TokenMetadata {
  private readonly memory = new Map<string, AssetInfo>();
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly chain: string,
    private readonly client: PublicClient,
  ) {}

  /** Metadata of each token (lowercase addresses). */
  async get(tokens: Iterable<string>): Promise<Map<string, AssetInfo>> {
    const out = new Map<string, AssetInfo>();
    const missing: string[] = [];
    for (const t of new Set(tokens)) {
      const hit = this.memory.get(t);
      if (hit) out.set(t, hit);
      else missing.push(t);
    }
    if (missing.length === 0) return out;
    const key = walletMonitorKeys.walletMonitor(this.keys, 'token', this.chain);
    const stored = await this.redis.hmget(key, ...missing);
    const unread: string[] = [];
    missing.forEach((t, i) => {
      if (stored[i]) {
        const info = JSON.parse(stored[i]!) as AssetInfo;
        this.memory.set(t, info);
        out.set(t, info);
      } else unread.push(t);
    });
    await Promise.all(
      unread.map(async (t) => {
        const info = await this.read(t);
        out.set(t, info);
        // Nothing readable may be a passing RPC failure: ask again next time instead of caching it.
        if (info.symbol === '' && info.decimals === 0) return;
        this.memory.set(t, info);
        await this.redis.hset(key, t, JSON.stringify(info));
      }),
    );
    return out;
  }

  private async read(token: string): Promise<AssetInfo> {
    const address = getAddress(token);
    const [symbol, decimals] = await Promise.all([
      this.client.readContract({ address, abi: erc20Abi, functionName: 'symbol' }).catch(async () => {
        const raw = await this.client.readContract({ address, abi: bytes32SymbolAbi, functionName: 'symbol' }).catch(() => undefined);
        return raw ? hexToString(raw, { size: 32 }).replace(/\0+$/, '') : '';
      }),
      this.client.readContract({ address, abi: erc20Abi, functionName: 'decimals' }).catch(() => 0),
    ]);
    return { address, symbol: String(symbol).slice(0, 32), decimals: Number(decimals) };
  }
}
