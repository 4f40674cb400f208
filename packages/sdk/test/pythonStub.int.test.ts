import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../../apps/gateway/test/harness.js';
import { usdcReader } from '../../../apps/gateway/test/x402.js';

/**
 * The Python stub (sdk-python-stub/) pays for itself against a live gateway: its command line
 * (`python3 -m acg_gateway`) discovers `/registry` and runs one paid execute of
 * `intelligence.wallet_balances` with its built-in signer and a funded dev buyer's key, on a real
 * anvil chain (chain id 8453, real USDC) and a private Redis. Nothing is installed here: the
 * signer's libraries (coincurve + pycryptodome, or eth-account) come from `.ci/run`; when
 * they are missing this test fails and says so.
 */
const STUB = fileURLToPath(new URL('../../../sdk-python-stub/', import.meta.url));
const CAPABILITY = 'intelligence.wallet_balances';
const PRICE = 1_000n; // 0.001 USDC in base units
const run = promisify(execFile);

let t: TestGateway;
let balanceOf: (who: `0x${string}`) => Promise<bigint>;

/** Runs the stub's command line (asynchronously: the gateway answers from this process). */
async function stub(args: string[], env: Record<string, string> = {}) {
  return run('python3', ['-m', 'acg_gateway', '--base-url', t.url, ...args], {
    cwd: STUB,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env },
    timeout: 60_000,
  });
}

beforeAll(async () => {
  t = await startTestGateway();
  balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
});
afterAll(async () => {
  await t?.close();
});

describe('Python stub against a live gateway', () => {
  it('has its signer libraries installed', async () => {
    const probe = await run('python3', ['-c', 'from acg_gateway import signer_available; print(signer_available())'], { cwd: STUB });
    expect(
      probe.stdout.trim(),
      'The Python stub has no signer library: pip install coincurve pycryptodome (or eth-account); bash .ci/run installs them',
    ).toMatch(/^(coincurve|eth-account)$/);
  });

  it('discovers the registry and pays one execute: SUCCEEDED, the buyer charged exactly the price', async () => {
    const listed = JSON.parse((await stub(['capabilities'])).stdout) as { id: string; status: string; price: string }[];
    expect(listed.find((c) => c.id === CAPABILITY)).toEqual({ id: CAPABILITY, status: 'LIVE', price: '0.001' });

    const buyer = t.stack.payment.buyers[0]!;
    const treasury = t.stack.payment.treasury.address;
    const [before, treasuryBefore] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);
    const out = await stub(['execute', CAPABILITY, JSON.stringify({ address: buyer.address }), '--per-call-usdc', '0.01', '--total-usdc', '0.01'], {
      ACG_PRIVATE_KEY: toHex(buyer.getHdKey().privateKey!),
    });
    const r = JSON.parse(out.stdout) as {
      execution: { execution_id: string; status: string; result: { address: string }; payment: { tx_hash: string; amount: string } };
      spent_base_units: number;
      signer: { address: string; backend: string };
    };
    expect(r.signer.address).toBe(buyer.address);
    expect(r.execution.status).toBe('SUCCEEDED');
    expect(r.execution.execution_id).toMatch(/^exe_[0-9A-Z]{26}$/);
    expect(r.execution.result.address).toBe(buyer.address);
    expect(r.execution.payment).toEqual({ tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), amount: '1000' });
    expect(r.spent_base_units).toBe(Number(PRICE));
    const [after, treasuryAfter] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);
    expect(before - after).toBe(PRICE);
    expect(treasuryAfter - treasuryBefore).toBe(PRICE);
  });

  it('without a key, reports the payment required and pays nothing', async () => {
    const buyer = t.stack.payment.buyers[1]!;
    const before = await balanceOf(buyer.address);
    const e = (await stub(['execute', CAPABILITY, JSON.stringify({ address: buyer.address })], { ACG_PRIVATE_KEY: '' }).catch((x: unknown) => x)) as {
      code: number;
      stderr: string;
    };
    expect(e.code).toBe(1);
    expect(e.stderr).toContain('PaymentRequired');
    expect(await balanceOf(buyer.address)).toBe(before);
  });
});
