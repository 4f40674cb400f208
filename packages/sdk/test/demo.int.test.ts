import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mnemonicToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { channelsOfPayer } from '../../../apps/gateway/test/channels.js';
import { useTestGateway } from '../../../apps/gateway/test/useTestGateway.js';

/**
 * `npm run demo` (packages/sdk/examples/demo.mjs, built SDK) against a test gateway that takes x402
 * `batch-settlement` beside `exact` (as `npm start`'s dev defaults do), first call and channel burst only
 * (DEMO_SKIP_EXTRAS=1): the burst goes over one channel (one deposit, then vouchers), and a second run of
 * the demo, whose client starts without the first run's channel state, resynchronises from the gateway's
 * corrective 402 and charges the same channel on.
 */
const ROOT = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const DEMO_ACCOUNT = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 2 });
const BURST = 12;

const t = useTestGateway({ config: { chains: { ethereum: 'http://127.0.0.1:1' }, payment: { schemes: ['exact', 'batch-settlement'] } } });

/** Runs `npm run demo` (it builds the SDK first) against `t` and resolves with its output; rejects when it exits non-zero. */
async function runDemo(env: Record<string, string> = {}): Promise<string> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'demo'], {
    cwd: ROOT,
    env: { ...clean, GATEWAY_URL: t.url, DEMO_RPC_URL: t.stack.payment.rpcUrl, DEMO_SKIP_EXTRAS: '1', DEMO_BURST: String(BURST), ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 240_000,
  });
  return stdout;
}

const demoChannel = () => channelsOfPayer(t, DEMO_ACCOUNT.address);

describe('npm run demo', () => {
  it('pays one call, then a burst over one batch-settlement channel; run again, it charges the same channel on', { timeout: 300_000 }, async () => {
    const first = await runDemo();
    expect(first).toContain('status:       SUCCEEDED');
    expect(first).toContain(`${BURST} calls of intelligence.wallet_balances over one batch-settlement channel`);
    expect(first).toMatch(new RegExp(`${BURST} calls in \\d+ ms: one deposit on-chain, then a voucher per call`));
    expect(first).toContain('vouchers charged 0.012 USDC, balance 0.012 USDC');
    const [channel] = await demoChannel();
    expect(channel?.chargedCumulativeAmount).toBe(String(BURST * 1000));
    expect(first).toContain(channel!.channelId.slice(0, 10));

    // a new process: its client has no channel state; the gateway's corrective 402 resynchronises it
    const second = await runDemo();
    expect(second).toContain('vouchers charged 0.024 USDC, balance 0.024 USDC');
    expect(second).toContain('spent by this run 0.012 USDC');
    const after = await demoChannel();
    expect(after).toHaveLength(1);
    expect(after[0].chargedCumulativeAmount).toBe(String(2 * BURST * 1000));
  });
});
