import { z } from 'zod';
import { CapabilityId, ChainName, DateTime, LatencyPercentileMs, Uri } from './primitives.js';
import { OperationalStatus } from './registryDocument.js';

/** Per-capability health status: `up | degraded | down | planned` (docs/spec-notes.md 2.4, 3). */
export const HealthStatus = z.enum(['up', 'degraded', 'down', 'planned']);
export type HealthStatus = z.infer<typeof HealthStatus>;

/**
 * Latency summary in milliseconds over the measured window: `p50`, `p99` (null until the first
 * sample) and `samples` (count of measurements the percentiles come from) (docs/spec-notes.md 2.4, docs/decisions.md).
 */
export const LatencySummary = z.object({
  p50: LatencyPercentileMs,
  p99: LatencyPercentileMs,
  samples: z.int().nonnegative(),
});
export type LatencySummary = z.infer<typeof LatencySummary>;

/**
 * Health of one capability: `id`, `status`, `latency_ms`, and `checked_at` (RFC 3339 UTC time of
 * the last measurement, null if never measured) (docs/spec-notes.md 2.4, docs/decisions.md "Registry, catalog and health").
 */
export const CapabilityHealth = z.object({
  id: CapabilityId,
  status: HealthStatus,
  latency_ms: LatencySummary,
  checked_at: DateTime.nullable(),
  /** A third-party provider's capability (docs/decisions.md "Providers"): its provider's name and its paid calls and failures (non-2xx, timeout, invalid or unsigned output) since it was first offered. */
  provider: z.object({ name: z.string(), calls: z.int().nonnegative(), failures: z.int().nonnegative() }).optional(),
});
export type CapabilityHealth = z.infer<typeof CapabilityHealth>;

/** State of one MEV-Boost relay as seen by the builder: `up | down | unknown` (unknown before the first submit). */
export const RelayStatus = z.enum(['up', 'down', 'unknown']);
export type RelayStatus = z.infer<typeof RelayStatus>;

/**
 * One relay the builder submits to: `name`, `url`, `status`, counts of `submits`, `accepted` and
 * `rejected` block-construction attempts (refused or unanswered), the most frequent rejection
 * reasons with their counts, the submission `latency_ms` (send to answer, p50/p99 over the last
 * 1,000), and `last_submit_at` (RFC 3339 UTC or null) (docs/decisions.md). The last three are absent from a
 * builder that does not report them yet.
 */
export const RelayHealth = z.object({
  name: z.string().min(1),
  url: Uri,
  status: RelayStatus,
  submits: z.int().nonnegative(),
  accepted: z.int().nonnegative(),
  rejected: z.int().nonnegative().optional(),
  rejections: z.array(z.object({ reason: z.string(), count: z.int().nonnegative() })).optional(),
  latency_ms: LatencySummary.optional(),
  last_submit_at: DateTime.nullable(),
});
export type RelayHealth = z.infer<typeof RelayHealth>;

/**
 * Whether the builder's Ethereum node can seal blocks (`eth_simulateV1` with validation returning
 * a full header; docs/decisions.md "Bundle submission"), as checked at the builder's startup: `ok`, the
 * node's `client` (`web3_clientVersion`), `zero_state_root` (anvil's simulation computes none:
 * accepted on the dev chain only), the `reason` when not ok, and `checked_at`. While `ok` is false
 * no block is submitted and `builder.send_bundle` is not LIVE.
 */
export const SealerHealth = z.object({
  ok: z.boolean(),
  client: z.string().nullable(),
  zero_state_root: z.boolean(),
  reason: z.string().optional(),
  checked_at: DateTime,
});
export type SealerHealth = z.infer<typeof SealerHealth>;

/**
 * Bundle-builder infrastructure state (docs/spec-notes.md 2.4): counters `bids_received`, `submits`, `accepted`,
 * the `relays`, and `bls_public_key` (the builder's 48-byte compressed BLS12-381 public key as
 * `0x` + 96 hex, null when no builder key is configured).
 */
export const BuilderHealth = z.object({
  bids_received: z.int().nonnegative(),
  submits: z.int().nonnegative(),
  accepted: z.int().nonnegative(),
  relays: z.array(RelayHealth),
  bls_public_key: z
    .string()
    .regex(/^0x[0-9a-fA-F]{96}$/, 'must be a 48-byte hex BLS public key')
    .nullable(),
  sealer: SealerHealth.optional(),
});
export type BuilderHealth = z.infer<typeof BuilderHealth>;

/**
 * Wallet-monitor delivery state (health shows delivery latency p50/p99 and backlog):
 * block confirmation → 2xx latency in milliseconds, the delivery backlog (BullMQ `waiting`,
 * `delayed` retries, `active`, and `dead_letters` in total) and one entry per chain watcher.
 */
export const WalletMonitorHealth = z.object({
  delivery_latency_ms: LatencySummary,
  backlog: z.object({
    waiting: z.int().nonnegative(),
    delayed: z.int().nonnegative(),
    active: z.int().nonnegative(),
    dead_letters: z.int().nonnegative(),
  }),
  watchers: z.array(
    z.object({
      chain: ChainName,
      head: z.string().nullable(),
      last_processed_block: z.string().nullable(),
      confirmations: z.int().nullable(),
      native_source: z.string().nullable(),
      reorgs: z.int().nonnegative(),
      updated_at: z.string().nullable(),
    }),
  ),
});
export type WalletMonitorHealth = z.infer<typeof WalletMonitorHealth>;

/**
 * The health document at `/status/health` (docs/spec-notes.md 2.4, docs/decisions.md shape):
 * `{operational_status, generated_at, capabilities: CapabilityHealth[], builder}`.
 * `builder` is null while no builder reports (e.g. before the builder service exists), never
 * zero-filled: values are real measurements, never constants.
 */
export const HealthDocument = z.object({
  operational_status: OperationalStatus,
  generated_at: DateTime,
  capabilities: z.array(CapabilityHealth),
  builder: BuilderHealth.nullable(),
  /** present once the wallet monitor reports */
  wallet_monitor: WalletMonitorHealth.optional(),
});
export type HealthDocument = z.infer<typeof HealthDocument>;

/**
 * Latency of one minute (`/status/series`): `t` the minute's start (unix seconds), then the
 * minute's {@link LatencySummary} (nearest-rank `p50`/`p99` in milliseconds, null in a minute
 * without samples, and `samples`), and failed `errors`.
 */
export const LatencyPoint = z.object({
  t: z.int().nonnegative(),
  ...LatencySummary.shape,
  errors: z.int().nonnegative(),
});
export type LatencyPoint = z.infer<typeof LatencyPoint>;

/**
 * Where a capability's latency samples come from: `executions_and_probes` (every execution and
 * every probe, the samples of `/status/health`), or `webhook_deliveries` for the wallet monitor
 * (block confirmation → 2xx, as `/status/health` reports it).
 */
export const LatencySource = z.enum(['executions_and_probes', 'webhook_deliveries']);
export type LatencySource = z.infer<typeof LatencySource>;

/**
 * The latency series document at `/status/series` (docs/decisions.md "Web pages for people"; the `/status`
 * charts): per capability, one point per minute over the last `window_minutes` (oldest first, the
 * current minute last) read from samples stored in Redis as they happen, never constants, and
 * `window`, the nearest-rank percentiles over all samples of those minutes (equal to
 * `/status/health`'s `latency_ms` while the hour holds all of its latest 1,000 samples).
 */
export const LatencySeriesDocument = z.object({
  generated_at: DateTime,
  bucket_seconds: z.int().positive(),
  window_minutes: z.int().positive(),
  capabilities: z.array(
    z.object({
      id: CapabilityId,
      source: LatencySource,
      window: LatencySummary,
      points: z.array(LatencyPoint),
    }),
  ),
});
export type LatencySeriesDocument = z.infer<typeof LatencySeriesDocument>;
