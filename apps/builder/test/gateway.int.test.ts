import { devAccount } from '@acg/devnet';
import { BuilderHealth } from '@acg/schemas';
import { createPublicClient, http, type PublicClient } from 'viem';
import { mainnet } from 'viem/chains';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { readBuilderHealth, readSearcherCharges } from '@acg/bundles';
import { sendBundle } from '@acg/capabilities';
import { RedisKeys } from '@acg/redis';
import { transfer } from './harness.js';

const t = useTestBuilder();
let ethereum: PublicClient;
beforeAll(async () => {
  ethereum = createPublicClient({ chain: { ...mainnet, rpcUrls: { default: { http: [t.eth.rpcUrl] } } }, transport: http(t.eth.rpcUrl) }) as PublicClient;
});

describe('builder.send_bundle as a gateway capability (x402 execute path)', () => {
  it('queues the bundle with the x402 payer as searcher, records it as paid, and it lands like an /rpc bundle', async () => {
    const deps = { chainClient: () => ethereum, redis: t.builder.redis, keys: t.builder.keys };
    const payer = devAccount(2).address;
    const target = (await t.client.getBlockNumber()) + 1n;
    const input = sendBundle.input.parse({ txs: [await transfer(t.client, 4)], blockNumber: `0x${target.toString(16)}` });
    expect(sendBundle.precondition!(input, deps)).toBeUndefined();
    const out = sendBundle.output.parse(
      await sendBundle.run(input, deps, { executionId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T', payer, paymentTxHash: `0x${'ab'.repeat(32)}` }),
    );
    expect(out).toMatchObject({ jsonrpc: '2.0', result: null, searcher: payer, block_number: `0x${target.toString(16)}` });
    const pooled = await t.builder.intake.pool.bundlesFor(target);
    expect(pooled).toHaveLength(1);
    expect(pooled[0]).toMatchObject({ searcher: payer, via: { kind: 'x402', executionId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8T' } });
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, payer)).toMatchObject({ bundles: 1, paid_base_units: '100000', owed_base_units: '0' });
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toEqual([out.bundle_hash]);

    // the JSON-RPC envelope from the catalog's example is accepted as input too
    const envelope = sendBundle.input.parse({
      jsonrpc: '2.0',
      method: 'eth_sendBundle',
      id: 5,
      params: [{ txs: [await transfer(t.client, 4)], blockNumber: `0x${(target + 1n).toString(16)}` }],
    });
    const out2 = sendBundle.output.parse(
      await sendBundle.run(envelope, deps, { executionId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S8V', payer, paymentTxHash: `0x${'cd'.repeat(32)}` }),
    );
    expect(out2.id).toBe(5);
  });

  it('refuses before payment what can be checked without the chain (422 reasons), and after payment a past block (refunded failure)', async () => {
    const deps = { chainClient: () => ethereum, redis: t.builder.redis, keys: t.builder.keys };
    const head = await t.client.getBlockNumber();
    const wrongChain = sendBundle.input.parse({ txs: [await transfer(t.client, 4, { chainId: 8453 })], blockNumber: `0x${(head + 1n).toString(16)}` });
    expect(sendBundle.precondition!(wrongChain, deps)).toMatch(/chain id 8453/);
    expect(sendBundle.precondition!(wrongChain, { chainClient: () => undefined })).toMatch(/ETHEREUM_RPC_URL/);
    const past = sendBundle.input.parse({ txs: [await transfer(t.client, 4)], blockNumber: `0x${head.toString(16)}` });
    await expect(sendBundle.run(past, deps, { executionId: 'exe_x', payer: devAccount(2).address, paymentTxHash: '0x00' })).rejects.toMatchObject({
      code: 'invalid_bundle',
      status: 422,
    });
  });

  it("fills the health document's builder part from the live counters (readBuilderHealth, what the gateway's Discovery reads)", async () => {
    const live = await readBuilderHealth(t.builder.redis, t.builder.keys);
    // the health document's `builder` field is exactly this shape (HealthDocument.builder of @acg/schemas)
    expect(BuilderHealth.parse(live)).toEqual(live);
    expect(live!.bids_received).toBe(2);
    expect(live!.submits).toBe(4);
    expect(live!.relays).toHaveLength(4);
    expect(live!.bls_public_key).toBe(t.builder.blsPublicKey);
    // without a builder registered under the prefix, health says null
    expect(await readBuilderHealth(t.builder.redis, new RedisKeys('acg:nobody:'))).toBeNull();
  });
});

/** Bundle hashes in the builder's pool for `block`. */
const pooled = async (block: bigint) => (await t.builder.intake.pool.bundlesFor(block)).map((b) => b.bundle_hash);

/** The SDK's builder module, a client signing as dev account `index`, the next block and a signed transfer from that account. */
async function sdkSearcher(index: number) {
  const sdk = await import('../../../packages/sdk/src/builder.js');
  const account = devAccount(index);
  const builder = sdk.createBuilderClient({ rpcUrl: t.builder.rpcUrl, account });
  return { sdk, account, builder, target: (await t.client.getBlockNumber()) + 1n, tx: await transfer(t.client, index) };
}

describe('SDK: packages/sdk/src/builder.ts', () => {
  it('sends, cancels and simulates bundles signed with a viem account; errors carry the JSON-RPC code and field', async () => {
    const { sdk, account, builder, target, tx } = await sdkSearcher(7);
    const { BundleRpcError, computeBundleHash } = sdk;
    const uuid = '3f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';
    const sent = await builder.sendBundle([tx], target, { replacementUuid: uuid });
    expect(sent).toEqual({ bundleHash: computeBundleHash([tx]), blockNumber: `0x${target.toString(16)}`, searcher: account.address });
    expect(await pooled(target)).toContain(sent.bundleHash);
    await builder.cancelBundle(uuid);
    expect(await pooled(target)).not.toContain(sent.bundleHash);
    const sim = await builder.callBundle([tx], target);
    expect(sim.totalGasUsed).toBe(21000);
    const err = await builder.sendBundle([tx], target - 1n).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BundleRpcError);
    expect(err).toMatchObject({ code: -32602, data: { field: 'blockNumber' } });
  });

  it('sends a MEV-Share bundle over a block range and follows its life with getBundleStats; only its signer sees it', async () => {
    const { sdk, builder, target, tx } = await sdkSearcher(8);
    const { createBuilderClient, BundleRpcError, computeBundleHash } = sdk;
    const { bundleHash } = await builder.mevSendBundle({
      inclusion: { block: target, maxBlock: target + 2n },
      body: [{ tx, canRevert: false }],
      privacy: { hints: ['hash'] },
    });
    expect(bundleHash).toBe(computeBundleHash([tx]));
    for (const block of [target, target + 1n, target + 2n]) expect(await pooled(block)).toContain(bundleHash);
    expect(await pooled(target + 3n)).not.toContain(bundleHash);

    const received = await builder.getBundleStats(bundleHash, target);
    expect(received).toMatchObject({ isHighPriority: true, isSimulated: false, landed: false, consideredByBuildersAt: [], sentToRelaysAt: [] });
    expect('receivedAt' in received && received.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const attempt = await t.builder.bidder.attempt();
    expect(attempt.included).toContain(bundleHash);
    const sealed = await builder.getBundleStats(bundleHash, target);
    expect(sealed).toMatchObject({ isSimulated: true, landed: true, sealedByBuildersAt: [{ pubkey: t.builder.blsPublicKey }] });

    // another searcher learns nothing; a matchmaker-style {hash} entry is refused naming the field
    const other = createBuilderClient({ rpcUrl: t.builder.rpcUrl, account: devAccount(9) });
    expect(await other.getBundleStats(bundleHash, target)).toEqual({ isSimulated: false });
    const refused = await builder.mevSendBundle({ inclusion: { block: target + 5n }, body: [{ hash: bundleHash } as never] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BundleRpcError);
    expect(refused).toMatchObject({ code: -32602, data: { field: 'body[0]', reason: 'unsupported_body_entry' } });
  });
});
