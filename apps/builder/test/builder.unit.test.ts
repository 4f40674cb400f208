import { Wallet, id as ethersId } from 'ethers';
import { bytesToHex, concat, getAddress, keccak256, parseGwei, sha256, stringToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { MAX_BUNDLE_BYTES, MAX_TARGET_ADDRESSES, validateSendBundleParams } from '@acg/bundles';
import { blockHash, EMPTY_OMMERS_HASH, EMPTY_REQUESTS_HASH, EMPTY_TRIE_ROOT, nextGasLimit } from '../src/block/header.js';
import { NO_REQUESTS, requestsHash } from '../src/block/requests.js';
import { builderConfigFromEnv, BuilderConfigError, parseRelayUrls, PRODUCTION_RELAYS } from '../src/config.js';
import { planDelayedRefund, planRefund, proposerPayment } from '../src/payment.js';
import { parseRegistrationEntry } from '../src/relay/registrations.js';
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

  it('takes the BuilderNet fields of 2026 (README "Bundle API of 2026")', async () => {
    const raw = await tx();
    const uuid = '8c5b1f7e-2f0a-4e7b-9b8e-3c2d1a0f9e11';
    const pool = '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640';
    const slot = `0x${'00'.repeat(31)}02`;
    const v = await validateSendBundleParams(
      {
        txs: [raw],
        blockNumber: '0x65',
        replacementUuid: uuid,
        replacementNonce: 7,
        refundPercent: 10,
        refundIdentity: account.address.toLowerCase(),
        delayedRefund: true,
        version: 'v2',
        desiredState: 'BottomOfBlock',
        targetAddresses: [pool],
        targetSlots: [[slot]],
      },
      ctx,
    );
    expect(v).toMatchObject({
      replacementNonce: 7,
      refundIdentity: account.address,
      delayedRefund: true,
      version: 'v2',
      bottomOfBlock: true,
      targetAddresses: [getAddress(pool)],
      targetSlots: [[slot]],
    });
    // none given: the Flashbots bundle as before
    expect(await validateSendBundleParams({ txs: [raw], blockNumber: '0x65' }, ctx)).toMatchObject({
      delayedRefund: false,
      bottomOfBlock: false,
      targetAddresses: [],
      targetSlots: [],
    });
  });

  it('names the field of each wrong BuilderNet value with -32602', async () => {
    const raw = await tx();
    const base = { txs: [raw], blockNumber: '0x65' };
    const uuid = { ...base, replacementUuid: '8c5b1f7e-2f0a-4e7b-9b8e-3c2d1a0f9e11' };
    const v2 = { ...base, version: 'v2' };
    const pool = '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640';
    const cases: [Record<string, unknown>, string][] = [
      [{ ...uuid, replacementNonce: -1 }, 'replacementNonce'],
      [{ ...uuid, replacementNonce: 1.5 }, 'replacementNonce'],
      [{ ...uuid, replacementNonce: '7' }, 'replacementNonce'],
      [{ ...uuid, replacementNonce: 2 ** 53 }, 'replacementNonce'],
      [{ ...base, replacementNonce: 1 }, 'replacementNonce'],
      [{ ...base, refundIdentity: '0x1234' }, 'refundIdentity'],
      [{ ...base, refundIdentity: 5 }, 'refundIdentity'],
      [{ ...base, refundPercent: 10, delayedRefund: 'yes' }, 'delayedRefund'],
      [{ ...base, delayedRefund: true }, 'delayedRefund'],
      [{ ...base, refundPercent: 0, delayedRefund: true }, 'delayedRefund'],
      [{ ...base, version: 'v3' }, 'version'],
      [{ ...base, desiredState: 'BottomOfBlock' }, 'desiredState'],
      [{ ...base, version: 'v1', targetAddresses: [pool] }, 'targetAddresses'],
      [{ ...v2, desiredState: 'TopOfBlock' }, 'desiredState'],
      [{ ...v2, targetAddresses: pool }, 'targetAddresses'],
      [{ ...v2, targetAddresses: [pool, 'nope'] }, 'targetAddresses[1]'],
      [{ ...v2, targetAddresses: [pool, pool.toUpperCase().replace('0X', '0x')] }, 'targetAddresses[1]'],
      [
        { ...v2, targetAddresses: Array.from({ length: MAX_TARGET_ADDRESSES + 1 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`) },
        'targetAddresses',
      ],
      [{ ...v2, targetAddresses: [pool], targetSlots: [] }, 'targetSlots'],
      [{ ...v2, targetAddresses: [pool], targetSlots: ['0x01'] }, 'targetSlots[0]'],
      [{ ...v2, targetAddresses: [pool], targetSlots: [['0x01']] }, 'targetSlots[0][0]'],
    ];
    for (const [obj, name] of cases) expect(await field(obj), JSON.stringify(obj).slice(0, 200)).toBe(name);
  });
});

describe('configuration', () => {
  it('defaults to port 8081, the four production relays and the spec rate limit; RELAY_URLS overrides', () => {
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

describe('bid policy, refunds, gas limit, registrations, requests', () => {
  it('pays the proposer BUILDER_PROPOSER_SHARE_BPS of the profit after costs (default 9000), rounding down', () => {
    const c = builderConfigFromEnv({}, { redisUrl: 'redis://x', ethereumRpcUrl: 'http://node' });
    expect(c.proposerShareBps).toBe(9_000);
    expect(builderConfigFromEnv({ BUILDER_PROPOSER_SHARE_BPS: '10000' }, { redisUrl: 'redis://x', ethereumRpcUrl: 'http://node' }).proposerShareBps).toBe(
      10_000,
    );
    expect(() => builderConfigFromEnv({ BUILDER_PROPOSER_SHARE_BPS: '10001' }, { redisUrl: 'redis://x', ethereumRpcUrl: 'http://node' })).toThrow(
      /BUILDER_PROPOSER_SHARE_BPS/,
    );
    expect(proposerPayment(1_000n, 100n, 9_000)).toBe(810n);
    expect(proposerPayment(1_001n, 0n, 3_333)).toBe(333n);
    expect(proposerPayment(100n, 200n, 9_000)).toBeLessThan(0n);
  });

  it('refunds refundPercent of what the refund transaction (default: the last) paid, less its gas, to refundRecipient (default: the first sender)', () => {
    const a = `0x${'aa'.repeat(32)}` as Hex;
    const b = `0x${'bb'.repeat(32)}` as Hex;
    const first = privateKeyToAccount(`0x${'12'.repeat(32)}`).address;
    const outcome = {
      bundle_hash: `0x${'cc'.repeat(32)}` as Hex,
      txHashes: [a, b],
      valueByTx: new Map([
        [a, 1_000_000n],
        [b, 3_000_000n],
      ]),
      refundPercent: 50,
      refundTxHashes: [],
      firstSender: first,
      searcher: first,
      identity: first,
    };
    expect(planRefund(outcome, 10n, 21_000n)).toEqual({ bundle_hash: outcome.bundle_hash, recipient: first, value: 1_500_000n - 210_000n, gas: 21_000n });
    expect(planRefund({ ...outcome, refundTxHashes: [a], refundRecipient: account.address }, 10n, 21_000n)).toMatchObject({
      recipient: account.address,
      value: 500_000n - 210_000n,
    });
    // a refund that does not cover its own gas, or no refundPercent: nothing
    expect(planRefund(outcome, 100n, 21_000n)).toBeUndefined();
    expect(planRefund({ ...outcome, refundPercent: undefined }, 10n, 21_000n)).toBeUndefined();
    // delayed: the whole share, floor of the wei product, no gas taken off (no transaction in the block)
    expect(planDelayedRefund({ ...outcome, refundPercent: 33, delayedRefund: true })).toEqual({ recipient: first, value: (3_000_000n * 33n) / 100n });
    expect(planDelayedRefund({ ...outcome, refundPercent: 1, valueByTx: new Map([[b, 99n]]) })).toBeUndefined();
  });

  it('moves the gas limit toward the registered preference by less than parent/1024', () => {
    expect(nextGasLimit(30_000_000n, 30_000_000n)).toBe(30_000_000n);
    expect(nextGasLimit(30_000_000n, 36_000_000n)).toBe(30_000_000n + 30_000_000n / 1024n - 1n);
    expect(nextGasLimit(30_000_000n, 29_000_000n)).toBe(30_000_000n - 30_000_000n / 1024n + 1n);
    expect(nextGasLimit(30_000_000n, 30_010_000n)).toBe(30_010_000n);
  });

  it('reads relay registration entries, skipping malformed ones', () => {
    const entry = {
      slot: '123',
      validator_index: '7',
      entry: { message: { fee_recipient: `0x${'ab'.repeat(20)}`, gas_limit: '36000000', timestamp: '1', pubkey: `0x${'CD'.repeat(48)}` }, signature: '0x' },
    };
    expect(parseRegistrationEntry(entry)).toEqual({
      slot: 123n,
      validatorIndex: 7n,
      pubkey: `0x${'cd'.repeat(48)}`,
      feeRecipient: getAddress(`0x${'ab'.repeat(20)}`),
      gasLimit: 36_000_000n,
    });
    expect(parseRegistrationEntry({ ...entry, slot: 'x' })).toBeUndefined();
    expect(parseRegistrationEntry({ ...entry, entry: { message: { ...entry.entry.message, pubkey: '0x12' } } })).toBeUndefined();
    expect(parseRegistrationEntry(null)).toBeUndefined();
  });

  it('hashes EIP-7685 requests: sha256("") without any, else sha256 of each non-empty type hash', () => {
    expect(requestsHash(NO_REQUESTS)).toBe(EMPTY_REQUESTS_HASH);
    const withdrawals = `0x${'11'.repeat(76)}` as Hex;
    expect(requestsHash({ ...NO_REQUESTS, withdrawals })).toBe(sha256(sha256(concat(['0x01', withdrawals]))));
  });

  it('refuses a header with a later fork field but not an earlier one', () => {
    expect(() =>
      blockHash({
        parentHash: EMPTY_TRIE_ROOT,
        ommersHash: EMPTY_OMMERS_HASH,
        coinbase: account.address,
        stateRoot: EMPTY_TRIE_ROOT,
        transactionsRoot: EMPTY_TRIE_ROOT,
        receiptsRoot: EMPTY_TRIE_ROOT,
        logsBloom: `0x${'00'.repeat(256)}`,
        difficulty: 0n,
        number: 1n,
        gasLimit: 30_000_000n,
        gasUsed: 0n,
        timestamp: 1n,
        extraData: '0x',
        mixHash: EMPTY_TRIE_ROOT,
        nonce: '0x0000000000000000',
        requestsHash: EMPTY_REQUESTS_HASH,
      }),
    ).toThrow(/requestsHash but not baseFeePerGas/);
  });
});
