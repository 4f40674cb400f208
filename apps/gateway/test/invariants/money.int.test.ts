import { devClients, startDevStack, type DevStack } from '@acg/devnet';
import { LiquidationIndexStore } from '@acg/liquidations';
import fc from 'fast-check';
import { pino } from 'pino';
import { erc20Abi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentKeys, recordDeferredCharge } from '@acg/payments/commands';
import { recordJobSettlement } from '../../../worker/src/deferredSettlement.js';
import { startWorker, type RunningWorker } from '../../../worker/src/index.js';
import { startTestGateway, type TestGateway } from '../harness.js';
import { registerProvider, startTestProvider, type Answer, type ReceivedCall } from '../providerServer.js';
import { closeChannels, SequenceChannels } from './channelCommands.js';
import { FAULT_COMMANDS, moneyCommands } from './commandSet.js';
import {
  HOLE_COMMANDS,
  type MoneyCommand,
  type Model,
  type OfferName,
  type ProviderMode,
  type Real,
  type RoutedContract,
  type RoutedOffer,
} from './commands.js';
import { checkConservation, MoneyTruth } from './conservation.js';
import { saveModel } from './faultCommands.js';
import { FaultKit, refundsMined } from './faults.js';
import { NUDGE_LOST } from './jobCommands.js';
import { RestartableRedis } from './restartableRedis.js';
import { sweep } from './sweep.js';

/**
 * The money invariant suite (issue 23 "Done when"; docs/money-invariants.md): model-based
 * sequences (fast-check `fc.commands`) of paid calls, replays, Idempotency-Key reuse, provider
 * successes / failures / timeouts / bad signatures, disputes and their resolutions, payouts,
 * deposits, bearer debits, process kills and faults of the chain, the disk and the clock (issue 33
 * item 7: reorgs, Redis restarted without its last writes, dropped transactions, clock skew), on
 * one real anvil and a private Redis the suite can restart. Each sequence has its own two funded
 * payers and its own provider; after every command the Redis invariants are checked (and the Redis
 * checkpointed), after every fault and every sequence conservation against the chain, once the
 * worker's repair from the chain has run (finality rounds, chain reconciliation, refunds mined).
 *
 * Bounded: MONEY_INVARIANTS_RUNS sequences (default 15) of at most 15 commands. A failure prints
 * fast-check's seed and path; rerun with MONEY_INVARIANTS_SEED=<seed> (and MONEY_INVARIANTS_PATH)
 * to replay it. The hole commands (HOLE_COMMANDS) and the fault commands (FAULT_COMMANDS) are on
 * by default; MONEY_INVARIANTS_ENABLE names more to force on (comma-separated, or `all`),
 * MONEY_INVARIANTS_DISABLE names some to leave out.
 */

const ADMIN_TOKEN = `admin-${'i'.repeat(32)}`;
const SEED = Number(process.env.MONEY_INVARIANTS_SEED ?? 230_23);
const RUNS = Number(process.env.MONEY_INVARIANTS_RUNS ?? 15);
const PATH = process.env.MONEY_INVARIANTS_PATH;
const ENABLED = new Set(
  (process.env.MONEY_INVARIANTS_ENABLE ?? '')
    .split(',')
    .map((s) => s.trim())
    .flatMap((s) => (s === 'all' ? [...HOLE_COMMANDS, ...FAULT_COMMANDS] : s ? [s] : [])),
);
/** hole or fault commands to leave out (comma-separated names), e.g. to run the suite without the faults */
const DISABLED = new Set(
  (process.env.MONEY_INVARIANTS_DISABLE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const quiet = pino({ level: 'silent' });
const FUNDING = 20_000_000n; // 20 USDC per payer and sequence

let t: TestGateway;
let stack: DevStack;
let redis: RestartableRedis;
let faults: FaultKit;
/** the worker's job runner alone (UptoJob): the rest of the worker's work is the suite's own (FaultKit, the channel pass) */
let worker: RunningWorker;
let provider: Awaited<ReturnType<typeof startTestProvider>>;
/** the routed contract's two offers: each its own provider server, answering as its own mode */
const routedServers = {} as Record<OfferName, Awaited<ReturnType<typeof startTestProvider>>>;
const routedModes: Record<OfferName, { current: ProviderMode }> = { cheap: { current: 'ok' }, dear: { current: 'ok' } };
const ROUTED_PRICES: Record<OfferName, string> = { cheap: '0.2', dear: '0.4' };
let truth: MoneyTruth;
const mode: { current: ProviderMode } = { current: 'ok' };
/** a valid EIP-191 signature by an account that is not the provider's: a forged result signature */
let foreignSignature: `0x${string}`;
let sequence = 0;

function answer(call: ReceivedCall, as: ProviderMode = mode.current): Answer {
  const text = String((call.body.input as { text?: unknown })?.text ?? '');
  switch (as) {
    case 'ok':
      return { status: 200, body: { result: { upper: text.toUpperCase() } } };
    case 'http_500':
      return { status: 500, body: { error: 'provider failed' } };
    case 'timeout':
      return 'hang';
    case 'bad_signature':
      return { status: 200, body: { result: { upper: text.toUpperCase() }, signature: foreignSignature } };
    case 'invalid_output':
      return { status: 200, body: { result: { lower: text } } };
  }
}

beforeAll(async () => {
  provider = await startTestProvider((call) => answer(call));
  routedServers.cheap = await startTestProvider((call) => answer(call, routedModes.cheap.current));
  routedServers.dear = await startTestProvider((call) => answer(call, routedModes.dear.current));
  // a private Redis the suite can restart without its last writes (LoseLastWrites)
  redis = await RestartableRedis.start();
  stack = await startDevStack({ quiet: true, redisUrl: redis.url });
  // batch-settlement beside exact (issue 35 item 6): the gateway's own capabilities offer vouchers
  t = await startTestGateway({
    stack,
    config: {
      adminToken: ADMIN_TOKEN,
      rateLimitPerSecond: 0,
      walletMonitor: { webhookPolicy: 'development' },
      payment: { schemes: ['exact', 'batch-settlement'] },
    },
  });
  truth = new MoneyTruth(t);
  faults = new FaultKit(t, redis);
  worker = await startWorker(t.config, {
    refunds: false,
    walletMonitor: false,
    payouts: false,
    chainReconciliation: false,
    paymentRecovery: false,
    channels: false,
    finality: false,
    jobs: {
      backoffMs: 50,
      // an ended upto job's spend recorded for the gateway, whose nudge UptoJob(nudge lost) loses
      settleDeferred: async (job) => {
        const { redis, keys } = t.gateway.services;
        if (!NUDGE_LOST.has(job.payer.toLowerCase())) return recordJobSettlement(redis, keys, quiet, job);
        await recordDeferredCharge(redis, {
          authKey: job.payment.authorization!,
          inFlightKey: paymentKeys.authorizationsInFlight(keys),
          operationId: job.job_id,
          amount: job.payment.amount,
        });
      },
    },
    log: quiet,
  });
  foreignSignature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: 'not the provider' });
  // an indexed (empty) block, so bearer-paid liquidation searches reach the debit
  await new LiquidationIndexStore(t.gateway.services.redis, t.gateway.services.keys, 'ethereum').writeBlock(
    { block_number: 1, block_timestamp: Math.floor(Date.now() / 1000), base_fee_wei: '1000000000', eth_usd: 3000, updated_at: new Date().toISOString() },
    {},
    [],
  );
});
afterAll(async () => {
  await worker?.close();
  await faults?.close();
  await t?.close();
  await stack?.stop();
  await redis?.stop();
  await provider?.close();
  for (const server of Object.values(routedServers)) await server?.close();
});

/** A sequence's own world: a provider (registered through the public API) and two payers funded from a dev buyer. */
async function newSequence(): Promise<Real> {
  // what an interrupted earlier sequence left (a crashed request, a queued refund) settles first
  await settle();
  const n = ++sequence;
  const owner = privateKeyToAccount(generatePrivateKey());
  mode.current = 'ok';
  const name = `inv_money_${n}`;
  const reg = await registerProvider(t.url, owner, {
    name: `Invariant Co ${n}`,
    endpoint: provider.url,
    capabilities: [
      {
        name,
        description: 'Upper-cases text (invariant suite).',
        price_usdc: '0.5',
        timeout_ms: 1000,
        input_schema: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'number' } }, required: ['text'] },
        output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
        example_request: { text: 'probe' },
      },
    ],
  });
  if (reg.status !== 201) throw new Error(`provider registration: ${reg.status} ${JSON.stringify(reg.body)}`);
  const capabilityId = `intelligence.${name}`;
  provider.setSecret(reg.body.signing_secret);
  provider.signAs(owner, [capabilityId]);
  const routed = await newRoutedContract(n);

  const payers = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
  // the channels an earlier sequence left are claimed, settled and refunded: this sequence's escrow is its own
  await closeChannels({ t, payers, faults });
  const clients = await devClients(t.stack.payment.rpcUrl);
  const funder = clients.walletFor(t.stack.payment.buyers[7]);
  for (const p of payers) {
    const hash = await funder.writeContract({ address: t.stack.payment.usdc, abi: erc20Abi, functionName: 'transfer', args: [p.address, FUNDING] });
    await clients.publicClient.waitForTransactionReceipt({ hash });
  }
  const scope = await truth.begin(
    payers.map((p) => p.address),
    [reg.body.provider_id, routed.dear.providerId, routed.cheap.providerId],
    [capabilityId, routed.capabilityId],
  );
  // the point LoseLastWrites goes back to: everything the sequence writes from here may be lost
  await redis.checkpoint();
  return { t, truth, scope, payers, mode, adminToken: ADMIN_TOKEN, routed, faults, channels: new SequenceChannels({ t, payers, faults }) };
}

/**
 * The sequence's contract with two offers (docs/marketplace.md "Contracts and offers"): the dear
 * creator (0.4 USDC) and a cheap joiner (0.2 USDC), each on its own provider server, both probed
 * live so that routing may use either.
 */
async function newRoutedContract(n: number): Promise<RoutedContract> {
  const name = `inv_routed_${n}`;
  const capabilityId = `intelligence.${name}`;
  const offer = {
    description: 'Upper-cases text (invariant suite, routed).',
    timeout_ms: 1000,
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    output_schema: { type: 'object', properties: { upper: { type: 'string' } }, required: ['upper'] },
    example_request: { text: 'probe' },
  };
  const ids = {} as Record<OfferName, string>;
  for (const which of ['dear', 'cheap'] as const) {
    const owner = privateKeyToAccount(generatePrivateKey());
    const server = routedServers[which];
    const identity = which === 'dear' ? { name } : { capability_id: capabilityId };
    const reg = await registerProvider(t.url, owner, {
      name: `Invariant Routed ${which} ${n}`,
      endpoint: server.url,
      capabilities: [{ ...offer, ...identity, price_usdc: ROUTED_PRICES[which] }],
    });
    if (reg.status !== 201) throw new Error(`routed provider registration: ${reg.status} ${JSON.stringify(reg.body)}`);
    server.setSecret(reg.body.signing_secret);
    server.signAs(owner, [capabilityId]);
    ids[which] = reg.body.provider_id;
  }
  await t.gateway.services.providers.directory.reload();
  for (const which of ['dear', 'cheap'] as const) {
    routedModes[which].current = 'ok';
    await t.gateway.prober.probeProvider(ids[which]);
  }
  const offerOf = (which: OfferName): RoutedOffer => ({
    providerId: ids[which],
    price: BigInt(Math.round(Number(ROUTED_PRICES[which]) * 1e6)),
    mode: routedModes[which],
    received: (executionId) => routedServers[which].calls.some((c) => c.body.execution_id === executionId),
  });
  return { capabilityId, cheap: offerOf('cheap'), dear: offerOf('dear') };
}

/** Lets a sequence settle as the worker would: the crash sweep, then every queued refund mined. */
async function settle(): Promise<void> {
  await sweep(t);
  await refundsMined(truth);
}

describe('money invariants (fast-check model-based, real anvil and Redis)', () => {
  it('conserves money over random sequences of payments, replays, provider outcomes, disputes, payouts, deposits, bearer debits, crashes, reorgs, lost writes, dropped transactions and skewed clocks', async () => {
    const commands = fc.commands(moneyCommands(ENABLED, DISABLED), { maxCommands: 15, size: 'large' });
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const real = await newSequence();
        const model: Model = { calls: [], disputes: [], usedQuotes: [] };
        model.saved = saveModel(model);
        // after every command the private Redis is checkpointed: LoseLastWrites loses the writes
        // since (the last command's, and whatever the gateway's workers wrote after its answer)
        const checkpointed = [...cmds].map(
          (c): MoneyCommand => ({
            check: (m) => c.check(m),
            run: async (m, r) => {
              await c.run(m, r);
              await redis.checkpoint();
              m.saved = saveModel(m);
            },
            toString: () => String(c),
          }),
        );
        await fc.asyncModelRun(() => ({ model, real }), checkpointed);
        await settle();
        // the equations are checked from the chain, after the worker's repair: finality rounds
        // (what a reorg removed is sent again) and the chain reconciliation up to a confirmed block
        await faults.repair(real.scope, truth);
        if (process.env.MONEY_INVARIANTS_LOG) console.log(`sequence ${sequence}: [${cmds}]`);
        const violations = await checkConservation(truth, real.scope);
        if (violations.length) {
          const message = `conservation violated after [${cmds}]:\n- ${violations.join('\n- ')}`;
          if (process.env.MONEY_INVARIANTS_LOG) console.error(message);
          throw new Error(message);
        }
      }),
      { seed: SEED, numRuns: RUNS, ...(PATH ? { path: PATH } : {}), endOnFailure: process.env.MONEY_INVARIANTS_SHRINK === '0' },
    );
    // the sequences did move money: payments, refunds and payouts were all exercised
    const outflows = (await truth.transfers(1n)).filter((x) => x.args.from?.toLowerCase() === t.stack.payment.treasury.address.toLowerCase());
    expect(outflows.length).toBeGreaterThan(0);
  }, 900_000);
});
