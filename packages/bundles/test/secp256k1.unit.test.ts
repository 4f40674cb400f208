import { hashMessage, hexToBytes, parseGwei, recoverMessageAddress, recoverTransactionAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { nativeSecp256k1Available, recoverAddressFromSignature, secp256k1Backend, useSecp256k1Backend, type Secp256k1Backend } from '@acg/secp256k1';
import { clearTxSenderCache, decodeBundleTx, RpcError } from '../src/index.js';

const backends: Secp256k1Backend[] = ['native', 'noble'];
const initial = secp256k1Backend();
afterEach(() => {
  useSecp256k1Backend(initial);
  clearTxSenderCache();
});

describe('secp256k1 backends', () => {
  it('the native binding loads from its prebuilt binary on this platform (linux-x64) and is the default', () => {
    expect(nativeSecp256k1Available()).toBe(true);
    expect(initial).toBe('native');
  });

  it('native and noble recover the same signer as viem for personal_sign signatures, v as 27/28 and as 0/1', async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const text = `0x${i.toString(16).padStart(64, '0')}` as Hex;
      const signature = await account.signMessage({ message: text });
      const digest = hexToBytes(hashMessage(text));
      const bytes = Buffer.from(signature.slice(2), 'hex');
      expect(await recoverMessageAddress({ message: text, signature })).toBe(account.address);
      for (const b of backends) {
        expect(recoverAddressFromSignature(digest, bytes, b)).toBe(account.address);
        const zeroOne = Buffer.from(bytes);
        zeroOne[64] -= 27;
        expect(recoverAddressFromSignature(digest, zeroOne, b)).toBe(account.address);
      }
    }
  });

  it('both refuse r or s of 0 or not below the curve order, a bad v, and a wrong length', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const signature = Buffer.from((await account.signMessage({ message: 'x' })).slice(2), 'hex');
    const digest = new Uint8Array(32).fill(7);
    const n = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');
    const cases: Buffer[] = [];
    const zeroR = Buffer.from(signature);
    zeroR.fill(0, 0, 32);
    const zeroS = Buffer.from(signature);
    zeroS.fill(0, 32, 64);
    const bigR = Buffer.from(signature);
    n.copy(bigR, 0);
    const bigS = Buffer.from(signature);
    Buffer.alloc(32, 0xff).copy(bigS, 32);
    const badV = Buffer.from(signature);
    badV[64] = 29;
    cases.push(zeroR, zeroS, bigR, bigS, badV, signature.subarray(0, 64));
    for (const b of backends) for (const c of cases) expect(() => recoverAddressFromSignature(digest, c, b)).toThrow();
  });
});

describe('decodeBundleTx', () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const fees = { maxFeePerGas: parseGwei('50'), maxPriorityFeePerGas: parseGwei('2') };
  const signAll = async (): Promise<Hex[]> => [
    await account.signTransaction({ type: 'legacy', chainId: 1, nonce: 1, to: account.address, value: 1n, gas: 21_000n, gasPrice: parseGwei('9') }),
    await account.signTransaction({ type: 'eip2930', chainId: 1, nonce: 2, to: account.address, gas: 30_000n, gasPrice: parseGwei('9'), accessList: [] }),
    await account.signTransaction({ type: 'eip1559', chainId: 1, nonce: 3, to: account.address, value: 5n, gas: 21_000n, ...fees }),
    await account.signTransaction({
      type: 'eip7702',
      chainId: 1,
      nonce: 4,
      to: account.address,
      gas: 60_000n,
      ...fees,
      authorizationList: [await account.signAuthorization({ chainId: 1, nonce: 5, contractAddress: account.address })],
    }),
  ];

  it('recovers the same sender as viem for legacy EIP-155, EIP-2930, EIP-1559 and EIP-7702, with either backend, cached or not', async () => {
    const raws = await signAll();
    for (const b of backends) {
      useSecp256k1Backend(b);
      clearTxSenderCache();
      for (const [i, raw] of raws.entries()) {
        const viemFrom = await recoverTransactionAddress({ serializedTransaction: raw as never });
        const cold = await decodeBundleTx(raw, 'txs[0]', 1);
        expect(cold.from).toBe(viemFrom);
        expect(cold.from).toBe(account.address);
        expect(cold.nonce).toBe(i + 1);
        const warm = await decodeBundleTx(raw, 'txs[0]', 1);
        expect(warm).toEqual(cold);
      }
    }
  });

  it('a cached transaction is still refused for another chain id', async () => {
    const [raw] = await signAll();
    await decodeBundleTx(raw, 'txs[0]', 1);
    const e = await decodeBundleTx(raw, 'txs[3]', 5).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RpcError);
    expect((e as RpcError).code).toBe(-32602);
    expect((e as RpcError).data).toMatchObject({ field: 'txs[3]', chain_id: 1, expected: 5 });
  });

  it('a signature changed in one byte never recovers the original sender, and an unrecoverable one is -32602', async () => {
    const raw = (await signAll())[2];
    // the last 32 bytes are s: flip one bit in the middle of s
    const pos = raw.length - 20;
    const flipped = `${raw.slice(0, pos)}${(Number.parseInt(raw[pos], 16) ^ 1).toString(16)}${raw.slice(pos + 1)}` as Hex;
    const out = await decodeBundleTx(flipped, 'txs[1]', 1).catch((x: unknown) => x);
    if (out instanceof RpcError) expect(out.data).toMatchObject({ field: 'txs[1]' });
    else expect((out as { from: string }).from).not.toBe(account.address);
  });
});
