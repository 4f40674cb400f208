import type { Capability, CapabilityStatus, Evidence, HealthStatus, OperationalStatus, ProbeRecord } from '@acg/schemas';
import type { CapabilityDescriptor } from './descriptor.js';

/** A capability's derived status and the evidence behind it (docs/spec-notes.md 2.2 rules 1 and 2). */
export interface DerivedStatus {
  status: CapabilityStatus;
  evidence: Evidence;
}

/**
 * Status rule (docs/spec-notes.md 3 "LIVE only when evidence of a successful probe exists", docs/decisions.md "Registry, catalog and health"):
 * - not `built` → `PLANNED` (probes are ignored);
 * - built, probe record with `ok` → `LIVE`, evidence `{source: "prober", checked_at, probe}`;
 * - built, failed probe → `STALE` (the catalog at `advertisedBy` still claims it), evidence
 *   `{source: "prober", advertised_by, probe, next_action}`;
 * - built, no probe record → `PILOT` (implemented, not yet proven), evidence `{source: "catalog", next_action}`.
 */
export function deriveStatus(descriptor: Pick<CapabilityDescriptor, 'built'>, probe: ProbeRecord | undefined, advertisedBy: string): DerivedStatus {
  if (!descriptor.built) {
    return { status: 'PLANNED', evidence: { source: 'catalog', next_action: 'not implemented yet' } };
  }
  if (!probe) {
    return { status: 'PILOT', evidence: { source: 'catalog', next_action: 'implemented; awaiting a successful probe' } };
  }
  if (probe.ok) {
    return { status: 'LIVE', evidence: { source: 'prober', checked_at: probe.checked_at, probe: probe.probe } };
  }
  return {
    status: 'STALE',
    evidence: {
      source: 'prober',
      advertised_by: advertisedBy,
      probe: probe.probe,
      next_action: `last probe at ${probe.checked_at} got HTTP ${probe.probe.status}; fix and re-probe`,
    },
  };
}

/** Operational status of the network and a sentence saying how it was decided (docs/spec-notes.md 2.1 network). */
export interface OperationalRollup {
  operational_status: OperationalStatus;
  operational_status_source: string;
}

/**
 * Rollup of health statuses into `ok | degraded | outage` (docs/spec-notes.md 2.1, docs/decisions.md "Registry, catalog and health"):
 * `planned` entries are excluded; all `up` → ok, all `down` → outage, otherwise degraded. A STALE
 * capability (failed probe) caps the result at degraded. With no measured capability at all the
 * result is `degraded`: nothing is claimed healthy before it is measured.
 */
export function rollupOperationalStatus(
  health: Record<string, { status: HealthStatus }> | undefined,
  capabilities: readonly Pick<Capability, 'status'>[],
): OperationalRollup {
  const counts = { up: 0, degraded: 0, down: 0 };
  for (const sample of Object.values(health ?? {})) {
    if (sample.status !== 'planned') counts[sample.status] += 1;
  }
  const measured = counts.up + counts.degraded + counts.down;
  const stale = capabilities.filter((c) => c.status === 'STALE').length;
  const staleNote = stale > 0 ? `; ${stale} capability(ies) STALE after a failed probe` : '';
  if (measured === 0) {
    return {
      operational_status: 'degraded',
      operational_status_source: `no health samples recorded yet, so nothing is reported ok${staleNote}`,
    };
  }
  let status: OperationalStatus = counts.up === measured ? 'ok' : counts.down === measured ? 'outage' : 'degraded';
  if (status === 'ok' && stale > 0) status = 'degraded';
  return {
    operational_status: status,
    operational_status_source:
      `rollup of /status/health per-capability statuses (${counts.up} up, ${counts.degraded} degraded, ` +
      `${counts.down} down; planned excluded): all up = ok, all down = outage, otherwise degraded${staleNote}`,
  };
}
