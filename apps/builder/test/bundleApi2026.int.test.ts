import { devAccount } from '@acg/devnet';
import { keccak256, parseEther, toHex, type Address, type Hash, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { flashbotsSignature, freshIp, post, quantity as hex, rpcBody as call, sendBundleBody, transfer, type Reply } from './harness.js';
import { useTestBuilder } from './useTestBuilder.js';

// The bundle API builders offer in 2026 (README "Bundle API of 2026"): BuilderNet's replacementNonce,
// refundIdentity, delayedRefund, receivedTimestampMs and refund lookups, and bottom-of-block bundles
// (BuilderNet's desiredState "BottomOfBlock", Titan's eth_sendEndOfBlockBundle), on a real anvil and Redis.
const t = useTestBuilder();

const txHash = (raw: Hex) => keccak256(raw);
const fresh = () => privateKeyToAccount(generatePrivateKey());
async function signedBy(account: LocalAccount, body: string): Promise<Reply> {
  return post(t.builder.rpcUrl, body, { 'X-Flashbots-Signature': await flashbotsSignature(account, body) }, freshIp());
}
const result = (r: Reply) => {
  expect(r.json.error, JSON.stringify(r.json.error)).toBeUndefined();
  return r.json.result;
};
const errorOf = (r: Reply) => r.json.error as { code: number; message: string; data: { field: string; reason: string; last_nonce?: number } };

/** What a transaction paid the coinbase in its landed block, from the chain: its tip × gas used plus `direct` wei sent to the coinbase. */
async function paidToCoinbase(hash: Hash, direct: bigint): Promise<bigint> {
  const receipt = await t.client.getTransactionReceipt({ hash });
  const block = await t.client.getBlock({ blockNumber: receipt.blockNumber });
  return receipt.gasUsed * (receipt.effectiveGasPrice - block.baseFeePerGas!) + direct;
}

describe('replacementNonce', () => {
  it('a newer nonce replaces the bundle under the uuid; an older one, or another bundle with the same nonce, or none, is refused naming the field', async () => {
    const searcher = fresh();
    const target = (await t.head()) + 5n;
    const uuid = '6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
    // unfunded senders (dev accounts 10, 11) and far nonces: these bundles only exercise the pool, never a block
    const [x, y, z, w] = await Promise.all([1, 2, 3, 4].map((i) => transfer(t.client, 10, { nonce: 100 + i })));
    const send = (tx: Hex, extra: Record<string, unknown>) => signedBy(searcher, sendBundleBody([tx], target, { replacementUuid: uuid, ...extra }));
    const pooled = async () => (await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.searcher === searcher.address).map((b) => b.txs[0].hash);

    expect(result(await send(x, { replacementNonce: 5 }))).toBeNull();
    expect(await pooled()).toEqual([txHash(x)]);

    for (const [tx, extra] of [
      [y, { replacementNonce: 4 }],
      [y, { replacementNonce: 5 }],
      [y, {}],
    ] as const) {
      const err = errorOf(await send(tx, extra));
      expect(err.code).toBe(-32602);
      expect(err.data.field).toBe('replacementNonce');
      expect(err.data.last_nonce).toBe(5);
      expect(err.message).toMatch(/replacementNonce/);
    }
    expect(await pooled()).toEqual([txHash(x)]);

    // the same bundle with the same nonce is a resend (a replayed body), answered alike
    expect(result(await send(x, { replacementNonce: 5 }))).toBeNull();
    expect(result(await send(z, { replacementNonce: 9 }))).toBeNull();
    expect(await pooled()).toEqual([txHash(z)]);

    // after a cancel the nonce still orders the uuid: an old signed body cannot come back
    expect(result(await signedBy(searcher, call('eth_cancelBundle', [{ replacementUuid: uuid }])))).toBeNull();
    expect(await pooled()).toEqual([]);
    expect(errorOf(await send(x, { replacementNonce: 5 })).data.field).toBe('replacementNonce');
    expect(result(await send(w, { replacementNonce: 10 }))).toBeNull();
    expect(await pooled()).toEqual([txHash(w)]);

    // another searcher's uuid is its own
    expect(result(await signedBy(fresh(), sendBundleBody([y], target, { replacementUuid: uuid, replacementNonce: 1 })))).toBeNull();
  });

  it("Titan's replacementSeqNumber on eth_sendEndOfBlockBundle orders the same way and is named in the error", async () => {
    const searcher = fresh();
    const target = (await t.head()) + 5n;
    const uuid = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
    const [x, y] = await Promise.all([1, 2].map((i) => transfer(t.client, 11, { nonce: 200 + i })));
    const eob = (tx: Hex, seq: number) =>
      signedBy(
        searcher,
        call('eth_sendEndOfBlockBundle', [
          { txs: [tx], blockNumber: hex(target), targetPools: [devAccount(9).address], replacementUuid: uuid, replacementSeqNumber: seq },
        ]),
      );
    expect(result(await eob(x, 3))).toMatchObject({ bundleHash: keccak256(txHash(x)) });
    const err = errorOf(await eob(y, 2));
    expect(err).toMatchObject({ code: -32602, data: { field: 'replacementSeqNumber', last_nonce: 3 } });
  });
});

describe('receivedTimestampMs and inclusion latency', () => {
  it('answers BuilderNet-format requests with {bundleHash, receivedTimestampMs}, keeps null for the others, and reports latency once landed', async () => {
    const searcher = fresh();
    const target = (await t.head()) + 1n;
    const tx = await transfer(t.client, 8, { to: t.builder.coinbase, value: parseEther('0.01') });
    const before = Date.now();
    const answer = result(await signedBy(searcher, sendBundleBody([tx], target, { version: 'v1' }))) as { bundleHash: Hash; receivedTimestampMs: number };
    const after = Date.now();
    expect(answer.bundleHash).toBe(keccak256(txHash(tx)));
    expect(answer.receivedTimestampMs).toBeGreaterThanOrEqual(before);
    expect(answer.receivedTimestampMs).toBeLessThanOrEqual(after);
    // the Flashbots form stays `null` (docs/spec-notes.md 4)
    expect(result(await signedBy(fresh(), sendBundleBody([tx], target)))).toBeNull();
    // mev_sendBundle answers it too
    const mev = result(
      await signedBy(fresh(), call('mev_sendBundle', [{ version: 'v0.1', inclusion: { block: hex(target) }, body: [{ tx, canRevert: false }] }])),
    );
    expect(mev).toEqual({ bundleHash: answer.bundleHash, receivedTimestampMs: expect.any(Number) });

    const stats = () => signedBy(searcher, call('flashbots_getBundleStatsV2', [{ bundleHash: answer.bundleHash, blockNumber: hex(target) }]));
    const pending = result(await stats());
    expect(pending.receivedTimestampMs).toBe(answer.receivedTimestampMs);
    expect(pending).not.toHaveProperty('inclusionLatencyMs');

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toEqual([answer.bundleHash]);
    const landed = result(await stats());
    expect(landed).toMatchObject({ landed: true, landedInSealedBlock: true, receivedTimestampMs: answer.receivedTimestampMs });
    expect(landed.inclusionLatencyMs).toBe(Date.parse(landed.sealedByBuildersAt[0].timestamp) - answer.receivedTimestampMs);
    expect(landed.inclusionLatencyMs).toBeGreaterThanOrEqual(0);
  });
});

describe('refundIdentity and delayedRefund', () => {
  it('records what each bundle paid the coinbase in the landed block, exactly in wei, by bundle hash and by identity; delayed refunds stay pending', async () => {
    const searcher = fresh();
    const identity = fresh();
    const delayedSearcher = fresh();
    const delayedRecipient = fresh();
    const target = (await t.head()) + 1n;
    const direct = parseEther('0.01');
    const a = await transfer(t.client, 6, { to: t.builder.coinbase, value: direct, tipGwei: '3' });
    const b = await transfer(t.client, 7, { to: t.builder.coinbase, value: direct * 2n, tipGwei: '1' });
    const hashA = keccak256(txHash(a));
    const hashB = keccak256(txHash(b));
    expect(result(await signedBy(searcher, sendBundleBody([a], target, { refundPercent: 50, refundIdentity: identity.address })))).toBeNull();
    expect(
      result(
        await signedBy(delayedSearcher, sendBundleBody([b], target, { refundPercent: 30, delayedRefund: true, refundRecipient: delayedRecipient.address })),
      ),
    ).toBeNull();

    const attempt = await t.builder.bidder.attempt();
    expect(new Set(attempt.included)).toEqual(new Set([hashA, hashB]));
    const bid = attempt.bid!;
    // one refund transaction (A's); B's refund is delayed: no transaction
    expect(bid.refunds.map((r) => r.bundle_hash)).toEqual([hashA]);
    const block = await t.client.getBlock({ blockNumber: target, includeTransactions: true });
    const refundTx = block.transactions.find((x) => x.hash === bid.refunds[0].tx_hash)!;
    expect(refundTx.to?.toLowerCase()).toBe(devAccount(6).address.toLowerCase());

    // from the chain: what A and B paid the coinbase, and A's refund less the refund transaction's own gas
    const paidA = await paidToCoinbase(txHash(a), direct);
    const paidB = await paidToCoinbase(txHash(b), direct * 2n);
    const refundGas = (await t.client.getTransactionReceipt({ hash: refundTx.hash })).gasUsed;
    const expectedA = (paidA * 50n) / 100n - refundGas * block.baseFeePerGas!;
    const expectedB = (paidB * 30n) / 100n;
    expect(refundTx.value).toBe(expectedA);

    const byIdentity = result(await signedBy(identity, call('buildernet_getFeeRefundsByRecipient', [{ recipient: identity.address }])));
    expect(byIdentity).toEqual({
      refunds: [
        {
          hash: hashA,
          amount: toHex(expectedA),
          blockNumber: hex(target),
          status: 'received',
          recipient: identity.address,
          refundRecipient: devAccount(6).address,
          delayed: false,
          txHash: refundTx.hash,
        },
      ],
    });
    // by bundle hash: the signer and the identity see it; anyone else sees nothing
    expect(result(await signedBy(searcher, call('buildernet_getFeeRefundsByBundle', [hashA])))).toEqual(byIdentity);
    expect(result(await signedBy(identity, call('buildernet_getFeeRefundsByBundle', [hashA])))).toEqual(byIdentity);
    expect(result(await signedBy(fresh(), call('buildernet_getFeeRefundsByBundle', [hashA])))).toEqual({ refunds: [] });
    // the signer is not the identity credited: its own list is empty, and it cannot read the identity's
    expect(result(await signedBy(searcher, call('buildernet_getFeeRefundsByRecipient', [{ recipient: searcher.address }])))).toEqual({ refunds: [] });
    expect(errorOf(await signedBy(searcher, call('buildernet_getFeeRefundsByRecipient', [{ recipient: identity.address }])))).toMatchObject({
      code: -32602,
      data: { field: 'recipient' },
    });
    expect(result(await signedBy(identity, call('buildernet_getFeeRefundTotalsByRecipient', [identity.address])))).toEqual({
      pending: '0x0',
      received: toHex(expectedA),
      maxBlockNumber: hex(target),
    });

    // B: no refundIdentity, so credited to its signer; delayed, so pending, the whole refundPercent share
    const delayed = {
      hash: hashB,
      amount: toHex(expectedB),
      blockNumber: hex(target),
      status: 'pending',
      refundRecipient: delayedRecipient.address,
      delayed: true,
    };
    expect(result(await signedBy(delayedSearcher, call('buildernet_getFeeRefundsByBundle', [hashB])))).toEqual({
      refunds: [{ ...delayed, recipient: delayedSearcher.address }],
    });
    expect(result(await signedBy(delayedSearcher, call('buildernet_getFeeRefundTotalsByRecipient', [delayedSearcher.address])))).toEqual({
      pending: toHex(expectedB),
      received: '0x0',
      maxBlockNumber: hex(target),
    });
    expect(result(await signedBy(delayedRecipient, call('buildernet_getDelayedRefunds', [{ recipient: delayedRecipient.address }])))).toEqual({
      refunds: [{ ...delayed, recipient: delayedRecipient.address }],
      indexedUpTo: hex(target),
    });
    expect(
      result(
        await signedBy(
          delayedRecipient,
          call('buildernet_getDelayedRefunds', [{ recipient: delayedRecipient.address, blockRangeFrom: hex(target + 1n), blockRangeTo: hex(target + 9n) }]),
        ),
      ),
    ).toEqual({ refunds: [], indexedUpTo: hex(target) });
    expect(result(await signedBy(delayedRecipient, call('buildernet_getDelayedRefundTotalsByRecipient', [{ recipient: delayedRecipient.address }])))).toEqual({
      indexedUpTo: hex(target),
      pending: toHex(expectedB),
      received: '0x0',
    });
    // the delayed refund came out of the bid like the in-block one: the proposer was paid the share of what is left
    expect(bid.refundRecords.map((r) => [r.bundle_hash, r.value, r.delayed])).toEqual([
      [hashA, expectedA, false],
      [hashB, expectedB, true],
    ]);
  });

  it('a block that was sealed but did not land leaves no refund behind', async () => {
    const searcher = fresh();
    const target = (await t.head()) + 1n;
    const tx = await transfer(t.client, 5, { to: t.builder.coinbase, value: parseEther('0.01') });
    const hash = keccak256(txHash(tx));
    await t.builder.intake.pool.refunds.addCandidates(
      target,
      [`0x${'ab'.repeat(32)}`],
      [{ bundle_hash: hash, searcher: searcher.address, identity: searcher.address, recipient: searcher.address, value: '123', delayed: true }],
    );
    expect(result(await signedBy(searcher, sendBundleBody([tx], target)))).toBeNull();
    await t.builder.bidder.attempt();
    expect(result(await signedBy(searcher, call('buildernet_getFeeRefundsByBundle', [hash])))).toEqual({ refunds: [] });
    expect(result(await signedBy(searcher, call('buildernet_getFeeRefundsByRecipient', [{ recipient: searcher.address }])))).toEqual({ refunds: [] });

    // settling is idempotent: the same landed block's refunds settled again (a retry after a crash) are counted once
    const ledger = t.builder.intake.pool.refunds;
    const landedHash = (await t.client.getBlock({ blockNumber: target })).hash!;
    const candidate = { bundle_hash: hash, searcher: searcher.address, identity: searcher.address, recipient: searcher.address, value: '123', delayed: true };
    for (let i = 0; i < 2; i++) {
      await ledger.addCandidates(target, [landedHash], [candidate]);
      await ledger.settle(await t.head(), async (b) => (await t.client.getBlock({ blockNumber: b })).hash!);
    }
    expect(result(await signedBy(searcher, call('buildernet_getFeeRefundTotalsByRecipient', [searcher.address])))).toEqual({
      pending: toHex(123n),
      received: '0x0',
      maxBlockNumber: hex(target),
    });
  });
});

describe('bottom-of-block bundles', () => {
  it('are placed after every other bundle in the sealed block, only when the block touched one of their targets', async () => {
    const pool = devAccount(9).address as Address;
    const untouched = fresh().address;
    const target = (await t.head()) + 1n;
    // sent first and paying the most: without the placement rule they would lead the block
    const titan = await transfer(t.client, 2, { to: t.builder.coinbase, value: parseEther('0.03'), tipGwei: '9' });
    const builderNet = await transfer(t.client, 3, { to: t.builder.coinbase, value: parseEther('0.02'), tipGwei: '5' });
    const unmatched = await transfer(t.client, 4, { to: t.builder.coinbase, value: parseEther('0.05'), tipGwei: '9' });
    const normal = await transfer(t.client, 5, { to: pool, value: parseEther('0.001'), tipGwei: '1' });

    const titanAnswer = result(await signedBy(fresh(), call('eth_sendEndOfBlockBundle', [{ txs: [titan], blockNumber: hex(target), targetPools: [pool] }])));
    expect(titanAnswer).toEqual({ bundleHash: keccak256(txHash(titan)), receivedTimestampMs: expect.any(Number) });
    const bn = result(
      await signedBy(
        fresh(),
        sendBundleBody([builderNet], target, { version: 'v2', desiredState: 'BottomOfBlock', targetAddresses: [pool], targetSlots: [[]] }),
      ),
    );
    expect(bn).toMatchObject({ bundleHash: keccak256(txHash(builderNet)) });
    // the block is named: without it the bundle targets the builder's next block, which under load can
    // already be the one after `target` (a fresh-clone run saw this bundle missing from the attempt)
    expect(
      result(await signedBy(fresh(), call('eth_sendEndOfBlockBundle', [{ txs: [unmatched], blockNumber: hex(target), targetPools: [untouched] }]))),
    ).toHaveProperty('bundleHash');
    expect(result(await signedBy(fresh(), sendBundleBody([normal], target)))).toBeNull();

    const attempt = await t.builder.bidder.attempt();
    const bid = attempt.bid!;
    expect(attempt.included).toEqual([keccak256(txHash(normal)), keccak256(txHash(titan)), keccak256(txHash(builderNet))]);
    expect(attempt.skipped).toContainEqual(
      expect.objectContaining({
        bundle_hash: keccak256(txHash(unmatched)),
        reason: expect.stringMatching(/bottom-of-block: no transaction before it touched/),
      }),
    );
    // the sealed block: the other bundle, the bottom-of-block ones, then the builder's payment last
    expect(bid.txHashes).toEqual([txHash(normal), txHash(titan), txHash(builderNet), bid.paymentTxHash]);
    const landed = await t.client.getBlock({ blockNumber: target });
    expect(landed.transactions).toEqual(bid.txHashes);
  });
});

describe('SDK (packages/sdk/src/builder.ts)', () => {
  it('sends the BuilderNet fields, returns receivedTimestampMs when the builder answers it, and surfaces a stale replacementNonce by field', async () => {
    const sdk = await import('../../../packages/sdk/src/builder.js');
    const account = fresh();
    const builder = sdk.createBuilderClient({ rpcUrl: t.builder.rpcUrl, account });
    const target = (await t.head()) + 7n;
    const replacementUuid = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
    const [x, y] = await Promise.all([1, 2].map((i) => transfer(t.client, 10, { nonce: 300 + i })));
    const sent = await builder.sendBundle([x], target, { replacementUuid, replacementNonce: 2, refundIdentity: account.address, version: 'v1' });
    expect(sent).toEqual({
      bundleHash: sdk.computeBundleHash([x]),
      blockNumber: hex(target),
      searcher: account.address,
      receivedTimestampMs: expect.any(Number),
    });
    const pooled = (await t.builder.intake.pool.bundlesFor(target)).find((b) => b.searcher === account.address)!;
    expect(pooled).toMatchObject({ replacement_nonce: 2, refund_identity: account.address });
    const err = await builder.sendBundle([y], target, { replacementUuid, replacementNonce: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(sdk.BundleRpcError);
    expect(err).toMatchObject({ code: -32602, data: { field: 'replacementNonce' } });
  });
});
