import { Ledger } from '@acg/accounts';
import { devAccount } from '@acg/devnet';
import { bundleHash, readSearcherCharges } from '@acg/bundles';
import { concat, keccak256, parseEther, type Hash, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { blsPublicKey } from '../src/relay/signing.js';
import { flashbotsSignature, freshIp, post, quantity as hex, rpcBody as call, sendBundleBody, TEST_BLS_SECRET_KEY, transfer, type Reply } from './harness.js';

// The searcher API beyond eth_sendBundle (docs/decisions.md "Bundle submission"): mev_sendBundle (MEV-Share
// v0.1), flashbots_getBundleStatsV2, and the price of a bundle on the signer's metered account.
const t = useTestBuilder();

const txHash = (raw: Hex) => keccak256(raw);
async function signedBy(account: LocalAccount, body: string): Promise<Reply> {
  return post(t.builder.rpcUrl, body, { 'X-Flashbots-Signature': await flashbotsSignature(account, body) }, freshIp());
}
const stats = (account: LocalAccount, hash: Hash, block: bigint) =>
  signedBy(account, call('flashbots_getBundleStatsV2', [{ bundleHash: hash, blockNumber: hex(block) }]));
const mevBody = (txs: { tx: Hex; canRevert: boolean }[], block: bigint, extra: Record<string, unknown> = {}) =>
  call('mev_sendBundle', [{ version: 'v0.1', inclusion: { block: hex(block) }, body: txs, ...extra }]);

describe('mev_sendBundle (MEV-Share v0.1)', () => {
  it('queues the bundle for every block from inclusion.block to maxBlock, returns {bundleHash}, lands it, and prices it once', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const target = (await t.head()) + 1n;
    const a = await transfer(t.client, 2, { tipGwei: '3' });
    const b = await transfer(t.client, 3, { to: t.builder.coinbase, value: parseEther('0.01'), tipGwei: '1' });
    const body = call('mev_sendBundle', [
      {
        version: 'v0.1',
        inclusion: { block: hex(target), maxBlock: hex(target + 2n) },
        body: [
          { tx: a, canRevert: false },
          { tx: b, canRevert: true },
        ],
        privacy: { hints: ['hash', 'logs'], builders: ['flashbots'] },
        metadata: { originId: 'test' },
      },
    ]);
    const res = await signedBy(searcher, body);
    const expected = keccak256(concat([txHash(a), txHash(b)]));
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 1, result: { bundleHash: expected, receivedTimestampMs: expect.any(Number) } });
    expect(bundleHash([txHash(a), txHash(b)])).toBe(expected);

    for (const block of [target, target + 1n, target + 2n]) {
      const pooled = (await t.builder.intake.pool.bundlesFor(block)).filter((x) => x.searcher === searcher.address);
      expect(pooled, `block ${block}`).toHaveLength(1);
      expect(pooled[0]).toMatchObject({ bundle_hash: expected, block_number: String(block), reverting_tx_hashes: [txHash(b)], dropping_tx_hashes: [] });
    }
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({ bundles: 1, owed_base_units: '100000' });

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toEqual([expected]);
    const block = await t.client.getBlock({ blockNumber: target });
    // the bundle, then the builder's payment to the proposer
    expect(block.transactions.slice(0, 2)).toEqual([txHash(a), txHash(b)]);
    expect(block.transactions.at(-1)).toBe(attempt.bid!.paymentTxHash);
  });

  it('maps validity.refund and refundConfig onto refundPercent, refundTxHashes and refundRecipient', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const target = (await t.head()) + 3n;
    const user = await transfer(t.client, 4);
    const backrun = await transfer(t.client, 5);
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const body = (refundConfig?: unknown[]) =>
      mevBody(
        [
          { tx: user, canRevert: false },
          { tx: backrun, canRevert: false },
        ],
        target,
        { validity: { refund: [{ bodyIdx: 0, percent: 40 }], ...(refundConfig ? { refundConfig } : {}) } },
      );
    expect((await signedBy(searcher, body())).json.result).toHaveProperty('bundleHash');
    let pooled = (await t.builder.intake.pool.bundlesFor(target)).find((x) => x.searcher === searcher.address)!;
    // MEV-Share's rule: the refund goes to the signer of the transaction at bodyIdx
    expect(pooled).toMatchObject({ refund_percent: 40, refund_tx_hashes: [txHash(user)], refund_recipient: devAccount(4).address });

    const other = privateKeyToAccount(generatePrivateKey());
    expect((await signedBy(other, body([{ address: recipient, percent: 100 }]))).json.result).toHaveProperty('bundleHash');
    pooled = (await t.builder.intake.pool.bundlesFor(target)).find((x) => x.searcher === other.address)!;
    expect(pooled).toMatchObject({ refund_percent: 40, refund_tx_hashes: [txHash(user)], refund_recipient: recipient });
  });

  it('refuses what it cannot honour with -32602 naming the field: {hash} and {bundle} entries, wrong version, bad tx, wrong chain, past block, too wide a range', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const h = await t.head();
    const good = await transfer(t.client, 6);
    const cases: [string, string, Record<string, unknown>?][] = [
      [mevBody([{ hash: txHash(good) } as never, { tx: good, canRevert: false }], h + 1n), 'body[0]', { reason: 'unsupported_body_entry' }],
      [mevBody([{ bundle: { version: 'v0.1' } } as never], h + 1n), 'body[0]', { reason: 'unsupported_body_entry' }],
      [call('mev_sendBundle', [{ version: 'v0.2', inclusion: { block: hex(h + 1n) }, body: [{ tx: good, canRevert: false }] }]), 'version'],
      [
        mevBody(
          [
            { tx: good, canRevert: false },
            { tx: '0xzz' as Hex, canRevert: false },
          ],
          h + 1n,
        ),
        'body[1].tx',
      ],
      [mevBody([{ tx: await transfer(t.client, 6, { chainId: 5 }), canRevert: false }], h + 1n), 'body[0].tx'],
      [mevBody([{ tx: good, canRevert: false }], h), 'inclusion.block'],
      [
        call('mev_sendBundle', [{ version: 'v0.1', inclusion: { block: hex(h + 1n), maxBlock: hex(h + 32n) }, body: [{ tx: good, canRevert: false }] }]),
        'inclusion.maxBlock',
      ],
      [mevBody([{ tx: good } as never], h + 1n), 'body[0].canRevert'],
      [mevBody([{ tx: good, canRevert: false }], h + 1n, { validity: { refund: [{ bodyIdx: 3, percent: 10 }] } }), 'validity.refund[0].bodyIdx'],
      [
        mevBody([{ tx: good, canRevert: false }], h + 1n, { validity: { refundConfig: [{ address: devAccount(1).address, percent: 100 }] } }),
        'validity.refundConfig',
      ],
      [mevBody([{ tx: good, canRevert: false }], h + 1n, { privacy: { hints: ['everything'] } }), 'privacy.hints'],
      [mevBody([{ tx: good, canRevert: false }], h + 1n, { surprise: 1 }), 'surprise'],
    ];
    for (const [body, field, data] of cases) {
      const res = await signedBy(searcher, body);
      expect(res.json.error, field).toMatchObject({ code: -32602, data: { field, ...(data ?? {}) } });
    }
    // nothing was queued or charged
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({ bundles: 0, owed_base_units: '0' });
  });
});

describe('flashbots_getBundleStatsV2', () => {
  it('tells the signer received → simulated → considered → sealed → sent to each relay → landed, and nobody else anything', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const target = (await t.head()) + 1n;
    const raw = await transfer(t.client, 7, { tipGwei: '2' });
    const hash = bundleHash([txHash(raw)]);
    expect((await signedBy(searcher, sendBundleBody([raw], target))).json).toEqual({ jsonrpc: '2.0', id: 1, result: null });

    const queued = (await stats(searcher, hash, target)).json.result;
    expect(queued).toEqual({
      isHighPriority: true,
      isSimulated: false,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      consideredByBuildersAt: [],
      sealedByBuildersAt: [],
      sentToRelaysAt: [],
      landed: false,
      receivedTimestampMs: expect.any(Number),
    });
    expect(queued.receivedTimestampMs).toBe(Date.parse(queued.receivedAt));

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toEqual([hash]);
    const pubkey = blsPublicKey(TEST_BLS_SECRET_KEY);
    const done = (await stats(searcher, hash, target)).json.result;
    const iso = expect.stringMatching(/Z$/);
    expect(done).toEqual({
      isHighPriority: true,
      isSimulated: true,
      simulatedAt: iso,
      receivedAt: queued.receivedAt,
      consideredByBuildersAt: [{ pubkey, timestamp: iso }],
      sealedByBuildersAt: [{ pubkey, timestamp: iso }],
      sentToRelaysAt: ['agnostic', 'bloxroute', 'flashbots', 'ultrasound'].map((relay) => ({ relay, timestamp: iso, accepted: true })),
      landed: true,
      landedBlockHash: attempt.bid!.mined?.hash ?? attempt.bid!.blockHash,
      landedAt: iso,
      landedInSealedBlock: true,
      receivedTimestampMs: queued.receivedTimestampMs,
      inclusionLatencyMs: expect.any(Number),
    });
    expect(done.inclusionLatencyMs).toBe(Date.parse(done.sealedByBuildersAt[0].timestamp) - queued.receivedTimestampMs);
    expect(Date.parse(done.simulatedAt)).toBeGreaterThanOrEqual(Date.parse(done.receivedAt));

    // another searcher, a wrong block or an unknown hash read as Flashbots' "unknown bundle"
    const other = privateKeyToAccount(generatePrivateKey());
    expect((await stats(other, hash, target)).json.result).toEqual({ isSimulated: false });
    expect((await stats(searcher, hash, target + 1n)).json.result).toEqual({ isSimulated: false });
    expect((await stats(searcher, keccak256('0x01'), target)).json.result).toEqual({ isSimulated: false });
  });

  it('a bundle that was simulated but not chosen is simulated, not considered; a bundle for a later block is only received', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const target = (await t.head()) + 1n;
    // reverts: a call with too little gas for the transfer to a contract-less address still succeeds, so use a failing value transfer
    const broke = privateKeyToAccount(generatePrivateKey());
    const failing = await broke.signTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      to: devAccount(1).address,
      value: parseEther('1'),
      gas: 21_000n,
      maxFeePerGas: 50_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const later = await transfer(t.client, 8);
    expect((await signedBy(searcher, sendBundleBody([failing], target))).json.result).toBeNull();
    expect((await signedBy(searcher, sendBundleBody([later], target + 5n))).json.result).toBeNull();
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.skipped.map((s) => s.bundle_hash)).toContain(bundleHash([txHash(failing)]));

    const skipped = (await stats(searcher, bundleHash([txHash(failing)]), target)).json.result;
    expect(skipped).toMatchObject({ isSimulated: true, consideredByBuildersAt: [], sealedByBuildersAt: [], sentToRelaysAt: [], landed: false });
    const waiting = (await stats(searcher, bundleHash([txHash(later)]), target + 5n)).json.result;
    expect(waiting).toMatchObject({ isSimulated: false, consideredByBuildersAt: [], landed: false });
  });

  it('refuses bad params with -32602 and an unsigned request with -32600', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    for (const [params, field] of [
      [[{ bundleHash: '0x12', blockNumber: '0x1' }], 'bundleHash'],
      [[{ bundleHash: keccak256('0x01'), blockNumber: 'latest' }], 'blockNumber'],
      [[{ bundleHash: keccak256('0x01'), blockNumber: '0x1', extra: true }], 'extra'],
      [[], 'params'],
    ] as [unknown[], string][]) {
      const res = await signedBy(searcher, call('flashbots_getBundleStatsV2', params));
      expect(res.json.error, field).toMatchObject({ code: -32602, data: { field } });
    }
    const unsigned = await post(t.builder.rpcUrl, call('flashbots_getBundleStatsV2', [{ bundleHash: keccak256('0x01'), blockNumber: '0x1' }]), {}, freshIp());
    expect(unsigned.json.error).toMatchObject({ code: -32600, data: { reason: 'signature_missing' } });
  });
});

describe('bundle pricing: 0.10 USD on the signer’s metered account, owed otherwise', () => {
  it('debits the SIWE account of the signing address while it holds the price, then records the rest as owed', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const ledger = new Ledger(t.builder.redis, t.builder.keys);
    await ledger.credit(searcher.address, 150_000n, 'deposit', 'dep_test');
    const target = (await t.head()) + 4n;

    expect((await signedBy(searcher, sendBundleBody([await transfer(t.client, 9)], target))).json.result).toBeNull();
    const view = await ledger.view(searcher.address);
    expect(view.balance).toBe('50000');
    expect(view.spent).toBe('100000');
    expect(view.usage[0]).toMatchObject({
      kind: 'debit',
      amount: '100000',
      item: 'builder.send_bundle',
      ref: expect.stringMatching(/^bundle:\d+:0x[0-9a-f]{64}$/),
    });
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({
      bundles: 1,
      debited_base_units: '100000',
      owed_base_units: '0',
    });

    // 0.05 USD left: the next bundle is accepted and owed, the account untouched
    const res = await signedBy(searcher, mevBody([{ tx: await transfer(t.client, 9, { tipGwei: '4' }), canRevert: false }], target, {}));
    expect(res.json.result).toHaveProperty('bundleHash');
    expect((await ledger.view(searcher.address)).balance).toBe('50000');
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({
      bundles: 2,
      debited_base_units: '100000',
      owed_base_units: '100000',
    });
  });
});
