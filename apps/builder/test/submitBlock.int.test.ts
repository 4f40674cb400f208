import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ByteVectorType, ContainerType, UintBigintType, type ValueOf } from '@chainsafe/ssz';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { devAccount } from '@acg/devnet';
import { readBuilderHealth } from '@acg/bundles';
import { ssz } from '@lodestar/types';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import {
  bytesToHex,
  concat,
  getAddress,
  getContractAddress,
  hexToBytes,
  keccak256,
  parseEther,
  parseTransaction,
  recoverTransactionAddress,
  sha256,
  toHex,
  toRlp,
  type Hex,
  type TransactionSerialized,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devParentBeaconBlockRoot } from '../src/block/payloadAttributes.js';
import { DEV_PROPOSER_FEE_RECIPIENT, DEV_PROPOSER_PUBKEY, type DevRelay } from '../src/relay/devRelay.js';
import { computeBuilderDomain, ETH_BLS_DST } from '../src/relay/signing.js';
import {
  flashbotsSignature,
  freshIp,
  post,
  sendBundleBody,
  startRpcProxy,
  startTestBuilder,
  TEST_BLS_SECRET_KEY,
  transfer,
  waitFor,
  type RpcProxy,
  type TestBuilder,
} from './harness.js';

/**
 * The builder's production path (docs/decisions.md "Bundle submission") on the dev chain: registrations from
 * the relays, the proposer payment and refunds, sealing with eth_simulateV1, and the Electra
 * SubmitBlockRequest on the wire. The containers below are this test's own reading of the relay
 * builder API (flashbots builder-api-types `electra.SubmitBlockRequest`), built from
 * `@lodestar/types`, so that the builder's encoding is checked against them and not against itself.
 */
const BidTrace = new ContainerType(
  {
    slot: new UintBigintType(8),
    parentHash: new ByteVectorType(32),
    blockHash: new ByteVectorType(32),
    builderPubkey: new ByteVectorType(48),
    proposerPubkey: new ByteVectorType(48),
    proposerFeeRecipient: new ByteVectorType(20),
    gasLimit: new UintBigintType(8),
    gasUsed: new UintBigintType(8),
    value: new UintBigintType(32),
  },
  { jsonCase: 'eth2' },
);
const SigningData = new ContainerType({ objectRoot: new ByteVectorType(32), domain: new ByteVectorType(32) });
const SubmitBlockRequest = new ContainerType(
  {
    message: BidTrace,
    executionPayload: ssz.electra.ExecutionPayload,
    blobsBundle: ssz.deneb.BlobsBundle,
    executionRequests: ssz.electra.ExecutionRequests,
    signature: ssz.BLSSignature,
  },
  { jsonCase: 'eth2' },
);
type Decoded = ValueOf<typeof SubmitBlockRequest>;

const EMPTY_OMMERS = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const q = (n: bigint | number) => (BigInt(n) === 0n ? '0x' : toHex(BigInt(n)));

async function orderedRoot(items: Uint8Array[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie();
  for (const [i, v] of items.entries()) await trie.put(hexToBytes(toRlp(q(i))), v);
  return bytesToHex(trie.root());
}

/** keccak256(RLP(Prague header)) recomputed from a decoded payload, as a relay does, with the dev chain's parent beacon block root. */
async function recomputeBlockHash(d: Decoded, parentBeaconBlockRoot?: Hex): Promise<Hex> {
  const p = d.executionPayload;
  const r = d.executionRequests;
  const requests = [
    ssz.electra.DepositRequests.serialize(r.deposits),
    ssz.electra.WithdrawalRequests.serialize(r.withdrawals),
    ssz.electra.ConsolidationRequests.serialize(r.consolidations),
  ].flatMap((data, type) => (data.length ? [sha256(concat([toHex(type, { size: 1 }), bytesToHex(data)]))] : []));
  const parentHash = bytesToHex(p.parentHash);
  const header = [
    parentHash,
    EMPTY_OMMERS,
    bytesToHex(p.feeRecipient),
    bytesToHex(p.stateRoot),
    await orderedRoot(p.transactions),
    bytesToHex(p.receiptsRoot),
    bytesToHex(p.logsBloom),
    '0x',
    q(p.blockNumber),
    q(p.gasLimit),
    q(p.gasUsed),
    q(p.timestamp),
    bytesToHex(p.extraData),
    bytesToHex(p.prevRandao),
    '0x0000000000000000',
    q(p.baseFeePerGas),
    await orderedRoot(p.withdrawals.map((w) => hexToBytes(toRlp([q(w.index), q(w.validatorIndex), bytesToHex(w.address), q(w.amount)])))),
    q(p.blobGasUsed),
    q(p.excessBlobGas),
    parentBeaconBlockRoot ?? devParentBeaconBlockRoot(parentHash),
    sha256(requests.length ? concat(requests) : '0x'),
  ] as Hex[];
  return keccak256(toRlp(header));
}

/** Decodes what a dev relay received, by this test's containers: SSZ bytes, or JSON. */
function decode(received: DevRelay['submissions'][number]): Decoded {
  return received.encoding === 'ssz'
    ? SubmitBlockRequest.deserialize(received.body)
    : SubmitBlockRequest.fromJson(JSON.parse(Buffer.from(received.body).toString('utf8')));
}

const searcher = devAccount(5);
const REFUND_RECIPIENT = getAddress('0x000000000000000000000000000000000000be0f');

describe('a bundle sent the Flashbots way reaches each relay that lists the proposer as an Electra SubmitBlockRequest', () => {
  let t: TestBuilder;
  beforeAll(async () => {
    t = await startTestBuilder(
      {},
      {
        relay: {
          // flashbots takes everything (SSZ, gzipped); ultrasound no gzip; agnostic JSON only; bloxroute does not list the proposer
          ultrasound: { accepts: { gzip: false } },
          agnostic: { accepts: { ssz: false } },
          bloxroute: { listsSlot: () => false },
        },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('pays the proposer in the last transaction, refunds refundPercent, and every relay-side check recomputes from the decoded bytes', async () => {
    // a searcher pays the coinbase 0.05 ETH with a 1 gwei tip, and asks for half of it back
    const pay = await transfer(t.client, 6, { to: t.builder.coinbase, value: parseEther('0.05'), tipGwei: '1' });
    // another bundle, paying nothing to the coinbase, calling a contract that emits a log (runtime: LOG1 with
    // topic 0x…ac9 and no data), so that the receipts and the bloom have something in them
    const logger = devAccount(4);
    const runtime = `7f${'00'.repeat(30)}0ac960006000a100`;
    const deployNonce = await t.client.getTransactionCount({ address: logger.address });
    const deploy = await logger.signTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: deployNonce,
      data: `0x6027600c60003960276000f3${runtime}`,
      gas: 200_000n,
      maxFeePerGas: parseEther('0.00000005'),
      maxPriorityFeePerGas: 0n,
    });
    await t.client.waitForTransactionReceipt({ hash: await t.client.sendRawTransaction({ serializedTransaction: deploy }) });
    const emitsLog = await logger.signTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: deployNonce + 1,
      to: getContractAddress({ from: logger.address, nonce: BigInt(deployNonce) }),
      gas: 100_000n,
      maxFeePerGas: parseEther('0.00000005'),
      maxPriorityFeePerGas: 0n,
    });
    const target = (await t.client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const body = sendBundleBody([pay], target, { refundPercent: 50, refundRecipient: REFUND_RECIPIENT });
    const sent = await post(t.builder.rpcUrl, body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, freshIp());
    expect(sent.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });
    const body2 = sendBundleBody([emitsLog], target);
    const sent2 = await post(t.builder.rpcUrl, body2, { 'X-Bundle-Signature': await flashbotsSignature(devAccount(3), body2) }, freshIp());
    expect(sent2.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });

    // what the relays list for the target slot (dev slots are block numbers), before it is built
    const listed = (await (await fetch(`${t.relays.relays[0].url}/relay/v1/builder/validators`)).json()) as {
      slot: string;
      entry: { message: { fee_recipient: string; pubkey: string } };
    }[];
    const registration = listed.find((e) => e.slot === String(target))!.entry.message;

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.reason).toBeUndefined();
    expect(attempt.skipped).toEqual([]);
    const bid = attempt.bid!;
    expect(bid.slot).toBe(target);
    expect(bid.proposer).toEqual({ pubkey: DEV_PROPOSER_PUBKEY, feeRecipient: DEV_PROPOSER_FEE_RECIPIENT });
    expect(bid.submissions.map((s) => [s.relay, s.accepted, s.encoding])).toEqual([
      ['flashbots', true, 'ssz+gzip'],
      ['ultrasound', true, 'ssz'],
      ['agnostic', true, 'json'],
    ]);

    const [flashbots, ultrasound, agnostic, bloxroute] = t.relays.relays;
    // the relay that does not list the slot's proposer gets nothing
    expect(bloxroute.submissions).toEqual([]);
    expect(flashbots.submissions.map((s) => [s.encoding, s.gzip])).toEqual([['ssz', true]]);
    expect(ultrasound.submissions.map((s) => [s.encoding, s.gzip])).toEqual([['ssz', false]]);
    expect(agnostic.submissions.map((s) => [s.encoding, s.gzip])).toEqual([['json', false]]);

    const domain = computeBuilderDomain('0x00000000');
    const decoded = [flashbots, ultrasound, agnostic].map((r) => {
      expect(r.submissions[0].accepted, `${r.name}: ${r.submissions[0].reason}`).toBe(true);
      return decode(r.submissions[0]);
    });
    // the same submission whatever the encoding
    expect(SubmitBlockRequest.toJson(decoded[1])).toEqual(SubmitBlockRequest.toJson(decoded[0]));
    expect(SubmitBlockRequest.toJson(decoded[2])).toEqual(SubmitBlockRequest.toJson(decoded[0]));
    const d = decoded[0];
    const m = d.message;
    const p = d.executionPayload;

    // the block hash recomputes from the header
    const recomputed = await recomputeBlockHash(d);
    expect(bytesToHex(p.blockHash)).toBe(recomputed);
    expect(bytesToHex(m.blockHash)).toBe(recomputed);
    expect(recomputed).toBe(bid.blockHash);
    expect(p.blockNumber).toBe(Number(target));
    expect(bytesToHex(p.feeRecipient)).toBe(t.builder.coinbase.toLowerCase());

    // the BLS signature verifies under the builder domain
    const root = SigningData.hashTreeRoot({ objectRoot: BidTrace.hashTreeRoot(m), domain });
    const bls = bls12_381.longSignatures;
    expect(bls.verify(d.signature, bls.hash(root, ETH_BLS_DST), m.builderPubkey)).toBe(true);
    expect(bytesToHex(m.builderPubkey)).toBe(bytesToHex(bls.getPublicKey(hexToBytes(TEST_BLS_SECRET_KEY)).toBytes(true)));

    // the registration the relays listed: the BidTrace names its proposer and fee recipient
    expect(bytesToHex(m.proposerPubkey)).toBe(registration.pubkey);
    expect(bytesToHex(m.proposerFeeRecipient)).toBe(registration.fee_recipient);

    // the transactions: the bundle's, its refund, then the payment of `value` to the registered fee recipient
    const txs = p.transactions.map((x) => bytesToHex(x));
    expect(txs).toHaveLength(4);
    expect(txs.slice(0, 2)).toEqual([pay, emitsLog]);
    const baseFee = p.baseFeePerGas;
    const paid = parseEther('0.05') + 1_000_000_000n * 21_000n;
    const refundValue = (paid * 50n) / 100n - 21_000n * baseFee;
    const refund = parseTransaction(txs[2] as TransactionSerialized);
    expect(await recoverTransactionAddress({ serializedTransaction: txs[2] as TransactionSerialized })).toBe(t.builder.coinbase);
    expect(refund.to?.toLowerCase()).toBe(REFUND_RECIPIENT.toLowerCase());
    expect(refund.value).toBe(refundValue);
    const payment = parseTransaction(txs[3] as TransactionSerialized);
    expect(await recoverTransactionAddress({ serializedTransaction: txs[3] as TransactionSerialized })).toBe(t.builder.coinbase);
    expect(payment.to?.toLowerCase()).toBe(registration.fee_recipient);
    expect(payment.value).toBe(m.value);
    // bid policy: 90 % (BUILDER_PROPOSER_SHARE_BPS default) of the profit after the refund and the builder's two transfers' gas
    expect(m.value).toBe(((paid - refundValue - 2n * 21_000n * baseFee) * 9_000n) / 10_000n);
    expect(bid.value).toBe(m.value);
    expect(bid.refunds).toEqual([expect.objectContaining({ recipient: REFUND_RECIPIENT, value: refundValue, tx_hash: keccak256(txs[2]) })]);

    // dev mining: anvil executed the same transactions to the same receipts, and paid the refund and the proposer
    const mined = await t.client.getBlock({ blockNumber: target });
    expect(mined.transactions).toEqual(txs.map((x) => keccak256(x)));
    const receipts = await Promise.all(mined.transactions.map((hash) => t.client.getTransactionReceipt({ hash })));
    expect(receipts.map((r) => r.status)).toEqual(['success', 'success', 'success', 'success']);
    expect(receipts[1].logs).toHaveLength(1);
    expect(bytesToHex(p.receiptsRoot)).toBe(mined.receiptsRoot);
    expect(bytesToHex(p.logsBloom)).toBe(mined.logsBloom);
    expect(await orderedRoot(p.transactions)).toBe(mined.transactionsRoot);
    expect(p.gasUsed).toBe(Number(mined.gasUsed));
    expect(p.baseFeePerGas).toBe(mined.baseFeePerGas);
    expect(await t.client.getBalance({ address: REFUND_RECIPIENT })).toBe(refundValue);
    expect(await t.client.getBalance({ address: DEV_PROPOSER_FEE_RECIPIENT })).toBe(m.value);

    // health: per-relay accepted, rejected and latency; the relay that lists nobody was not submitted to
    const health = (await readBuilderHealth(t.builder.redis, t.builder.keys))!;
    expect(health.sealer).toMatchObject({ ok: true, zero_state_root: true, client: expect.stringMatching(/^anvil\//) });
    const byName = Object.fromEntries(health.relays.map((r) => [r.name, r]));
    for (const name of ['flashbots', 'ultrasound', 'agnostic']) {
      expect(byName[name]).toMatchObject({ submits: 1, accepted: 1, rejected: 0, rejections: [], status: 'up' });
      expect(byName[name].latency_ms).toMatchObject({ samples: 1, p50: expect.any(Number), p99: expect.any(Number) });
    }
    expect(byName.bloxroute).toMatchObject({ submits: 0, accepted: 0, status: 'unknown', latency_ms: { samples: 0, p50: null } });
  });
});

describe('production configuration: a node without evm_* and anvil_* methods', () => {
  let t: TestBuilder;
  let proxy: RpcProxy;
  beforeAll(async () => {
    t = await startTestBuilder(
      // the production configuration: no dev mining, the bidder's own loop, registrations polled
      { devMining: false, slotMs: 300, headPollMs: 100, registrationsPollMs: 200 },
      {
        bidder: true,
        ethereumRpcUrl: async (chain) => {
          proxy = await startRpcProxy(chain, /^(evm|anvil)_/);
          return proxy.url;
        },
        // one relay on another network (another genesis fork version): it refuses the builder's signature
        relay: { ultrasound: { genesisForkVersion: '0x10000000' } },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('seals and submits through a proxy that refuses those methods: the bid reaches the relays, and a refusal is counted with its reason', async () => {
    expect(t.builder.sealer).toMatchObject({ ok: true, zeroStateRoot: true });
    const target = (await t.client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const tip = await transfer(t.client, 7, { to: t.builder.coinbase, value: parseEther('0.01'), tipGwei: '1' });
    const body = sendBundleBody([tip], target);
    const sent = await post(t.builder.rpcUrl, body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, freshIp());
    expect(sent.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });

    const [flashbots, ultrasound, agnostic, bloxroute] = t.relays.relays;
    const accepted = (r: DevRelay) => r.submissions.find((s) => s.accepted && s.request.execution_payload.block_number === String(target));
    await waitFor(
      () => (accepted(flashbots) && accepted(agnostic) && accepted(bloxroute) && ultrasound.submissions.length > 0 ? true : undefined),
      60_000,
      'submissions',
    );
    for (const r of [flashbots, agnostic, bloxroute]) {
      const s = accepted(r)!;
      expect(s.request.execution_payload.transactions[0]).toBe(tip);
      expect(s.request.message.proposer_fee_recipient).toBe(DEV_PROPOSER_FEE_RECIPIENT.toLowerCase());
    }
    expect(ultrasound.submissions[0]).toMatchObject({ accepted: false, signature_valid: false, reason: 'invalid signature' });

    // nothing the production configuration reached called an anvil-only method
    expect(proxy.refused).toEqual([]);
    expect(proxy.calls).toContain('eth_simulateV1');
    expect(proxy.calls.filter((m) => /^(evm|anvil)_/.test(m))).toEqual([]);
    // and nothing was mined: the block stays a bid
    expect(await t.client.getBlockNumber({ cacheTime: 0 })).toBe(target - 1n);

    const health = (await readBuilderHealth(t.builder.redis, t.builder.keys))!;
    const us = health.relays.find((r) => r.name === 'ultrasound')!;
    expect(us.rejected).toBeGreaterThanOrEqual(1);
    expect(us.rejections?.[0]).toMatchObject({ reason: 'invalid signature', count: us.rejected });
    expect(us.status).toBe('down');
  });
});

describe('a node that cannot seal', () => {
  let t: TestBuilder;
  let proxy: RpcProxy;
  beforeAll(async () => {
    t = await startTestBuilder(
      { devMining: false },
      {
        ethereumRpcUrl: async (chain) => {
          proxy = await startRpcProxy(chain, /^(evm_|anvil_|eth_simulateV1$)/);
          return proxy.url;
        },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('is reported at startup and in health (so builder.send_bundle is not LIVE), still takes bundles, and submits nothing', async () => {
    expect(t.builder.sealer).toMatchObject({ ok: false, reason: expect.stringMatching(/eth_simulateV1/) });
    const health = (await readBuilderHealth(t.builder.redis, t.builder.keys))!;
    expect(health.sealer).toMatchObject({ ok: false, zero_state_root: false, reason: expect.stringMatching(/eth_simulateV1/) });
    const target = (await t.client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const body = sendBundleBody([await transfer(t.client, 8)], target);
    const sent = await post(t.builder.rpcUrl, body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, freshIp());
    expect(sent.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.bid).toBeNull();
    expect(attempt.reason).toMatch(/cannot seal/);
    for (const r of t.relays.relays) expect(r.submissions).toEqual([]);
  });
});

describe('with a beacon node (BEACON_API_URL): the block commits to its payload attributes', () => {
  // a local stand-in of the beacon node API's event stream, speaking its wire format (Server-Sent Events)
  const streams = new Set<ServerResponse>();
  const beacon = createServer((req, res) => {
    if (req.url !== '/eth/v1/events?topics=payload_attributes') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': stream open\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  const roots = new Map<string, Hex>();
  let t: TestBuilder;
  beforeAll(async () => {
    await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.1', () => resolve()));
    const beaconApiUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
    // the relays know the slot's parent beacon block root from "their" beacon node: the same announcements
    const root = (parentHash: Hex) => roots.get(parentHash) ?? '0x';
    t = await startTestBuilder(
      { beaconApiUrl, devMining: false },
      { relay: Object.fromEntries(['flashbots', 'ultrasound', 'agnostic', 'bloxroute'].map((n) => [n, { parentBeaconBlockRoot: root as never }])) },
    );
  });
  afterAll(async () => {
    for (const s of streams) s.destroy();
    await t?.close();
    await new Promise<void>((resolve) => beacon.close(() => resolve()));
  });

  it('uses the announced slot, timestamp, prevRandao, withdrawals and parent beacon block root; without an announcement, no bid', async () => {
    const parent = await t.client.getBlock({ blockTag: 'latest' });
    const target = parent.number + 1n;
    const body = sendBundleBody([await transfer(t.client, 9, { to: t.builder.coinbase, value: parseEther('0.01'), tipGwei: '1' })], target);
    const sent = await post(t.builder.rpcUrl, body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, freshIp());
    expect(sent.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });
    const none = await t.builder.bidder.attempt();
    expect(none.bid).toBeNull();
    expect(none.reason).toMatch(/announced no proposal/);

    const announced = {
      proposal_slot: String(target),
      parent_block_number: String(parent.number),
      parent_block_root: `0x${'0b'.repeat(32)}`,
      parent_block_hash: parent.hash,
      payload_attributes: {
        timestamp: String(parent.timestamp + 12n),
        prev_randao: `0x${'ab'.repeat(32)}`,
        suggested_fee_recipient: DEV_PROPOSER_FEE_RECIPIENT,
        withdrawals: [{ index: '5', validator_index: '10', address: '0x000000000000000000000000000000000000dead', amount: '15640' }],
        parent_beacon_block_root: `0x${'cd'.repeat(32)}`,
      },
    };
    roots.set(parent.hash, announced.payload_attributes.parent_beacon_block_root as Hex);
    await waitFor(() => (streams.size > 0 ? true : undefined), 30_000, 'the builder subscribes to the beacon node');
    for (const s of streams) s.write(`event: payload_attributes\ndata: ${JSON.stringify({ version: 'electra', data: announced })}\n\n`);
    await waitFor(() => t.builder.beacon?.forParent(parent.hash), 30_000, 'the announcement arrives');

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.reason).toBeUndefined();
    const accepted = attempt.bid!.submissions.filter((s) => s.accepted).map((s) => s.relay);
    expect(accepted).toEqual(['flashbots', 'ultrasound', 'agnostic', 'bloxroute']);
    const d = decode(t.relays.relays[0].submissions[0]);
    const p = d.executionPayload;
    expect(p.timestamp).toBe(Number(parent.timestamp + 12n));
    expect(bytesToHex(p.prevRandao)).toBe(announced.payload_attributes.prev_randao);
    expect(SubmitBlockRequest.toJson(d).execution_payload).toMatchObject({
      withdrawals: [{ index: '5', validator_index: '10', address: getAddress('0x000000000000000000000000000000000000dead'), amount: '15640' }],
    });
    expect(d.message.slot).toBe(target);
    // the hash commits to the announced parent beacon block root (and not to the dev stand-in)
    expect(await recomputeBlockHash(d, announced.payload_attributes.parent_beacon_block_root as Hex)).toBe(bytesToHex(p.blockHash));
    expect(await recomputeBlockHash(d)).not.toBe(bytesToHex(p.blockHash));
  });
});
