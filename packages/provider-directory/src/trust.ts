/**
 * The trust score `trust-v2` of one offer (a provider on one capability), 0..100, computed only
 * from the gateway's own records. The formula, its weights and the tiers are written down in
 * `docs/trust-v1.md` (and this package's README, "Trust scores"); a change of any constant here is
 * a new formula version.
 */

/** The formula's version: named in every attestation, on `/llms.txt` and on the capability page. */
export const TRUST_FORMULA = 'trust-v2';

/** An offer with a score under this is `suspended`: not routed, still probed (docs/trust-v1.md "Suspension"). */
export const TRUST_ROUTING_THRESHOLD = 50;

/** Consecutive passing probes that lift a suspension (docs/trust-v1.md "Suspension"). */
export const TRUST_RECOVERY_PROBES = 3;

/** Half-life of an outcome's weight, in outcomes: the i-th most recent outcome (0 = newest) weighs `0.5^(i / 20)`. */
export const TRUST_HALF_LIFE_OUTCOMES = 20;

/**
 * What a probe's outcome weighs beside a paid execution's in the recency-weighted parts (reliability
 * and integrity): a quarter (docs/trust-v1.md "Formula"). Buyers' calls are the evidence that
 * counts; probes keep a score moving when nobody buys.
 */
export const TRUST_PROBE_WEIGHT = 0.25;

/** How many recent outcomes the recency-weighted parts read (older ones only count in `counts`). */
export const TRUST_WINDOW_OUTCOMES = 200;

/** What one execution or probe of an offer ended with (the execution's `attempts[].outcome` words). */
export type TrustOutcomeKind = 'succeeded' | 'failed' | 'timeout' | 'invalid_output' | 'invalid_signature';

/** One recorded execution or probe: `latency_ms` as measured by the gateway, `at` unix ms. */
export interface TrustOutcome {
  source: 'execution' | 'probe';
  outcome: TrustOutcomeKind;
  latency_ms: number;
  at: number;
}

/** All-time counters of an offer (integers), published with the score so a reader can check it. */
export interface TrustCounts {
  executions: number;
  execution_failures: number;
  probes: number;
  probe_failures: number;
  timeouts: number;
  invalid_outputs: number;
  invalid_signatures: number;
  disputes_opened: number;
  disputes_lost: number;
}

/** Everything {@link trustScore} reads. */
export interface TrustInputs {
  /** Recent outcomes, newest first (at most {@link TRUST_WINDOW_OUTCOMES} are read). */
  recent: readonly TrustOutcome[];
  counts: TrustCounts;
  /** The offer's declared timeout, ms. */
  timeout_ms: number;
  /** When the provider was listed (RFC 3339). */
  listed_at: string;
  /** The time of the computation, unix ms. */
  now: number;
}

/**
 * The derived inputs of a score, each as published: `success_rate` and `invalid_rate` recency
 * weighted (0..1), `latency_ms_p50`/`latency_ms_p99` over the recent outcomes (null without one),
 * `days_listed` (fractional days), and the five components (0..1) with their weights.
 */
export interface TrustScoreInputs {
  success_rate: number;
  invalid_rate: number;
  latency_ms_p50: number | null;
  latency_ms_p99: number | null;
  timeout_ms: number;
  days_listed: number;
  components: { reliability: number; latency: number; integrity: number; disputes: number; tenure: number };
}

/** A score with what it was computed from. */
export interface TrustScore {
  formula: typeof TRUST_FORMULA;
  /** 0..100, an integer */
  score: number;
  inputs: TrustScoreInputs;
  counts: TrustCounts;
}

/** Weights of the components (sum 1). */
export const TRUST_WEIGHTS = { reliability: 0.5, latency: 0.15, integrity: 0.15, disputes: 0.1, tenure: 0.1 } as const;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The q-quantile (0..1) of `values` by nearest rank; null for none. */
function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * The `trust-v1` score of an offer (docs/trust-v1.md): a pure function of the gateway's records.
 *
 * - reliability = (Σ wᵢ·successᵢ + 1) / (Σ wᵢ + 2) over the recent outcomes (executions and probes),
 *   wᵢ = 0.5^(i / 20) × (1 for a paid execution, {@link TRUST_PROBE_WEIGHT} for a probe), i = 0 for
 *   the newest (a Laplace prior: 0.5 with no record);
 * - latency = ½·(1 − p50 / timeout) + ½·(1 − p99 / timeout), each clamped to 0..1 (0.5 with no record);
 * - integrity = 1 − min(1, 5 × recency-weighted share of invalid outputs and invalid signatures);
 * - disputes = 1 − min(1, (opened + 3 × lost) / max(10, executions));
 * - tenure = min(1, days listed / 30);
 *
 * score = round(100 × (0.5·reliability + 0.15·latency + 0.15·integrity + 0.1·disputes + 0.1·tenure)).
 *
 * @example trustScore({ recent: [], counts: zeroCounts(), timeout_ms: 30000, listed_at: new Date().toISOString(), now: Date.now() }).score // 58
 */
export function trustScore(inputs: TrustInputs): TrustScore {
  const recent = inputs.recent.slice(0, TRUST_WINDOW_OUTCOMES);
  let weight = 0;
  let good = 0;
  let invalid = 0;
  recent.forEach((o, i) => {
    const w = 0.5 ** (i / TRUST_HALF_LIFE_OUTCOMES) * (o.source === 'probe' ? TRUST_PROBE_WEIGHT : 1);
    weight += w;
    if (o.outcome === 'succeeded') good += w;
    if (o.outcome === 'invalid_output' || o.outcome === 'invalid_signature') invalid += w;
  });
  const success_rate = weight > 0 ? good / weight : 0;
  const invalid_rate = weight > 0 ? invalid / weight : 0;
  const reliability = (good + 1) / (weight + 2);
  const latencies = recent.filter((o) => o.outcome !== 'timeout' && o.outcome !== 'failed').map((o) => o.latency_ms);
  const p50 = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);
  const timeout = Math.max(1, inputs.timeout_ms);
  const latency = p50 === null || p99 === null ? 0.5 : 0.5 * clamp01(1 - p50 / timeout) + 0.5 * clamp01(1 - p99 / timeout);
  const integrity = 1 - Math.min(1, 5 * invalid_rate);
  const { counts } = inputs;
  const disputes = 1 - Math.min(1, (counts.disputes_opened + 3 * counts.disputes_lost) / Math.max(10, counts.executions));
  const listedMs = Date.parse(inputs.listed_at);
  const days_listed = Number.isFinite(listedMs) ? Math.max(0, (inputs.now - listedMs) / 86_400_000) : 0;
  const tenure = Math.min(1, days_listed / 30);
  const w = TRUST_WEIGHTS;
  const total = w.reliability * reliability + w.latency * latency + w.integrity * integrity + w.disputes * disputes + w.tenure * tenure;
  return {
    formula: TRUST_FORMULA,
    // the sum rounded to 1e-6 first, so 57.5 is 58 whatever the float error
    score: Math.round(Math.round(clamp01(total) * 1e6) / 1e4),
    inputs: {
      success_rate: round4(success_rate),
      invalid_rate: round4(invalid_rate),
      latency_ms_p50: p50 === null ? null : Math.round(p50),
      latency_ms_p99: p99 === null ? null : Math.round(p99),
      timeout_ms: inputs.timeout_ms,
      days_listed: round4(days_listed),
      components: {
        reliability: round4(reliability),
        latency: round4(latency),
        integrity: round4(integrity),
        disputes: round4(disputes),
        tenure: round4(tenure),
      },
    },
    counts: { ...counts },
  };
}

/** Counters all zero (a new offer). */
export const zeroCounts = (): TrustCounts => ({
  executions: 0,
  execution_failures: 0,
  probes: 0,
  probe_failures: 0,
  timeouts: 0,
  invalid_outputs: 0,
  invalid_signatures: 0,
  disputes_opened: 0,
  disputes_lost: 0,
});

/** Dispute-hold tiers (docs/trust-v1.md "Dispute hold tiers"): the hold before payout is the dispute window × `multiplier`. */
export type TrustTier = 'disputed' | 'new' | 'standard' | 'trusted';

/** The published tier table: multiplier of PROVIDER_DISPUTE_WINDOW_SECONDS, first matching row wins (in this order). */
export const TRUST_TIERS: readonly { tier: TrustTier; multiplier: number; rule: string }[] = [
  { tier: 'disputed', multiplier: 3, rule: 'a dispute lost (refunded) in the last 90 days, or 3 or more disputes opened in total' },
  { tier: 'new', multiplier: 2, rule: 'listed for less than 7 days, or fewer than 20 paid executions' },
  { tier: 'trusted', multiplier: 0.25, rule: 'score ≥ 85, listed for 30 days or more, 100 or more paid executions' },
  { tier: 'standard', multiplier: 1, rule: 'everything else' },
];

/** What {@link trustTier} reads besides the score: `lost_recently` = a dispute lost in the last 90 days. */
export interface TrustTierInputs {
  score: TrustScore;
  lost_recently: boolean;
}

/**
 * The dispute-hold tier of an offer and its hold multiplier ({@link TRUST_TIERS}).
 *
 * @example trustTier({ score, lost_recently: false }) // { tier: 'new', multiplier: 2 }
 */
export function trustTier({ score, lost_recently }: TrustTierInputs): { tier: TrustTier; multiplier: number } {
  const row = (tier: TrustTier) => ({ tier, multiplier: TRUST_TIERS.find((t) => t.tier === tier)!.multiplier });
  const c = score.counts;
  const paid = c.executions - c.execution_failures;
  if (lost_recently || c.disputes_opened >= 3) return row('disputed');
  if (score.inputs.days_listed < 7 || paid < 20) return row('new');
  if (score.score >= 85 && score.inputs.days_listed >= 30 && paid >= 100) return row('trusted');
  return row('standard');
}

/**
 * The formula as published on `/llms.txt` and the capability page (Markdown lines), built from the
 * constants above so the published text and the computation cannot drift (docs/trust-v1.md holds
 * the same text with its reasons).
 */
export function trustFormulaText(): string[] {
  const w = TRUST_WEIGHTS;
  return [
    `Trust score formula ${TRUST_FORMULA} (per provider and capability, 0-100, from the gateway's own records only):`,
    `- reliability = (sum of w_i * success_i + 1) / (sum of w_i + 2) over the last ${TRUST_WINDOW_OUTCOMES} executions and probes, w_i = 0.5^(i/${TRUST_HALF_LIFE_OUTCOMES}) x (1 for a paid execution, ${TRUST_PROBE_WEIGHT} for a probe), i = 0 for the newest`,
    '- latency = 0.5 * (1 - p50/timeout_ms) + 0.5 * (1 - p99/timeout_ms), each clamped to 0..1 (0.5 with no record)',
    '- integrity = 1 - min(1, 5 * recency-weighted (as reliability) share of answers with invalid output or an invalid provider signature)',
    '- disputes = 1 - min(1, (disputes opened + 3 * disputes lost) / max(10, executions))',
    '- tenure = min(1, days listed / 30)',
    `- score = round(100 * (${w.reliability} * reliability + ${w.latency} * latency + ${w.integrity} * integrity + ${w.disputes} * disputes + ${w.tenure} * tenure))`,
    `- routing threshold ${TRUST_ROUTING_THRESHOLD}: a failed execution that leaves the score under it suspends the offer (not routed, still probed) until ${TRUST_RECOVERY_PROBES} consecutive probes pass and the score is back at the threshold; probes are sent exactly like paid calls`,
    `- dispute hold before payout = PROVIDER_DISPUTE_WINDOW_SECONDS x tier multiplier: ${TRUST_TIERS.map((t) => `${t.tier} ${t.multiplier}x (${t.rule})`).join('; ')}`,
    '- signed scores: GET /api/v1/providers/{provider_id}/attestation (JWS EdDSA, keys at /.well-known/jwks.json)',
  ];
}
