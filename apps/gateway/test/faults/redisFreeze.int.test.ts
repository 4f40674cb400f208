import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRedisServer, freePort, pingRedis, spawnManaged, type ManagedProcess } from '@acg/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../harness.js';
import { isRedisUnavailable } from '@acg/redis';
import { bearerToken, challenge, officialPayload, paymentHeader, post, usdcReader, paidExecuteRequest } from '../x402.js';

// issue 28 item 2: a frozen Redis (SIGSTOP of the private redis-server this test started) is
// answered 503 with Retry-After while it is frozen, for paid and unpaid requests alike, and the
// gateway serves normally again once it resumes (SIGCONT), without a burst of 429s.
const FREEZE_MS = 10_000;
const PRICE = 1000n; // intelligence.wallet_balances, USDC base units
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let redis: ManagedProcess | undefined;
let t: TestGateway;
/** A wallet's bearer token: an unpaid read is a signed-in one (a job is read by its payer only; an unknown one is 404) */
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'acg-redis-freeze-'));
  const port = await freePort();
  redis = spawnManaged(
    findRedisServer()!,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
    {
      name: `redis:${port}`,
    },
  );
  for (let i = 0; i < 100 && !(await pingRedis('127.0.0.1', port, 200)); i++) await sleep(50);
  // the per-IP limit is on (20/s): the test shows it does not answer 429 once Redis resumes
  t = await startTestGateway({ config: { redisUrl: `redis://127.0.0.1:${port}`, rateLimitPerSecond: 20 } });
  token = await bearerToken(t.url, t.stack.payment.buyers[1]);
});
afterAll(async () => {
  if (redis?.child.pid) process.kill(redis.child.pid, 'SIGCONT');
  await t?.close();
  redis?.child.kill('SIGKILL');
  await redis?.exited;
  rmSync(dir, { recursive: true, force: true });
});

type Seen = { kind: 'unpaid' | 'paid'; sentAt: number; answeredAt: number; status: number; retryAfter: string | null; body: any };

async function unpaid(): Promise<Seen> {
  const sentAt = Date.now();
  const r = await fetch(`${t.url}/api/v1/jobs/job_01JD5X0Q6Z8R3M2N4P5Q6R7S8T`, { headers: { authorization: `Bearer ${token}` } });
  const body = await r.json().catch(() => undefined);
  return { kind: 'unpaid', sentAt, answeredAt: Date.now(), status: r.status, retryAfter: r.headers.get('retry-after'), body };
}

describe('a 10 s Redis freeze', () => {
  it('answers 503 with Retry-After during the freeze, paid and unpaid, then serves normally without 429s; the payment is charged once', {
    timeout: 120_000,
  }, async () => {
    const buyer = t.stack.payment.buyers[0];
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const body = { capability_id: 'intelligence.wallet_balances', input: { address: buyer.address, chain: 'base' } };
    const header = paymentHeader(await officialPayload(buyer, await challenge(`${t.url}/api/v1/execute`, body)));
    const paid = async (): Promise<Seen> => {
      const sentAt = Date.now();
      const r = await post(`${t.url}/api/v1/execute`, body, { 'PAYMENT-SIGNATURE': header });
      return { kind: 'paid', sentAt, answeredAt: Date.now(), status: r.status, retryAfter: r.headers.get('retry-after'), body: r.body };
    };
    const before = await balanceOf(buyer.address);
    expect((await unpaid()).status).toBe(404);

    process.kill(redis!.child.pid!, 'SIGSTOP');
    const frozenAt = Date.now();
    const during: Promise<Seen>[] = [];
    // a steady client during the freeze (4 requests/s, under the limit) and one paid call
    for (let i = 0; i < 34; i++) {
      during.push(unpaid());
      if (i === 2) during.push(paid());
      await sleep(250);
    }
    await sleep(frozenAt + FREEZE_MS - Date.now());
    process.kill(redis!.child.pid!, 'SIGCONT');
    const resumedAt = Date.now();
    const answers = await Promise.all(during);
    const latencies = answers.map((a) => a.answeredAt - a.sentAt);
    console.log(`freeze: ${answers.length} answers, slowest ${Math.max(...latencies)} ms, statuses ${[...new Set(answers.map((a) => a.status))]}`);

    // every request sent while Redis was frozen got its answer while it was still frozen: 503, Retry-After, service_unavailable
    for (const a of answers) {
      expect(a.status, JSON.stringify(a)).toBe(503);
      expect(a.retryAfter).toMatch(/^\d+$/);
      expect(a.body).toMatchObject({ status: 503, code: 'service_unavailable', reason: 'service_unavailable' });
      expect(a.answeredAt, `${a.kind} sent ${a.sentAt - frozenAt} ms into the freeze`).toBeLessThan(resumedAt);
    }
    expect(answers.filter((a) => a.kind === 'paid')).toHaveLength(1);

    // after SIGCONT: the same client (8 requests/s, under the limit) is served normally, never 429
    const after: Seen[] = [];
    for (let i = 0; i < 24; i++) {
      after.push(await unpaid());
      await sleep(125);
    }
    const firstNormal = after.find((a) => a.status === 404);
    console.log(`resumed: first normal answer ${firstNormal ? firstNormal.answeredAt - resumedAt : 'none'} ms after SIGCONT`);
    expect(after.filter((a) => a.status === 429)).toEqual([]);
    expect(after.slice(-8).map((a) => a.status)).toEqual(Array(8).fill(404));
    expect(after.every((a) => a.status === 404 || a.status === 503)).toBe(true);

    // the payment refused during the freeze was not charged; paying again with it runs once and charges once
    expect(await balanceOf(buyer.address)).toBe(before);
    let replay = await paid();
    for (let i = 0; i < 40 && replay.status !== 200; i++) {
      expect([409, 503], JSON.stringify(replay)).toContain(replay.status);
      await sleep(250);
      replay = await paid();
    }
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body).toMatchObject({ status: 'SUCCEEDED', payment: { amount: String(PRICE) } });
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
    const again = await paid();
    expect(again.body.execution_id).toBe(replay.body.execution_id);
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
  });

  it('a paid call whose Redis freezes after settlement answers 503 (payment settled) during the freeze; its answer is stored once Redis resumes and a replay returns it, charged once', {
    timeout: 120_000,
  }, async () => {
    const { services } = t.gateway;
    const buyer = t.stack.payment.buyers[1];
    const balanceOf = usdcReader(t.stack.payment.rpcUrl, t.stack.payment.usdc);
    const { req } = await paidExecuteRequest(t.url, buyer, { price: PRICE, operationId: 'exe_01JD5X0Q6Z8R3M2N4P5Q6R7S9V' });
    const before = await balanceOf(buyer.address);
    let runs = 0;
    let frozenAt = 0;
    const answered = await services.paywall.handle(req, async () => {
      runs++;
      // the payment settled; Redis freezes before the answer is stored
      process.kill(redis!.child.pid!, 'SIGSTOP');
      frozenAt = Date.now();
      return { ok: true, body: { status: 'SUCCEEDED', result: { frozen: true } } };
    });
    const answeredAt = Date.now();
    console.log(`after settlement: answered ${answeredAt - frozenAt} ms into the freeze`);
    expect(answered).toMatchObject({
      kind: 'response',
      status: 503,
      headers: { 'Retry-After': expect.stringMatching(/^\d+$/) },
      body: { reason: 'service_unavailable', payment: { status: 'settled', amount: String(PRICE) } },
    });
    await sleep(frozenAt + FREEZE_MS - Date.now());
    process.kill(redis!.child.pid!, 'SIGCONT');
    expect(answeredAt).toBeLessThan(frozenAt + FREEZE_MS); // answered while Redis was still frozen

    // once Redis is back the answer is stored: the same payment returns it without running again
    // (right after SIGCONT the store may still count as down for one health PING: that is a 503 over HTTP, retried here)
    const sendAgain = () =>
      services.paywall
        .handle(req, async () => {
          throw new Error('must not run again');
        })
        .catch((e: unknown) => {
          if (isRedisUnavailable(e)) return undefined;
          throw e;
        });
    let replay = await sendAgain();
    for (let i = 0; i < 100 && !(replay?.kind === 'response' && replay.status === 200); i++) {
      await sleep(100);
      replay = await sendAgain();
    }
    expect(replay).toMatchObject({ kind: 'response', status: 200, replayed: true, body: { result: { frozen: true } } });
    expect(runs).toBe(1);
    expect(before - (await balanceOf(buyer.address))).toBe(PRICE);
  });
});
