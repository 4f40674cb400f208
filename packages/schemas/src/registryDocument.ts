import { z } from 'zod';
import { Capability, compareCapabilities } from './capability.js';
import { DateTime, SemVer, Uri } from './primitives.js';

/** Registry rollup status: `ok | degraded | outage` (docs/spec-notes.md 2.1 `network.operational_status`, 3). */
export const OperationalStatus = z.enum(['ok', 'degraded', 'outage']);
export type OperationalStatus = z.infer<typeof OperationalStatus>;

/**
 * Network metadata of the registry (docs/spec-notes.md 2.1 network table, no extra properties):
 * `organization` (non-empty), `domains` with exactly `discover`, `execute`, `intelligence` URIs,
 * `operational_status` (rollup) and `operational_status_source` (non-empty: how the rollup was decided).
 */
export const RegistryNetwork = z.strictObject({
  organization: z.string().min(1),
  domains: z.strictObject({
    discover: Uri,
    execute: Uri,
    intelligence: Uri,
  }),
  operational_status: OperationalStatus,
  operational_status_source: z.string().min(1),
});
export type RegistryNetwork = z.infer<typeof RegistryNetwork>;

/** One metric definition: `description` (non-empty) and optional `unit`, e.g. `ms` (docs/spec-notes.md 2.1 `metric_definitions`). */
export const MetricDefinition = z.strictObject({
  description: z.string().min(1),
  unit: z.string().optional(),
});
export type MetricDefinition = z.infer<typeof MetricDefinition>;

/**
 * The registry document served at `/gateway-catalog.json` (docs/spec-notes.md 2.1; JSON Schema 2020-12 via
 * `registryDocumentJsonSchema()`), no extra properties at any level:
 * `registry_version` (SemVer of the file), `generated_at` (RFC 3339 UTC), `network`,
 * `capabilities` (>= 1 item, ordered by product then id), optional `metric_definitions`.
 * zod parsing also rejects duplicate ids and out-of-order capabilities (not expressible in JSON Schema).
 */
export const RegistryDocument = z
  .strictObject({
    registry_version: SemVer,
    generated_at: DateTime,
    network: RegistryNetwork,
    capabilities: z.array(Capability).min(1),
    metric_definitions: z.record(z.string().min(1), MetricDefinition).optional(),
  })
  .superRefine((doc, ctx) => {
    const seen = new Set<string>();
    doc.capabilities.forEach((capability, index) => {
      if (seen.has(capability.id)) {
        ctx.addIssue({ code: 'custom', message: `duplicate capability id ${capability.id}`, path: ['capabilities', index, 'id'] });
      }
      seen.add(capability.id);
      const previous = doc.capabilities[index - 1];
      if (previous && compareCapabilities(previous, capability) > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `capabilities must be ordered by product, then id: ${previous.id} precedes ${capability.id}`,
          path: ['capabilities', index],
        });
      }
    });
  });
export type RegistryDocument = z.infer<typeof RegistryDocument>;
