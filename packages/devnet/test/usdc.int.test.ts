import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  hashDomain,
  http,
  keccak256,
  toHex,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
} from 'viem';
import { devAccount, DEV_ROLES } from '../src/accounts.js';
import { startAnvil, type AnvilInstance } from '../src/anvil.js';
import { linkBytecode, loadFiatTokenArtifacts } from '../src/artifacts.js';
import { devChain } from '../src/clients.js';
import { BASE_USDC_ADDRESS, BUYER_USDC_FUNDING, MULTICALL3_ADDRESS } from '../src/constants.js';
import { setupPaymentChain, type PaymentChainInfo } from '../src/paymentChain.js';
import { installUsdc, mintUsdc, TRANSFER_WITH_AUTHORIZATION_TYPES, usdcBalance } from '../src/usdc.js';
import { usdcAbi } from '../src/usdcAbi.generated.js';

let anvil: AnvilInstance;
let pay: PaymentChainInfo;
let client: PublicClient<Transport, Chain>;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  pay = await setupPaymentChain(anvil.rpcUrl);
  client = createPublicClient({ chain: pay.chain, transport: http(anvil.rpcUrl), pollingInterval: 50 });
});
afterAll(async () => {
  await anvil?.stop();
});

const read = <F extends 'name' | 'symbol' | 'version' | 'decimals' | 'currency' | 'DOMAIN_SEPARATOR' | 'totalSupply'>(functionName: F) =>
  client.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName });

/** EIP-3009 TransferWithAuthorization typed data, as x402's exact EVM scheme signs it. */
function authorization(from: Address, to: Address, value: bigint, nonce: Hex, chainId: number) {
  return {
    domain: { name: 'USD Coin', version: '2', chainId, verifyingContract: BASE_USDC_ADDRESS },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: { from, to, value, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600), nonce },
  } as const;
}

/** The EIP-712 domain separator FiatTokenV2_2 must report: {name "USD Coin", version "2", chainId, verifyingContract}. */
function usdcDomainSeparator(chainId: number, verifyingContract: Address): Hex {
  return hashDomain({
    domain: { name: 'USD Coin', version: '2', chainId: BigInt(chainId), verifyingContract },
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
    },
  });
}

describe('setupPaymentChain', () => {
  it('describes the chain and its roles', () => {
    expect(pay.chainId).toBe(8453);
    expect(pay.network).toBe('eip155:8453');
    expect(pay.usdc).toBe(BASE_USDC_ADDRESS);
    expect(pay.multicall3).toBe(MULTICALL3_ADDRESS);
    expect(pay.facilitator.address).toBe(devAccount(DEV_ROLES.facilitator).address);
    expect(pay.facilitator.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(pay.treasury.address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(pay.buyers.map((b) => b.address)).toEqual(DEV_ROLES.buyers.map((i) => devAccount(i).address));
    expect(pay.buyers).toHaveLength(8);
  });

  it('gives every buyer 10,000 USDC and nobody else any', async () => {
    for (const buyer of pay.buyers) {
      expect(await usdcBalance(anvil.rpcUrl, buyer.address)).toBe(10_000_000_000n);
    }
    expect(await usdcBalance(anvil.rpcUrl, pay.facilitator.address)).toBe(0n);
    expect(await read('totalSupply')).toBe(8n * BUYER_USDC_FUNDING);
  });

  it('is idempotent: a second run does not mint again', async () => {
    const again = await setupPaymentChain(anvil.rpcUrl);
    expect(again.usdc).toBe(BASE_USDC_ADDRESS);
    expect(await read('totalSupply')).toBe(8n * BUYER_USDC_FUNDING);
  });
});

describe('USDC at the Base address', () => {
  it('is FiatTokenV2_2 with the metadata of Base USDC', async () => {
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    expect(await read('currency')).toBe('USD');
    const owner = pay.facilitator.address;
    for (const fn of ['owner', 'masterMinter', 'pauser', 'blacklister'] as const) {
      expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: fn })).toBe(owner);
    }
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'isMinter', args: [owner] })).toBe(true);
    // initializeV2_1/V2_2 blacklist the token itself
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'isBlacklisted', args: [BASE_USDC_ADDRESS] })).toBe(true);
  });

  it('has the EIP-712 domain {name "USD Coin", version "2", chainId 8453, verifyingContract USDC}', async () => {
    expect(await read('DOMAIN_SEPARATOR')).toBe(usdcDomainSeparator(8453, BASE_USDC_ADDRESS));
  });

  it('runs the linked artifact code, with SignatureChecker deployed', async () => {
    const code = await client.getCode({ address: BASE_USDC_ADDRESS });
    const { fiatToken } = loadFiatTokenArtifacts();
    const ref = Object.values(fiatToken.deployedLinkReferences)[0].SignatureChecker[0];
    const library = `0x${code!.slice(2 + ref.start * 2, 2 + ref.start * 2 + 40)}` as Address;
    expect(code).toBe(linkBytecode(fiatToken.deployedBytecode, fiatToken.deployedLinkReferences, { SignatureChecker: library }));
    expect((await client.getCode({ address: library }))?.length).toBeGreaterThan(2);
  });

  it('exports an ABI equal to the artifact ABI', () => {
    expect(usdcAbi).toEqual(loadFiatTokenArtifacts().fiatToken.abi);
  });

  it('moves funds with an EIP-3009 transferWithAuthorization signed by a buyer and sent by the facilitator', async () => {
    const [buyer] = pay.buyers;
    const value = 1_250_000n; // 1.25 USDC
    const nonce = keccak256(toHex(`x402-test-${Date.now()}-${Math.random()}`));
    const typed = authorization(buyer.address, pay.treasury.address, value, nonce, pay.chainId);
    const signature = await buyer.signTypedData(typed);

    const before = {
      buyer: await usdcBalance(anvil.rpcUrl, buyer.address),
      treasury: await usdcBalance(anvil.rpcUrl, pay.treasury.address),
      facilitatorEth: await client.getBalance({ address: pay.facilitator.address }),
    };
    const wallet = createWalletClient({ account: pay.facilitator, chain: pay.chain, transport: http(anvil.rpcUrl) });
    const m = typed.message;
    const args = [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature] as const;
    const hash = await wallet.writeContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'transferWithAuthorization', args });
    const receipt = await client.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(pay.facilitator.address.toLowerCase());

    expect(await usdcBalance(anvil.rpcUrl, buyer.address)).toBe(before.buyer - value);
    expect(await usdcBalance(anvil.rpcUrl, pay.treasury.address)).toBe(before.treasury + value);
    expect(await client.getBalance({ address: pay.facilitator.address })).toBeLessThan(before.facilitatorEth); // paid gas
    expect(await client.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'authorizationState', args: [buyer.address, nonce] })).toBe(
      true,
    );
    const events = receipt.logs.map((l) => decodeEventLog({ abi: usdcAbi, data: l.data, topics: l.topics }).eventName);
    expect(events).toEqual(expect.arrayContaining(['AuthorizationUsed', 'Transfer']));

    // the same authorization cannot be used twice
    await expect(
      client.simulateContract({ account: pay.facilitator, address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'transferWithAuthorization', args }),
    ).rejects.toThrow(/authorization is used or canceled/);
  });

  it('rejects an authorization signed for another chain id (domain binds chainId)', async () => {
    const buyer = pay.buyers[1];
    const nonce = keccak256(toHex(`wrong-chain-${Date.now()}`));
    const typed = authorization(buyer.address, pay.treasury.address, 1_000_000n, nonce, 1);
    const signature = await buyer.signTypedData(typed);
    const m = typed.message;
    await expect(
      client.simulateContract({
        account: pay.facilitator,
        address: BASE_USDC_ADDRESS,
        abi: usdcAbi,
        functionName: 'transferWithAuthorization',
        args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature],
      }),
    ).rejects.toThrow(/invalid signature/);
  });
});

describe('mintUsdc / installUsdc', () => {
  it('mints base units to an address', async () => {
    const to = devAccount(DEV_ROLES.treasury).address;
    const before = await usdcBalance(anvil.rpcUrl, to);
    await mintUsdc(anvil.rpcUrl, to, 7_000_000n);
    expect(await usdcBalance(anvil.rpcUrl, to)).toBe(before + 7_000_000n);
    await expect(mintUsdc(anvil.rpcUrl, to, 0n)).rejects.toThrow(/amount must be > 0/);
  });

  it('refuses a minter that is not configured', async () => {
    await expect(mintUsdc(anvil.rpcUrl, devAccount(3).address, 1n, { minter: devAccount(5) })).rejects.toThrow(/is not a minter/);
  });

  it('installs at another address with its own domain, and refuses an address holding other code', async () => {
    const other: Address = '0x000000000000000000000000000000000000dEaD';
    const deployment = await installUsdc(anvil.rpcUrl, { address: other, owner: devAccount(9) });
    expect(deployment.address).toBe(other);
    expect(deployment.owner).toBe(devAccount(9).address);
    const separator = await client.readContract({ address: other, abi: usdcAbi, functionName: 'DOMAIN_SEPARATOR' });
    expect(separator).toBe(usdcDomainSeparator(8453, other));
    await expect(installUsdc(anvil.rpcUrl, { address: MULTICALL3_ADDRESS })).rejects.toThrow(/already holds code/);
  });

  it('gives a chain its own chain id in the domain', async () => {
    const other = await startAnvil({ chainId: 42161 });
    try {
      await installUsdc(other.rpcUrl);
      const c = createPublicClient({ chain: devChain(42161, other.rpcUrl), transport: http(other.rpcUrl) });
      const separator = await c.readContract({ address: BASE_USDC_ADDRESS, abi: usdcAbi, functionName: 'DOMAIN_SEPARATOR' });
      expect(separator).not.toBe(await read('DOMAIN_SEPARATOR'));
      expect(separator).toBe(usdcDomainSeparator(42161, BASE_USDC_ADDRESS));
    } finally {
      await other.stop();
    }
  });
});
