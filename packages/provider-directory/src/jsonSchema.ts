import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { RE2JS } from 're2js';
import { ProviderError } from './errors.js';

// ajv-formats is CommonJS: its default export is the plugin function (under `.default` when transpiled)
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => Ajv2020;

/** One issue of a JSON Schema validation: the JSON path inside the checked value and Ajv's message. */
export interface SchemaIssue {
  path: (string | number)[];
  message: string;
  code: string;
}

/** Largest provider JSON Schema accepted, bytes of its JSON text (413 `schema_too_large`). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Deepest nesting of objects and arrays in a provider JSON Schema (422 `schema_too_deep`). */
export const MAX_SCHEMA_DEPTH = 32;
/** Compiled validators kept (least recently used evicted, and released from Ajv's own cache). */
export const MAX_COMPILED_VALIDATORS = 1_000;

/**
 * Ajv's engine for every user-supplied regular expression (`pattern`, `patternProperties`,
 * `propertyNames.pattern`): RE2 semantics through re2js, matching in time linear in the input, so
 * no pattern (e.g. `^(a|a)*$`) can stall the event loop (issue 23 item 4). RE2 has no lookaround or
 * backreferences: such a pattern fails to compile and the schema is refused (400 `invalid_schema`).
 * Ajv's `u` flag is RE2's default (Unicode) and is not passed on.
 */
const re2Engine = Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 'RE2JS.compile' });

const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false, validateSchema: true, code: { regExp: re2Engine } }));
/** schema text → its validator and the object Ajv compiled (to release it on eviction); a Map in LRU order */
const compiled = new Map<string, { validate: ValidateFunction; schema: object }>();

/** Depth of nested objects and arrays (a scalar is 0), iteratively: a deep schema cannot overflow the stack. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) max = d + 1;
    if (max > MAX_SCHEMA_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

function pathOf(e: ErrorObject): (string | number)[] {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  if (missing) parts.push(missing);
  return parts.map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** Ajv's errors as {@link SchemaIssue}s (at most 20). */
export function schemaIssues(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).slice(0, 20).map((e) => ({ path: pathOf(e), message: e.message ?? 'is invalid', code: e.keyword }));
}

/**
 * Compiles a provider's JSON Schema (2020-12 by default; Ajv with ajv-formats; user patterns with
 * RE2, see `re2Engine`), cached by its text in an LRU of {@link MAX_COMPILED_VALIDATORS}. Throws
 * {@link ProviderError} naming `field`: `schema_too_large` 413 (JSON text over
 * {@link MAX_SCHEMA_BYTES}), `schema_too_deep` 422 (nesting over {@link MAX_SCHEMA_DEPTH}),
 * `invalid_schema` 400 when the schema is not a valid JSON Schema or does not compile (e.g. an
 * unresolvable `$ref`, or a pattern RE2 does not support); remote `$ref`s are never fetched.
 */
export function compileJsonSchema(schema: Record<string, unknown>, field: string): ValidateFunction {
  const text = JSON.stringify(schema);
  const hit = compiled.get(text);
  if (hit) {
    compiled.delete(text);
    compiled.set(text, hit);
    return hit.validate;
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SCHEMA_BYTES) {
    throw new ProviderError('schema_too_large', 413, `${field} is ${bytes} bytes of JSON; at most ${MAX_SCHEMA_BYTES} are accepted (limit schema_too_large).`, {
      limit: 'schema_too_large',
      max_bytes: MAX_SCHEMA_BYTES,
    });
  }
  if (depthOf(schema) > MAX_SCHEMA_DEPTH) {
    throw new ProviderError('schema_too_deep', 422, `${field} nests objects and arrays more than ${MAX_SCHEMA_DEPTH} deep (limit schema_too_deep).`, {
      limit: 'schema_too_deep',
      max_depth: MAX_SCHEMA_DEPTH,
    });
  }
  if (!ajv.validateSchema(schema)) {
    throw new ProviderError('invalid_schema', 400, `${field} is not a valid JSON Schema.`, { errors: schemaIssues(ajv.errors).map((i) => ({ ...i, field })) });
  }
  let validate: ValidateFunction;
  // a schema's own `$id` would clash on the second compile of an equal-but-reordered schema: compile a copy without it
  const { $id: _id, ...rest } = schema;
  try {
    validate = ajv.compile(rest);
  } catch (e) {
    ajv.removeSchema(rest);
    throw new ProviderError('invalid_schema', 400, `${field} does not compile: ${String((e as Error).message).slice(0, 200)}`);
  }
  compiled.set(text, { validate, schema: rest });
  while (compiled.size > MAX_COMPILED_VALIDATORS) {
    const [oldest, entry] = compiled.entries().next().value as [string, { schema: object }];
    compiled.delete(oldest);
    ajv.removeSchema(entry.schema); // Ajv keeps every compiled schema otherwise
  }
  return validate;
}
