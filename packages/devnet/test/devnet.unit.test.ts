import { describe, expect, it } from 'vitest';
import { devAccount, devPrivateKey, DEV_ACCOUNT_COUNT, DEV_MNEMONIC, DEV_ROLES } from '../src/accounts.js';
import { linkBytecode, loadFiatTokenArtifacts } from '../src/artifacts.js';
import { devChain } from '../src/clients.js';
import { MULTICALL3_ADDRESS } from '../src/constants.js';
import { redisNotInstalledMessage } from '../src/redis.js';

describe('dev accounts', () => {
  it("are anvil/hardhat's standard accounts", () => {
    expect(DEV_MNEMONIC).toBe('test test test test test test test test test test test junk');
    expect(devAccount(0).address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(devAccount(1).address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(devAccount(9).address).toBe('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
    expect(devPrivateKey(0)).toBe('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
    expect(devAccount(3)).toBe(devAccount(3)); // cached
  });

  it('have the roles of docs/decisions.md', () => {
    expect(DEV_ROLES).toEqual({ facilitator: 0, treasury: 1, buyers: [2, 3, 4, 5, 6, 7, 8, 9], provider: 10, secondProvider: 11, searcher: 9 });
    // the liquidation searcher signs on the Ethereum dev chain and pays the gateway as the last buyer (docs/liquidation-plans.md)
    expect(DEV_ROLES.buyers).toContain(DEV_ROLES.searcher);
    expect(devAccount(DEV_ROLES.searcher).address).toBe('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
    expect(DEV_ACCOUNT_COUNT).toBe(10);
    // the example provider's wallet is outside anvil's funded accounts and no other role
    expect(DEV_ROLES.provider).toBeGreaterThanOrEqual(DEV_ACCOUNT_COUNT);
    expect(DEV_ROLES.secondProvider).toBeGreaterThanOrEqual(DEV_ACCOUNT_COUNT);
    expect(devAccount(DEV_ROLES.provider).address).toBe('0xBcd4042DE499D14e55001CcbB24a551F3b954096');
  });

  it('reject bad indexes', () => {
    expect(() => devAccount(-1)).toThrow(/non-negative integer/);
    expect(() => devAccount(1.5)).toThrow(/non-negative integer/);
  });
});

describe('linkBytecode', () => {
  const { fiatToken } = loadFiatTokenArtifacts();
  const lib = '0x1111111111111111111111111111111111111111' as const;

  it('fills every SignatureChecker placeholder of FiatTokenV2_2 (creation and runtime code)', () => {
    expect(fiatToken.bytecode).toContain('__$');
    for (const [code, refs] of [
      [fiatToken.bytecode, fiatToken.linkReferences],
      [fiatToken.deployedBytecode, fiatToken.deployedLinkReferences],
    ] as const) {
      const linked = linkBytecode(code, refs, { SignatureChecker: lib });
      expect(linked).not.toContain('__$');
      expect(linked.length).toBe(code.length);
      const positions = Object.values(refs).flatMap((l) => l.SignatureChecker);
      expect(positions.length).toBeGreaterThan(0);
      for (const { start } of positions) expect(linked.slice(2 + start * 2, 2 + start * 2 + 40)).toBe(lib.slice(2));
    }
  });

  it('refuses a missing library address', () => {
    expect(() => linkBytecode(fiatToken.bytecode, fiatToken.linkReferences, {})).toThrow(/no address for library/);
  });
});

describe('devChain', () => {
  it('carries the chain id, RPC URL and Multicall3', () => {
    const chain = devChain(8453, 'http://127.0.0.1:1234');
    expect(chain.id).toBe(8453);
    expect(chain.rpcUrls.default.http).toEqual(['http://127.0.0.1:1234']);
    expect(chain.contracts?.multicall3?.address).toBe(MULTICALL3_ADDRESS);
  });
});

describe('redisNotInstalledMessage', () => {
  it('names the install command and REDIS_URL', () => {
    expect(redisNotInstalledMessage()).toMatch(/apt-get install -y redis-server|brew install redis/);
    expect(redisNotInstalledMessage()).toContain('REDIS_URL');
  });
});

describe('freePort', () => {
  it('picks bindable ports below the OS ephemeral ranges (20000-32767), so an outgoing connection never takes one before it is bound', async () => {
    const { freePort, isPortFree } = await import('../src/ports.js');
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThanOrEqual(32_767);
      expect(await isPortFree(port)).toBe(true);
    }
  });
});
