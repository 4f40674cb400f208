import { Wallet, id as ethersId } from 'ethers';
import { bytesToHex, keccak256, parseGwei, stringToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { MAX_BUNDLE_BYTES, validateSendBundleParams } from '@acg/bundles';
import { builderConfigFromEnv, BuilderConfigError, parseRelayUrls, PRODUCTION_RELAYS } from '../src/config.js';
import { blsPublicKey, computeBuilderDomain, signBidTrace, verifyBidTrace, type BidTraceJson } from '../src/relay/signing.js';
import { RpcError } from '@acg/bundles';
import { bundleSignatureMessage, verifyBundleSignature } from '../src/signature.js';

const account = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const tx = (chainId = 1, nonce = 0): Promise<Hex> =>
  account.signTransaction({
    type: 'eip1559',
    chainId,
    nonce,
    to: account.address,
    value: 1n,
    gas: 21_000n,
    maxFeePerGas: parseGwei('20'),
    maxPriorityFeePerGas: parseGwei('1'),
  });

describe('BLS signing of the BidTrace (builder-specs)', () => {
  it('computes the mainnet DOMAIN_APPLICATION_BUILDER domain', () => {
    expect(bytesToHex(computeBuilderDomain('0x00000000'))).toBe('0x00000001f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a9');
  });

  it('derives the public key of the consensus-spec test key', () => {
    expect(blsPublicKey('0x263dbd792f5b1be47ed85f8938c0f29586af0d3ac7b977f21c278fe1462040e3')).toBe(
      '0xa491d1b0ecd9bb917989f0e74f0dea0422eac4a873e5e2644f368dffb9a6e20fd6e10c1b77654d067c0618f6e5a7f79a',
    );
  });

  it('signs a BidTrace that verifies, and fails on any changed field, other key or other domain', () => {
    const sk: Hex = `0x${'22'.repeat(32)}`;
    const msg: BidTraceJson = {
      slot: '7',
      parent_hash: `0x${'01'.repeat(32)}`,
      block_hash: `0x${'02'.repeat(32)}`,
      builder_pubkey: blsPublicKey(sk),
      proposer_pubkey: blsPublicKey(`0x${'33'.repeat(32)}`),
      proposer_fee_recipient: `0x${'04'.repeat(20)}`,
      gas_limit: '30000000',
      gas_used: '21000',
      value: '1000000000000000000',
    };
    const domain = computeBuilderDomain();
    const sig = signBidTrace(msg, sk, domain);
    expect(sig).toMatch(/^0x[0-9a-f]{192}$/);
    expect(verifyBidTrace(msg, sig, domain)).toBe(true);
    expect(verifyBidTrace({ ...msg, value: '1000000000000000001' }, sig, domain)).toBe(false);
    expect(verifyBidTrace({ ...msg, builder_pubkey: blsPublicKey(`0x${'44'.repeat(32)}`) }, sig, domain)).toBe(false);
    expect(verifyBidTrace(msg, sig, computeBuilderDomain('0x10000038'))).toBe(false);
    expect(verifyBidTrace(msg, '0x1234', domain)).toBe(false);
  });
});

describe('X-Bundle-Signature (Flashbots construction)', () => {
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_sendBundle","params":[]}';

  it('signs the 0x-hex text of keccak256(body): viem and ethers v6 give the same signature, and it recovers the searcher', async () => {
    const wallet = new Wallet(`0x${'11'.repeat(32)}`);
    const viemSig = await account.signMessage({ message: keccak256(stringToHex(body)) });
    expect(await wallet.signMessage(ethersId(body))).toBe(viemSig);
    expect(bundleSignatureMessage(body)).toBe(ethersId(body));
    expect(await verifyBundleSignature(new TextEncoder().encode(body), `${account.address}:${viemSig}`)).toBe(account.address);
    expect(await verifyBundleSignature(new TextEncoder().encode(body), `${account.address.toLowerCase()}:${viemSig}`)).toBe(account.address);
  });

  it('refuses missing, malformed, 0x-less, wrong-address and tampered-body signatures with -32600', async () => {
    const bytes = new TextEncoder().encode(body);
    const sig = await account.signMessage({ message: keccak256(stringToHex(body)) });
    const reason = async (header: string | undefined, b = bytes) => {
      const e = await verifyBundleSignature(b, header).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RpcError);
      expect((e as RpcError).code).toBe(-32600);
      return (e as RpcError).data?.reason;
    };
    expect(await reason(undefined)).toBe('signature_missing');
    expect(await reason('nonsense')).toBe('signature_malformed');
    expect(await reason(`${account.address}:${sig.slice(2)}`)).toBe('signature_malformed');
    expect(await reason(`0x${'00'.repeat(20)}:${sig}`)).toBe('signature_mismatch');
    expect(await reason(`${account.address}:${sig}`, new TextEncoder().encode(body + ' '))).toBe('signature_mismatch');
  });
});

describe('validateSendBundleParams', () => {
  const ctx = { chainId: 1, head: 100n };
  const field = async (obj: Record<string, unknown>) => {
    const e = await validateSendBundleParams(obj, ctx).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RpcError);
    expect((e as RpcError).code).toBe(-32602);
    return (e as RpcError).data?.field;
  };

  it('accepts a valid bundle and decodes every transaction with its sender', async () => {
    const raw = await tx();
    const v = await validateSendBundleParams(
      { txs: [raw], blockNumber: '0x65', revertingTxHashes: [keccak256(raw)], replacementUuid: '8C5B1F7E-2F0A-4E7B-9B8E-3C2D1A0F9E11' },
      ctx,
    );
    expect(v.blockNumber).toBe(101n);
    expect(v.txs[0]).toMatchObject({ from: account.address, hash: keccak256(raw), nonce: 0 });
    expect(v.replacementUuid).toBe('8c5b1f7e-2f0a-4e7b-9b8e-3c2d1a0f9e11');
  });

  it('names the bad field for each kind of bad input', async () => {
    const raw = await tx();
    expect(await field({ blockNumber: '0x65' })).toBe('txs');
    expect(await field({ txs: [], blockNumber: '0x65' })).toBe('txs');
    expect(await field({ txs: [raw, '0xc0'], blockNumber: '0x65' })).toBe('txs[1]');
    expect(await field({ txs: [await tx(5)], blockNumber: '0x65' })).toBe('txs[0]');
    expect(await field({ txs: [raw, raw], blockNumber: '0x65' })).toBe('txs[1]');
    expect(await field({ txs: [raw], blockNumber: '0x64' })).toBe('blockNumber');
    expect(await field({ txs: [raw], blockNumber: 101 })).toBe('blockNumber');
    expect(await field({ txs: [raw], blockNumber: '0x65', revertingTxHashes: [`0x${'00'.repeat(32)}`] })).toBe('revertingTxHashes[0]');
    expect(await field({ txs: [raw], blockNumber: '0x65', refundPercent: 100 })).toBe('refundPercent');
    expect(await field({ txs: [raw], blockNumber: '0x65', replacementUuid: 'nope' })).toBe('replacementUuid');
    expect(await field({ txs: [raw], blockNumber: '0x65', minTimestamp: -1 })).toBe('minTimestamp');
    expect(await field({ txs: [raw], blockNumber: '0x65', extra: true })).toBe('extra');
    expect(await field({ txs: [`0x${'ab'.repeat(MAX_BUNDLE_BYTES + 1)}`], blockNumber: '0x65' })).toBe('txs');
    expect(await field({ txs: Array(101).fill(raw), blockNumber: '0x65' })).toBe('txs');
  });
});

describe('configuration', () => {
  it('defaults to port 8081, the four production relays and the SPEC rate limit; RELAY_URLS overrides', () => {
    const c = builderConfigFromEnv({}, { redisUrl: 'redis://x', ethereumRpcUrl: 'http://node' });
    expect(c).toMatchObject({ port: 8081, rateLimit: { ratePerSecond: 10, burst: 20 }, bundlePriceBaseUnits: 100_000n, genesisForkVersion: '0x00000000' });
    expect(c.relays).toEqual(PRODUCTION_RELAYS);
    expect(parseRelayUrls('a=http://127.0.0.1:1, http://relay.example.org/')).toEqual([
      { name: 'a', url: 'http://127.0.0.1:1' },
      { name: 'relay', url: 'http://relay.example.org' },
    ]);
    expect(() => builderConfigFromEnv({ BUILDER_BLS_SECRET_KEY: '0x12' }, { redisUrl: 'redis://x', ethereumRpcUrl: 'http://node' })).toThrow(
      BuilderConfigError,
    );
    expect(() => builderConfigFromEnv({}, { redisUrl: 'redis://x' })).toThrow(/ETHEREUM_RPC_URL/);
  });
});
