import { Ledger } from '@acg/accounts';
import { readSearcherCharges } from '@acg/bundles';
import type { Hex, LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { useTestBuilder } from './useTestBuilder.js';
import { flashbotsSignature, freshIp, post, quantity as hex, rpcBody as call, sendBundleBody, transfer, type Reply } from './harness.js';

// Attack (issue 23 item 5): the identical signed eth_sendBundle body sent again (by the searcher,
// or by anyone it was sent to: searchers send one signed body to many builders) must not be charged
// again. A bundle is priced once per signer and bundle (same transactions and target block, or the
// same replacementUuid in that block); a resend gets the same answer and moves no money.
const t = useTestBuilder();

/** The same bytes and the same signature header each time, from a fresh client address (no rate limit in the way). */
async function replayer(account: LocalAccount, body: string): Promise<() => Promise<Reply>> {
  const signature = await flashbotsSignature(account, body);
  return () => post(t.builder.rpcUrl, body, { 'X-Flashbots-Signature': signature }, freshIp());
}

async function fundedSearcher(balance: bigint) {
  const searcher = privateKeyToAccount(generatePrivateKey());
  const ledger = new Ledger(t.builder.redis, t.builder.keys);
  await ledger.credit(searcher.address, balance, 'deposit', `dep_${searcher.address}`);
  return { searcher, ledger };
}

describe('a signed bundle sent again', () => {
  it('eth_sendBundle: three identical signed bodies are debited once, answered alike, and counted once', async () => {
    const { searcher, ledger } = await fundedSearcher(1_000_000n);
    const target = (await t.head()) + 4n;
    const send = await replayer(searcher, sendBundleBody([await transfer(t.client, 9)], target));
    const answers = [await send(), await send(), await send()];
    for (const a of answers) expect(a.json).toEqual({ jsonrpc: '2.0', id: 1, result: null });

    const view = await ledger.view(searcher.address);
    expect(view.balance).toBe('900000');
    expect(view.spent).toBe('100000');
    expect(view.usage.filter((u) => u.kind === 'debit')).toHaveLength(1);
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({
      bundles: 1,
      debited_base_units: '100000',
      owed_base_units: '0',
    });
    expect((await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.searcher === searcher.address)).toHaveLength(1);
  });

  it('concurrent resends of one body are debited once too', async () => {
    const { searcher, ledger } = await fundedSearcher(1_000_000n);
    const target = (await t.head()) + 4n;
    const send = await replayer(searcher, sendBundleBody([await transfer(t.client, 9, { tipGwei: '2' })], target));
    const answers = await Promise.all(Array.from({ length: 5 }, () => send()));
    for (const a of answers) expect(a.json.result).toBeNull();
    expect((await ledger.view(searcher.address)).balance).toBe('900000');
  });

  it('mev_sendBundle: a resend answers the same bundleHash and is not priced again (owed once)', async () => {
    const searcher = privateKeyToAccount(generatePrivateKey());
    const target = (await t.head()) + 3n;
    const tx: Hex = await transfer(t.client, 9, { tipGwei: '5' });
    const send = await replayer(
      searcher,
      call('mev_sendBundle', [{ version: 'v0.1', inclusion: { block: hex(target), maxBlock: hex(target + 1n) }, body: [{ tx, canRevert: false }] }]),
    );
    const first = await send();
    const second = await send();
    expect(first.json.result).toHaveProperty('bundleHash');
    // answered alike: the same bundleHash and the first receipt's receivedTimestampMs
    expect(second.json).toEqual(first.json);
    expect(await readSearcherCharges(t.builder.redis, t.builder.keys, searcher.address)).toMatchObject({ bundles: 1, owed_base_units: '100000' });
  });

  it('the same replacementUuid in the same block is priced once; a new target block is a new bundle, priced again', async () => {
    const { searcher, ledger } = await fundedSearcher(1_000_000n);
    const target = (await t.head()) + 4n;
    const replacementUuid = '0b1e9f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
    for (const tip of ['2', '3']) {
      const send = await replayer(searcher, sendBundleBody([await transfer(t.client, 9, { tipGwei: tip })], target, { replacementUuid }));
      expect((await send()).json.result).toBeNull();
    }
    expect((await ledger.view(searcher.address)).balance).toBe('900000');
    // the replacement took the first one's place
    expect((await t.builder.intake.pool.bundlesFor(target)).filter((b) => b.searcher === searcher.address)).toHaveLength(1);

    const next = await replayer(searcher, sendBundleBody([await transfer(t.client, 9, { tipGwei: '4' })], target + 1n, { replacementUuid }));
    expect((await next()).json.result).toBeNull();
    expect((await ledger.view(searcher.address)).balance).toBe('800000');
  });
});
