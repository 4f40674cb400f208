import { devAccount } from '@acg/devnet';
import { Wallet, id as ethersId } from 'ethers';
import { parseEther, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { readBuilderHealth, readSearcherCharges } from '@acg/bundles';
import { DEV_PROPOSER_FEE_RECIPIENT } from '../src/relay/devRelay.js';
import { blsPublicKey, computeBuilderDomain, verifyBidTrace } from '../src/relay/signing.js';
import { flashbotsSignature, freshIp, post, sendBundleBody, TEST_BLS_SECRET_KEY, transfer } from './harness.js';

const t = useTestBuilder();

const searcher = devAccount(5);
const rpc = (body: string, headers: Record<string, string> = {}, ip = freshIp()) => post(t.builder.rpcUrl, body, headers, ip);
const signed = async (body: string, ip = freshIp()) => rpc(body, { 'X-Bundle-Signature': await flashbotsSignature(searcher, body) }, ip);

describe('eth_sendBundle: accepted bundles land on the dev chain and go to all four relays', () => {
  it('accepts a bundle signed the Flashbots way (viem), builds it into the next block in order, and submits a BLS-valid BidTrace to each relay', async () => {
    const target = (await t.head()) + 1n;
    const coinbaseTip = await transfer(t.client, 6, { to: t.builder.coinbase, value: parseEther('0.05'), tipGwei: '1' });
    const first = await transfer(t.client, 7, { tipGwei: '0' });
    const body = sendBundleBody([first, coinbaseTip], target);
    const before = await readBuilderHealth(t.builder.redis, t.builder.keys);
    const res = await signed(body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });

    const attempt = await t.builder.bidder.attempt();
    expect(attempt.target).toBe(target);
    expect(attempt.included).toHaveLength(1);
    expect(attempt.bid).not.toBeNull();
    const bid = attempt.bid!;
    // dev mining: the same transactions land on the dev chain, in order (anvil's block has its own state root and hash)
    const block = await t.client.getBlock({ blockNumber: target });
    expect(block.hash).toBe(bid.mined?.hash);
    expect(block.transactions).toEqual(bid.txHashes);
    expect(block.miner.toLowerCase()).toBe(t.builder.coinbase.toLowerCase());
    const receipts = await Promise.all(block.transactions.map((h) => t.client.getTransactionReceipt({ hash: h as Hex })));
    expect(receipts.map((r) => r.status)).toEqual(['success', 'success', 'success']);
    expect(receipts.map((r) => r.from.toLowerCase())).toEqual([devAccount(7).address, devAccount(6).address, t.builder.coinbase].map((a) => a.toLowerCase()));
    // the last transaction pays the bid to the registered proposer: 90 % (default share) of the 0.05 ETH transfer plus priority fees, less its gas
    expect(receipts[2].to?.toLowerCase()).toBe(DEV_PROPOSER_FEE_RECIPIENT.toLowerCase());
    expect(bid.value).toBeGreaterThanOrEqual((parseEther('0.05') * 9n) / 10n - parseEther('0.0001'));
    expect(bid.value).toBeLessThan(parseEther('0.05'));

    expect(bid.submissions.map((s) => s.accepted)).toEqual([true, true, true, true]);
    const domain = computeBuilderDomain('0x00000000');
    for (const relay of t.relays.relays) {
      const mine = relay.submissions.filter((s) => s.request.execution_payload.block_number === String(target));
      expect(mine, relay.name).toHaveLength(1);
      const s = mine[0];
      expect(s.signature_valid).toBe(true);
      expect(verifyBidTrace(s.request.message, s.request.signature, domain)).toBe(true);
      expect(s.request.message.builder_pubkey).toBe(blsPublicKey(TEST_BLS_SECRET_KEY));
      expect(s.request.message.value).toBe(bid.value.toString());
      expect(s.request.message.block_hash).toBe(bid.blockHash);
      expect(s.request.execution_payload.transactions.slice(0, 2)).toEqual([first, coinbaseTip]);
      expect(s.request.execution_payload.transactions).toHaveLength(3);
      // the relay's data API lists the accepted BidTrace
      const listed = (await (await fetch(`${relay.url}/relay/v1/data/bidtraces/builder_blocks_received?block_number=${target}`)).json()) as {
        block_hash: string;
      }[];
      expect(listed.map((l) => l.block_hash)).toEqual([bid.blockHash]);
    }

    const after = (await readBuilderHealth(t.builder.redis, t.builder.keys))!;
    expect(after.bids_received - before!.bids_received).toBe(1);
    expect(after.submits - before!.submits).toBe(4);
    expect(after.accepted - before!.accepted).toBe(4);
    expect(after.bls_public_key).toBe(blsPublicKey(TEST_BLS_SECRET_KEY));
    expect(after.relays.map((r) => r.name).sort()).toEqual(['agnostic', 'bloxroute', 'flashbots', 'ultrasound']);
    for (const r of after.relays) expect(r).toMatchObject({ status: 'up', last_submit_at: expect.any(String) });
  });

  it('accepts a bundle signed with ethers v6 wallet.signMessage(id(body)) and records 0.10 USD per bundle for that searcher', async () => {
    const wallet = new Wallet('0x' + '5a'.repeat(32));
    const target = (await t.head()) + 1n;
    const body = sendBundleBody([await transfer(t.client, 8)], target);
    const sig = await wallet.signMessage(ethersId(body));
    const res = await rpc(body, { 'X-Flashbots-Signature': `${wallet.address}:${sig}` });
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });
    const pooled = await t.builder.intake.pool.bundlesFor(target);
    expect(pooled.map((b) => b.searcher)).toContain(wallet.address);
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, wallet.address)).toMatchObject({
      bundles: 1,
      owed_base_units: '100000',
      paid_base_units: '0',
    });
    const attempt = await t.builder.bidder.attempt();
    // the bundle's transaction, then the payment to the proposer
    expect(attempt.bid?.txCount).toBe(2);
  });

  it('picks the best non-conflicting set: of two bundles spending the same nonce, the one paying more lands', async () => {
    const target = (await t.head()) + 1n;
    const nonce = await t.client.getTransactionCount({ address: devAccount(3).address, blockTag: 'latest' });
    const low = await transfer(t.client, 3, { nonce, tipGwei: '1' });
    const high = await transfer(t.client, 3, { nonce, tipGwei: '9', value: parseEther('0.002') });
    await signed(sendBundleBody([low], target));
    await signed(sendBundleBody([high], target));
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toHaveLength(1);
    expect(attempt.skipped).toHaveLength(1);
    expect(attempt.skipped[0].reason).toMatch(/nonce|conflicts/);
    const block = await t.client.getBlock({ blockNumber: target });
    expect(block.transactions).toHaveLength(2);
    const tx = await t.client.getTransaction({ hash: block.transactions[0] as Hex });
    expect(tx.maxPriorityFeePerGas).toBe(9_000_000_000n);
  });

  it('leaves out a bundle whose transaction reverts unless its hash is in revertingTxHashes', async () => {
    // a call to Multicall3 with unknown calldata reverts
    const target = (await t.head()) + 1n;
    const reverting = await transfer(t.client, 4, { to: '0xcA11bde05977b3631167028862bE2a173976CA11', value: 0n, data: '0xdeadbeef', gas: 100_000n });
    await signed(sendBundleBody([reverting], target));
    const a1 = await t.builder.bidder.attempt();
    expect(a1.bid).toBeNull();
    expect(a1.skipped[0].reason).toMatch(/reverted/);
    const body = sendBundleBody([reverting], target + 1n, { revertingTxHashes: [(await import('viem')).keccak256(reverting)] });
    await signed(body);
    await t.client.request({ method: 'evm_mine' as never });
    const a2 = await t.builder.bidder.attempt();
    expect(a2.included).toHaveLength(1);
    const receipt = await t.client.getTransactionReceipt({ hash: (await import('viem')).keccak256(reverting) });
    expect(receipt.status).toBe('reverted');
    expect(receipt.blockNumber).toBe(target + 1n);
  });
});

describe('replacement and cancellation by replacementUuid (scoped to the searcher)', () => {
  it('replaces a bundle sent with the same uuid, ignores another searcher cancelling it, and cancels it for its owner', async () => {
    const uuid = '8c5b1f7e-2f0a-4e7b-9b8e-3c2d1a0f9e11';
    const target = (await t.head()) + 1n;
    const one = sendBundleBody([await transfer(t.client, 2)], target, { replacementUuid: uuid });
    const two = sendBundleBody([await transfer(t.client, 2, { tipGwei: '3' })], target, { replacementUuid: uuid });
    await signed(one);
    await signed(two);
    let pooled = (await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.replacement_uuid === uuid);
    expect(pooled).toHaveLength(1);
    expect(pooled[0].txs[0].raw).toBe(JSON.parse(two).params[0].txs[0]);

    const cancel = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_cancelBundle', params: [{ replacementUuid: uuid }] });
    const other = devAccount(6);
    const byOther = await rpc(cancel, { 'X-Bundle-Signature': await flashbotsSignature(other, cancel) });
    expect(byOther.json).toEqual({ jsonrpc: '2.0', id: 7, result: null });
    expect((await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.replacement_uuid === uuid)).toHaveLength(1);

    const res = await signed(cancel);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 7, result: null });
    pooled = (await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.replacement_uuid === uuid);
    expect(pooled).toHaveLength(0);
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.bid).toBeNull();
  });
});

describe('errors: each bad request gets its specific JSON-RPC error', () => {
  const bodyFor = async (target?: bigint) => sendBundleBody([await transfer(t.client, 2)], target ?? (await t.head()) + 1n);

  it('unsigned → -32600 naming the missing header', async () => {
    const res = await rpc(await bodyFor());
    expect(res.json.error).toMatchObject({ code: -32600, message: expect.stringMatching(/Missing X-Bundle-Signature/) });
    expect(res.json.id).toBe(1);
  });

  it('wrongly signed (another key than the address claims) → -32600 mismatch', async () => {
    const body = await bodyFor();
    const sig = (await flashbotsSignature(devAccount(6), body)).split(':')[1];
    const res = await rpc(body, { 'X-Bundle-Signature': `${searcher.address}:${sig}` });
    expect(res.json.error).toMatchObject({ code: -32600, data: { reason: 'signature_mismatch' } });
  });

  it('signing the raw 32 bytes instead of the 0x-hex text, or a signature without 0x → -32600', async () => {
    const body = await bodyFor();
    const { keccak256, stringToHex } = await import('viem');
    const rawSig = await searcher.signMessage({ message: { raw: keccak256(stringToHex(body)) } });
    expect((await rpc(body, { 'X-Bundle-Signature': `${searcher.address}:${rawSig}` })).json.error.data.reason).toBe('signature_mismatch');
    const good = (await flashbotsSignature(searcher, body)).split(':')[1];
    expect((await rpc(body, { 'X-Bundle-Signature': `${searcher.address}:${good.slice(2)}` })).json.error).toMatchObject({
      code: -32600,
      data: { reason: 'signature_malformed' },
    });
  });

  it('body tampered after signing (even one space) → -32600 mismatch', async () => {
    const body = await bodyFor();
    const header = await flashbotsSignature(searcher, body);
    const res = await rpc(body.replace('"params":', '"params": '), { 'X-Bundle-Signature': header });
    expect(res.json.error).toMatchObject({ code: -32600, data: { reason: 'signature_mismatch' } });
  });

  it('malformed transaction → -32602 naming txs[i]', async () => {
    const good = await transfer(t.client, 2);
    const res = await signed(sendBundleBody([good, '0x02f8deadbeef'], (await t.head()) + 1n));
    expect(res.json.error).toMatchObject({ code: -32602, data: { field: 'txs[1]' } });
    const notHex = await signed(sendBundleBody(['0xzz' as Hex], (await t.head()) + 1n));
    expect(notHex.json.error).toMatchObject({ code: -32602, data: { field: 'txs[0]' } });
  });

  it('transaction for another chain id → -32602', async () => {
    const res = await signed(sendBundleBody([await transfer(t.client, 2, { chainId: 8453 })], (await t.head()) + 1n));
    expect(res.json.error).toMatchObject({ code: -32602, data: { field: 'txs[0]', chain_id: 8453, expected: 1 } });
  });

  it('past blockNumber → -32602 naming blockNumber', async () => {
    // block 1, long mined: the intake may validate against a head read up to 250 ms ago, and
    // on a busy machine the dev chain can move several blocks in that time
    expect(await t.head()).toBeGreaterThan(1n);
    const res = await signed(await bodyFor(1n));
    expect(res.json.error).toMatchObject({ code: -32602, data: { field: 'blockNumber' } });
    expect(res.json.error.message).toMatch(/in the past/);
  });

  it('oversize: 101 transactions, or more than 300,000 bytes → -32602 naming txs; a body over the HTTP limit → 413', async () => {
    const tx = await transfer(t.client, 2);
    const many = await signed(
      sendBundleBody(
        Array.from({ length: 101 }, () => tx),
        (await t.head()) + 1n,
      ),
    );
    expect(many.json.error).toMatchObject({ code: -32602, data: { field: 'txs', limit: 100 } });
    const big = `0x${'ab'.repeat(150_001)}` as Hex;
    const bytes = await signed(sendBundleBody([big, big], (await t.head()) + 1n));
    expect(bytes.json.error).toMatchObject({ code: -32602, data: { field: 'txs', limit: 300_000 } });
    const huge = sendBundleBody([`0x${'ab'.repeat(600_000)}` as Hex], (await t.head()) + 1n);
    const tooLarge = await signed(huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json.error.code).toBe(-32600);
  });

  it('unknown field → -32602; bad JSON → -32700; unknown method → -32601; not JSON-RPC 2.0 → -32600', async () => {
    const unknown = await signed(sendBundleBody([await transfer(t.client, 2)], (await t.head()) + 1n, { bogus: 1 }));
    expect(unknown.json.error).toMatchObject({ code: -32602, data: { field: 'bogus' } });
    expect((await signed('{"jsonrpc":"2.0",')).json.error.code).toBe(-32700);
    expect((await signed(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_nope', params: [] }))).json).toMatchObject({ id: 3, error: { code: -32601 } });
    expect((await signed(JSON.stringify({ id: 4, method: 'eth_sendBundle', params: [] }))).json.error.code).toBe(-32600);
  });
});

describe('JSON-RPC 2.0 batches and notifications', () => {
  it('answers a batch per call, leaves notifications unanswered, answers id null with id null, and 204 for only notifications', async () => {
    const target = (await t.head()) + 1n;
    const tx = await transfer(t.client, 2);
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'eth_sendBundle', params: [{ txs: [tx], blockNumber: `0x${target.toString(16)}` }] },
      { jsonrpc: '2.0', id: 'b', method: 'eth_unknown', params: [] },
      { jsonrpc: '2.0', method: 'eth_cancelBundle', params: [{ replacementUuid: '00000000-0000-4000-8000-000000000000' }] },
      { jsonrpc: '2.0', id: null, method: 'eth_cancelBundle', params: [{ replacementUuid: '00000000-0000-4000-8000-000000000000' }] },
    ]);
    const res = await signed(batch);
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(3);
    expect(res.json).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 'a', result: null },
        { jsonrpc: '2.0', id: 'b', error: expect.objectContaining({ code: -32601 }) },
        { jsonrpc: '2.0', id: null, result: null },
      ]),
    );
    const onlyNotifications = JSON.stringify({
      jsonrpc: '2.0',
      method: 'eth_cancelBundle',
      params: [{ replacementUuid: '00000000-0000-4000-8000-000000000000' }],
    });
    const none = await signed(onlyNotifications);
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
  });
});

describe('eth_callBundle', () => {
  it('simulates with eth_simulateV1 and reports gas, fees and ETH sent to the coinbase', async () => {
    const target = (await t.head()) + 1n;
    const pay = await transfer(t.client, 6, { to: t.builder.coinbase, value: parseEther('0.01') });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'eth_callBundle',
      params: [{ txs: [pay], blockNumber: `0x${target.toString(16)}`, stateBlockNumber: 'latest' }],
    });
    const queued = (await t.builder.intake.pool.bundlesFor(target)).length;
    const res = await signed(body);
    const r = res.json.result;
    expect(r.totalGasUsed).toBe(21000);
    expect(r.ethSentToCoinbase).toBe(parseEther('0.01').toString());
    expect(BigInt(r.coinbaseDiff)).toBeGreaterThan(parseEther('0.01'));
    expect(r.results[0]).toMatchObject({ fromAddress: devAccount(6).address, gasUsed: 21000 });
    // nothing was queued
    expect(await t.builder.intake.pool.bundlesFor(target)).toHaveLength(queued);
  });
});
