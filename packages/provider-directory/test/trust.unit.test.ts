import { describe, expect, it } from 'vitest';
import {
  TRUST_PROBE_WEIGHT,
  TRUST_ROUTING_THRESHOLD,
  trustScore,
  trustTier,
  zeroCounts,
  type TrustInputs,
  type TrustOutcome,
  type TrustOutcomeKind,
} from '../src/trust.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const daysAgo = (d: number) => new Date(NOW - d * 86_400_000).toISOString();
const outcomes = (kinds: TrustOutcomeKind[], latency = 100): TrustOutcome[] =>
  kinds.map((outcome, i) => ({ source: 'execution', outcome, latency_ms: latency, at: NOW - i * 1000 }));
/** The score of an offer listed today with no record and a 30 s timeout, but for `inputs`. */
const score = (inputs: Partial<TrustInputs> = {}) =>
  trustScore({ recent: [], counts: zeroCounts(), timeout_ms: 30_000, listed_at: daysAgo(0), now: NOW, ...inputs });

describe('trustScore (trust-v2)', () => {
  it('gives a new offer with no record 58: reliability and latency at their priors, no tenure', () => {
    const s = score();
    expect(s.formula).toBe('trust-v2');
    expect(s.inputs.components).toEqual({ reliability: 0.5, latency: 0.5, integrity: 1, disputes: 1, tenure: 0 });
    expect(s.score).toBe(58);
    expect(s.score).toBeGreaterThanOrEqual(TRUST_ROUTING_THRESHOLD);
  });

  it('scores a fast, always-successful, 30-day-old offer near 100', () => {
    const s = score({ recent: outcomes(Array(100).fill('succeeded'), 50), counts: { ...zeroCounts(), executions: 100 }, listed_at: daysAgo(40) });
    expect(s.inputs.success_rate).toBe(1);
    expect(s.inputs.latency_ms_p50).toBe(50);
    expect(s.inputs.days_listed).toBe(40);
    expect(s.score).toBeGreaterThanOrEqual(98);
  });

  it('puts an offer whose answers fail its output schema under the routing threshold', () => {
    const s = score({
      recent: outcomes(['invalid_output', 'invalid_output', 'succeeded']),
      counts: { ...zeroCounts(), executions: 2, execution_failures: 2, invalid_outputs: 2, probes: 1 },
    });
    expect(s.inputs.components.integrity).toBe(0);
    expect(s.score).toBeLessThan(TRUST_ROUTING_THRESHOLD);
  });

  it('weighs recent outcomes more than old ones', () => {
    const recentBad = score({ recent: outcomes([...Array(10).fill('failed'), ...Array(40).fill('succeeded')]), listed_at: daysAgo(10) });
    const oldBad = score({ recent: outcomes([...Array(40).fill('succeeded'), ...Array(10).fill('failed')]), listed_at: daysAgo(10) });
    expect(recentBad.inputs.success_rate).toBeLessThan(oldBad.inputs.success_rate);
    expect(recentBad.score).toBeLessThan(oldBad.score);
  });

  it('weighs a paid execution above a probe: probes passed after paid failures do not make up for them (issue 36 item 3)', () => {
    expect(TRUST_PROBE_WEIGHT).toBeLessThan(1);
    // the attack seen: 16 of 18 paid calls failed, then three probes passed
    const failedPaid = outcomes([...Array(16).fill('failed'), ...Array(2).fill('succeeded')]);
    const probesPassed: TrustOutcome[] = Array.from({ length: 3 }, (_, i) => ({
      source: 'probe',
      outcome: 'succeeded',
      latency_ms: 100,
      at: NOW + (3 - i) * 1000,
    }));
    const asProbes = score({ recent: [...probesPassed, ...failedPaid] });
    const asPaid = score({ recent: [...probesPassed.map((o) => ({ ...o, source: 'execution' as const })), ...failedPaid] });
    // weighed as paid calls (trust-v1) the three probes bring the offer back over the threshold; as probes they do not
    expect(asPaid.score).toBeGreaterThanOrEqual(TRUST_ROUTING_THRESHOLD);
    expect(asProbes.score).toBeLessThan(TRUST_ROUTING_THRESHOLD);
    expect(asProbes.inputs.success_rate).toBeLessThan(asPaid.inputs.success_rate);
  });

  it('lowers the latency part as p99 nears the declared timeout', () => {
    const fast = score({ recent: outcomes(Array(20).fill('succeeded'), 100), timeout_ms: 1000, listed_at: daysAgo(1) });
    const slow = score({ recent: outcomes(Array(20).fill('succeeded'), 950), timeout_ms: 1000, listed_at: daysAgo(1) });
    expect(fast.inputs.components.latency).toBeCloseTo(0.9, 5);
    expect(slow.inputs.components.latency).toBeCloseTo(0.05, 5);
    expect(slow.score).toBeLessThan(fast.score);
  });

  it('counts a lost dispute three times an opened one', () => {
    const base = { recent: outcomes(Array(20).fill('succeeded')), listed_at: daysAgo(10) };
    const opened = score({ ...base, counts: { ...zeroCounts(), executions: 20, disputes_opened: 2 } });
    const lost = score({ ...base, counts: { ...zeroCounts(), executions: 20, disputes_opened: 2, disputes_lost: 2 } });
    expect(opened.inputs.components.disputes).toBeCloseTo(0.9, 5);
    expect(lost.inputs.components.disputes).toBeCloseTo(0.6, 5);
  });
});

describe('trustTier', () => {
  const scored = (days: number, paid: number, extra: Partial<ReturnType<typeof zeroCounts>> = {}) =>
    score({
      recent: outcomes(Array(Math.min(paid, 200)).fill('succeeded'), 50),
      counts: { ...zeroCounts(), executions: paid, ...extra },
      listed_at: daysAgo(days),
    });
  it('holds new offers twice the window, disputed three times, trusted a quarter, others once', () => {
    expect(trustTier({ score: scored(1, 500), lost_recently: false })).toEqual({ tier: 'new', multiplier: 2 });
    expect(trustTier({ score: scored(60, 5), lost_recently: false })).toEqual({ tier: 'new', multiplier: 2 });
    expect(trustTier({ score: scored(60, 500), lost_recently: false })).toEqual({ tier: 'trusted', multiplier: 0.25 });
    expect(trustTier({ score: scored(10, 50), lost_recently: false })).toEqual({ tier: 'standard', multiplier: 1 });
    expect(trustTier({ score: scored(60, 500), lost_recently: true })).toEqual({ tier: 'disputed', multiplier: 3 });
    expect(trustTier({ score: scored(60, 500, { disputes_opened: 3 }), lost_recently: false })).toEqual({ tier: 'disputed', multiplier: 3 });
  });
});
