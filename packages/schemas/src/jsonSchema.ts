import { z } from 'zod';
import { RegistryDocument } from './registryDocument.js';

/** A JSON Schema document as a plain JSON object. */
export type JsonSchema = Record<string, unknown>;

/** Options of {@link toJsonSchema}. */
export interface ToJsonSchemaOptions {
  /**
   * `output` (default): the shape a value has after parsing (fields with defaults are required;
   * plain objects closed). `input`: what a caller may send (fields with defaults optional) — use it
   * for `input_schema`.
   */
  io?: 'input' | 'output';
}

/**
 * JSON Schema 2020-12 of any wire schema of this package, e.g. for a /registry entry's
 * `input_schema` (`io: 'input'`) or `output_schema`. Refinements (checksums, ordering) are not
 * representable and are left out; transforms must not be used in wire schemas (throws).
 */
export function toJsonSchema(schema: z.ZodType, options: ToJsonSchemaOptions = {}): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: options.io ?? 'output' }) as JsonSchema;
}

/**
 * JSON Schema 2020-12 of the registry document (docs/spec-notes.md 2.1/2.2), generated from {@link RegistryDocument}
 * with `z.toJSONSchema`. Closed objects at every level; the LIVE and STALE evidence rules appear as a
 * `oneOf` on `status`. Validate with Ajv2020 (strict) + ajv-formats.
 */
export function registryDocumentJsonSchema(): JsonSchema {
  return toJsonSchema(RegistryDocument);
}
