import { TreasurySender } from '@acg/treasury';
import { runPayoutPass } from '@acg/provider-ledger';
import { secretBoxFromKey } from '@acg/secrets';
import { startWalletMonitor, type RunningWalletMonitor } from '@acg/wallet-monitor';
import { pino } from 'pino';
import type { LocalAccount } from 'viem';
import { call, Receiver, signIn } from '../../../../packages/wallet-monitor/test/helpers.js';
import { startTestGateway, type TestGateway } from '../harness.js';
import { startTestProvider } from '../providerServer.js';
import { paidPost } from '../x402.js';

/**
 * What the provider and subscription pages need around a test gateway (the browser tests and
 * `npm run screenshots:account`): the gateway on a dev chain with an admin token and the
 * development webhook policy, a wallet-monitor delivery worker (no chain watchers), a provider
 * endpoint that upper-cases text and verifies the gateway's signatures, and a webhook receiver.
 */
export interface AccountFixture {
  t: TestGateway;
  monitor: RunningWalletMonitor;
  provider: Awaited<ReturnType<typeof startTestProvider>>;
  receiver: Receiver;
  adminToken: string;
  close(): Promise<void>;
}

/** Short delivery retry schedule (3 attempts in well under a second); the schedule of docs/decisions.md "Wallet monitor" is the default. */
export const TEST_SCHEDULE_MS = [0, 150, 300];

export async function startAccountFixture(): Promise<AccountFixture> {
  const adminToken = `admin-${'w'.repeat(32)}`;
  const provider = await startTestProvider((c) => ({
    status: 200,
    body: { result: { upper: String((c.body.input as { text: string }).text).toUpperCase() } },
  }));
  const receiver = new Receiver();
  const [t] = await Promise.all([
    startTestGateway({
      config: { rateLimitPerSecond: 0, adminToken, walletMonitor: { webhookPolicy: 'development', retryScheduleMs: TEST_SCHEDULE_MS } },
    }),
    receiver.start(),
  ]);
  // the worker process's part of the wallet monitor: deliveries only, no chain is watched here
  const monitor = await startWalletMonitor({
    redisUrl: t.stack.redis.url,
    keyPrefix: t.config.keyPrefix,
    chains: {},
    watchers: false,
    policy: 'development',
    secretBox: secretBoxFromKey(t.config.walletMonitor?.webhookSecretKey),
    retryScheduleMs: TEST_SCHEDULE_MS,
    renewalIntervalSeconds: 0,
    log: pino({ level: 'silent' }),
  });
  return {
    t,
    monitor,
    provider,
    receiver,
    adminToken,
    async close() {
      await monitor.stop();
      await receiver.close();
      await t.close();
      await provider.close();
    },
  };
}

/** One paid call of `capabilityId` by `buyer` through `POST /api/v1/execute` with x402; returns the execution id. */
export async function executePaid(f: AccountFixture, buyer: LocalAccount, capabilityId: string, input: unknown): Promise<string> {
  const { body } = await paidPost(buyer, `${f.t.url}/api/v1/execute`, { capability_id: capabilityId, input });
  if (body.status !== 'SUCCEEDED') throw new Error(`execution ${body.execution_id} is ${body.status}`);
  return body.execution_id;
}

/**
 * Gives a provider money to show: two paid calls by the first dev buyer, both disputed; one
 * dispute stays open, the other is released by the admin and paid out at once (one payout pass
 * with a 0.1 USDC minimum). Returns the dispute ids and the payout's tx hash.
 */
export async function seedProviderMoney(
  f: AccountFixture,
  capabilityId: string,
  input: unknown,
): Promise<{ openDisputeId: string; releasedDisputeId: string; payoutTxHash: string; buyerAuth: Record<string, string> }> {
  const buyer = f.t.stack.payment.buyers[0] as LocalAccount;
  const buyerAuth = { authorization: `Bearer ${await signIn(f.t.url, buyer)}` };
  const kept = await executePaid(f, buyer, capabilityId, input);
  const released = await executePaid(f, buyer, capabilityId, input);
  const open = await call('POST', `${f.t.url}/api/v1/executions/${kept}/dispute`, { reason: 'the answer was not upper-case' }, buyerAuth);
  if (open.status !== 201) throw new Error(`dispute: ${open.status}`);
  const second = await call('POST', `${f.t.url}/api/v1/executions/${released}/dispute`, { reason: 'slow' }, buyerAuth);
  await call('POST', `${f.t.url}/api/v1/disputes/${second.body.dispute_id}/resolve`, { outcome: 'release' }, { authorization: `Bearer ${f.adminToken}` });
  const { services } = f.t.gateway;
  const report = await runPayoutPass({
    ledger: services.providerLedger,
    redis: services.redis,
    keys: services.keys,
    sender: new TreasurySender({
      redis: services.redis,
      keys: services.keys,
      rpcUrl: f.t.config.payment.rpcUrl,
      chain: f.t.config.payment.chain,
      treasury: f.t.stack.payment.treasury,
      asset: f.t.config.payment.asset,
    }),
    minimum: 100_000n,
    disputeAutoResolveSeconds: f.t.config.providers.disputeAutoResolveSeconds,
    log: pino({ level: 'silent' }),
  });
  const payoutTxHash = report.sent[0]?.tx_hash;
  if (!payoutTxHash) throw new Error('no payout was sent');
  return { openDisputeId: open.body.dispute_id, releasedDisputeId: second.body.dispute_id, payoutTxHash, buyerAuth };
}
