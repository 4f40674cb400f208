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

  it('a re-send after a lost answer proves the payer by its payment-identifier and gets the result; a stranger resending the public authorization gets the receipt only', async () => {
    const buyer = t.stack.payment.buyers[2]!;
    const treasury = t.stack.payment.treasury.address;
    const [before, treasuryBefore] = await Promise.all([balanceOf(buyer.address), balanceOf(treasury)]);
    // The payer's first paid answer is lost after the gateway settled and ran it (the transport drops
    // it); the client re-sends the same PAYMENT-SIGNATURE. A stranger then re-sends the same
    // authorization without the identifier (all it can read on-chain). The payer signs in and reads
    // the execution with its bearer token.
    const script = `import base64, json, os, sys
from acg_gateway import GatewayClient, PaymentAlreadyUsed, local_signer
from acg_gateway.client import urllib_transport
base, cap = sys.argv[1], sys.argv[2]
signer = local_signer(os.environ["ACG_PRIVATE_KEY"])
paid = []
def lossy(method, url, headers, body, timeout):
    status, h, b = urllib_transport(method, url, headers, body, timeout)
    if "payment-signature" in headers:
        paid.append({"status": status, "header": headers["payment-signature"]})
        if len(paid) == 1:
            raise ConnectionResetError("the answer was lost on the way back")
    return status, h, b
gw = GatewayClient(base, transport=lossy, payment_signer=signer, spend_limits={"per_call_usdc": "0.01", "total_usdc": "0.01"})
execution = gw.execute(cap, {"address": signer.address})
sent = json.loads(base64.b64decode(paid[0]["header"]))
public = base64.b64encode(json.dumps({k: v for k, v in sent.items() if k != "extensions"}).encode()).decode()
def replaying(method, url, headers, body, timeout):
    if "payment-signature" in headers:
        headers = {**headers, "payment-signature": public}
    return urllib_transport(method, url, headers, body, timeout)
stranger = GatewayClient(base, transport=replaying)
try:
    stranger.execute(cap, {"address": signer.address}, payment_signer=lambda pr: "unused")
    receipt = None
except PaymentAlreadyUsed as e:
    receipt = {"status": e.status, "execution_id": e.execution_id, "payment": e.payment, "result_url": e.result_url, "problem": e.problem}
token = gw.sign_in(signer)
print(json.dumps({"execution": execution, "spent": gw.spent()[0], "paid": paid, "sent": sent, "receipt": receipt,
                  "read": gw.get_execution(execution["execution_id"], bearer_token=token)}))`;
    const out = await run('python3', ['-c', script, t.url, CAPABILITY], {
      cwd: STUB,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ACG_PRIVATE_KEY: toHex(buyer.getHdKey().privateKey!) },
      timeout: 60_000,
    });
    const r = JSON.parse(out.stdout) as {
      execution: { execution_id: string; status: string; result: { address: string }; payment: { tx_hash: string; amount: string } };
      spent: number;
      paid: { status: number; header: string }[];
      sent: { extensions?: Record<string, { info?: { id?: string } }> };
      receipt: { status: number; execution_id: string; payment: unknown; result_url: string; problem: Record<string, unknown> } | null;
      read: { execution_id: string; result: unknown };
    };
    // the lost answer was the paid result; the re-send carried the same signature and identifier and got it
    expect(r.paid.map((p) => p.status)).toEqual([200, 200]);
    expect(r.paid[1]!.header).toBe(r.paid[0]!.header);
    expect(r.sent.extensions?.['payment-identifier']?.info?.id).toMatch(/^pay_[0-9a-f]{32}$/);
    expect(r.execution.status).toBe('SUCCEEDED');
    expect(r.execution.result.address).toBe(buyer.address);
    expect(r.spent).toBe(Number(PRICE));
    // the stranger: 409 payment_already_used, the receipt and no result
    expect(r.receipt).toMatchObject({
      status: 409,
      execution_id: r.execution.execution_id,
      payment: r.execution.payment,
      result_url: `${t.url}/api/v1/executions/${r.execution.execution_id}`,
    });
    expect(r.receipt!.problem).not.toHaveProperty('result');
    expect(r.receipt!.problem).not.toHaveProperty('proof');
    // the payer reads it with its bearer token
    expect(r.read).toMatchObject({ execution_id: r.execution.execution_id, result: r.execution.result });
    // charged once, for three paid requests
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
    // a command-line user is told to set ACG_PRIVATE_KEY, not the Python API's payment_signer=
    expect(e.stderr).toContain('costs 0.001 USDC: set ACG_PRIVATE_KEY=0x...');
    expect(e.stderr).not.toContain('payment_signer=');
    expect(await balanceOf(buyer.address)).toBe(before);
  });
});
